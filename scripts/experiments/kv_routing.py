#!/usr/bin/python3
"""KV and routing experiments (docs/kv-and-routing.md explains what they show):

  1. routing rules side by side (same arrivals) on synthetic prefix groups with multi-turn
     sessions and on the Mooncake conversation trace: prefix hit rate and TTFT p50/p99 vs load;
  2. the warm-busy versus cold-idle sweep over the hit fraction h and the load: where waiting for
     the warm GPU stops paying (the crossover), for predicted-ttft, cache-only and least-loaded;
  3. the large model's prefix hit rate with and without cache-aware LM batch formation
     (scheduler.lm_cache_aware_batching);
  4. preemption mode mix and its predicted cost under a lease-heavy workload at 32k contexts
     (preemption: cost, swap, recompute), and the gang's barrier wait against the prefill chunk
     size (drain versus checkpoint);
  5. the infinite-cache reference hit rate of the Mooncake window and the gap to the node.

Load 1.0 is the highest arrival rate at which late binding (one shared queue, the best
cache-blind rule) keeps the queueing delay p99 under 1 s, found by a short bisection per
workload (printed and recorded), so "80 % load" means 0.8 of that rate.

    build the release binary, then:
    GANGWAY=build-kv-rel/src/cli/gangway /usr/bin/python3 scripts/experiments/kv_routing.py [--quick] [--out DIR]

Writes docs/results/kv-routing.md, docs/results/kv-routing.json and docs/results/kv-routing-*.png.
Reports only what the runs measured.

Longer than most scripts because it is one experiment: the five parts share the scenarios, the
capacity bisection and one report page, whose text sits beside the runs it describes.
"""

import argparse
import copy
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import gangway_experiments as gx  # noqa: E402

ROUTINGS = ["predicted-ttft", "late-binding", "round-robin", "least-loaded", "cache-only",
            "sglang"]
SMALL = "llama-3-8b"
LARGE = "llama-3-70b"
MOONCAKE = "data/traces/mooncake_conversation_trace.jsonl"
QUEUE_P99_LIMIT_MS = 1000.0

# --------------------------------------------------------------------------------------------
# Scenarios


def prefix_groups_scenario(rate, window):
    """The product's node (Llama-3-8B on every GPU beside the 70B's shard, static split 0.5, so
    ~21 GB of KV per GPU for the 8B: ~162k tokens) serving chat: 256 system prompts of 2,048
    tokens, Zipf(1.0) popularity, sessions of 2 turns on average 10 s apart. The prompts' working
    set (~0.5 M tokens of system prompts plus the sessions' histories) fits the node's eight
    caches but not one."""
    warmup, duration, drain = window
    return {
        "name": "prefix-groups", "seed": 42,
        "warmup_s": warmup, "duration_s": duration, "drain_s": drain,
        "models": [{"name": SMALL, "tier": "small"}, {"name": LARGE, "tier": "large"}],
        "policy": {"name": "gangway", "mode": "lease"},
        "workload": {"streams": [{
            "name": "chat", "model": SMALL, "class": "standard",
            "arrival": {"rate_per_s": float(rate)},
            "prompt_tokens": {"dist": "lognormal", "mean": 300, "p99": 2000, "max": 8000},
            "output_tokens": {"dist": "geometric", "mean": 64, "max": 512},
            "max_tokens": 512,
            "prefix": {"groups": 256, "group_tokens": 2048, "zipf_s": 1.0},
            "sessions": {"new_session_probability": 0.5, "think_time_s": 10},
        }]},
    }


def mooncake_scenario(rate_scale, window, host_prefix_cache=False, hbm_gb=None, gpus=8):
    """Llama-3-8B replicas (128k context) on `gpus` GPUs, nothing else on them, replaying the
    first `trace_s` seconds of the Mooncake conversation trace compressed `rate_scale` times."""
    warmup, duration, drain, trace_s = window
    node = {"gpus": gpus}
    if hbm_gb is not None:
        node["hardware"] = {"preset": "h100-sxm-80gb", "hbm_gb": hbm_gb}
    return {
        "name": "mooncake", "seed": 42,
        "warmup_s": warmup, "duration_s": duration, "drain_s": drain,
        "node": node,
        "scheduler": {"host_prefix_cache": host_prefix_cache},
        "models": [{"name": SMALL, "tier": "small", "max_context_tokens": 131072}],
        "policy": "fcfs",
        "workload": {"trace": {"path": MOONCAKE, "format": "mooncake",
                               "rate_scale": float(rate_scale), "end_s": float(trace_s)}},
    }


def h_sweep_scenario(h, rate, window, prompt=2048):
    """Every request is one of 64 system prompts (a fraction h of its 2,048 tokens, Zipf 1.2: the
    hottest prompt carries a quarter of the traffic, twice what one GPU of eight can serve) and
    its own (1 - h) x 2,048 tokens. A GPU that holds the group prompt saves h of the prefill."""
    warmup, duration, drain = window
    group = max(16, int(round(h * prompt / 16)) * 16)
    return {
        "name": f"h-sweep-{h}", "seed": 7,
        "warmup_s": warmup, "duration_s": duration, "drain_s": drain,
        "models": [{"name": SMALL, "tier": "small"}, {"name": LARGE, "tier": "large"}],
        "policy": {"name": "gangway", "mode": "lease"},
        "workload": {"streams": [{
            "name": "sys", "model": SMALL, "class": "standard",
            "arrival": {"rate_per_s": float(rate)},
            "prompt_tokens": max(1, prompt - group),
            "output_tokens": {"dist": "geometric", "mean": 32, "max": 256},
            "max_tokens": 256,
            "prefix": {"groups": 64, "group_tokens": group, "zipf_s": 1.2},
        }]},
    }


def lm_batching_scenario(rate, cache_aware, window):
    """The large model alone on the gang: 64 system prompts of 4,096 tokens (uniform), 256 tokens
    of its own, an LM pool of ~200k tokens (large_kv_fraction 0.2: about 50 of the prompts, so
    they are evicted and computed again all the time), bursty arrivals (gamma, cv 4) so that requests sharing a prompt arrive together;
    a 4,096-token budget with 512-token chunks lets one iteration admit several of them, so a
    batch could compute the same prefix twice."""
    warmup, duration, drain = window
    return {
        "name": "lm-batching", "seed": 3,
        "warmup_s": warmup, "duration_s": duration, "drain_s": drain,
        "scheduler": {"lm_cache_aware_batching": cache_aware, "large_kv_fraction": 0.2},
        "models": [{"name": SMALL, "tier": "small"},
                   {"name": LARGE, "tier": "large", "max_batched_tokens": 4096,
                    "prefill_chunk_tokens": 512}],
        "policy": {"name": "gangway", "mode": "lease"},
        "workload": {"streams": [{
            "name": "lm", "model": LARGE, "class": "standard",
            "arrival": {"process": "gamma", "rate_per_s": float(rate), "cv": 4},
            "prompt_tokens": {"dist": "lognormal", "mean": 256, "p99": 1024, "max": 4096},
            "output_tokens": {"dist": "geometric", "mean": 64, "max": 256},
            "max_tokens": 256,
            "prefix": {"groups": 64, "group_tokens": 4096, "zipf_s": 0.0},
        }]},
    }


def lease_heavy_scenario(preemption, window, kv_split="dynamic", chunk=1024, mode="lease",
                         budget=2048, sm_rate=4.0, lm_rate=0.4):
    """32k contexts on both tiers with frequent leases: a lease-heavy workload (the
    shapes of tests/sim/kv_simulation_test.cc at about 80 % of the node: 8B prefills of ~22k
    tokens take ~0.7 s of one GPU, 70B ones ~1 s of the gang)."""
    warmup, duration, drain = window
    scheduler = {"preemption": preemption, "kv_split": kv_split, "large_kv_fraction": 0.3}
    if kv_split == "dynamic":
        scheduler.update({"large_kv_fraction_min": 0.2, "large_kv_fraction_max": 0.8,
                          "kv_rebalance_interval_ms": 0})
    return {
        "name": "lease-heavy-32k", "seed": 4,
        "warmup_s": warmup, "duration_s": duration, "drain_s": drain,
        "scheduler": scheduler,
        "models": [
            {"name": SMALL, "tier": "small", "max_batched_tokens": max(budget, chunk),
             "prefill_chunk_tokens": chunk},
            {"name": LARGE, "tier": "large", "max_batched_tokens": 4096,
             "prefill_chunk_tokens": 2048}],
        "policy": {"name": "gangway", "mode": mode, "large_weight": 3},
        "workload": {"streams": [
            {"name": "sm-long", "model": SMALL, "class": "batch", "arrival": {"rate_per_s": sm_rate},
             "prompt_tokens": {"dist": "lognormal", "mean": 22000, "p99": 31000, "max": 31000},
             "output_tokens": {"dist": "geometric", "mean": 500, "max": 1500},
             "max_tokens": 1500},
            {"name": "lm-long", "model": LARGE, "class": "batch", "arrival": {"rate_per_s": lm_rate},
             "prompt_tokens": {"dist": "lognormal", "mean": 22000, "p99": 31000, "max": 31000},
             "output_tokens": {"dist": "geometric", "mean": 500, "max": 1500},
             "max_tokens": 1500}]},
    }


# --------------------------------------------------------------------------------------------
# Running and reading


# These experiments measure routing, caches and preemption on everything offered: admission
# control (docs/overload.md, on by default since it was added) would turn away the requests
# predicted to miss their TTFT, so queues would stay short at any rate, the capacity bisection
# would find no knee and the TTFT percentiles would cover only the admitted requests. Off here,
# with arrival order and no queue cap in the way, as in the gang guarantee tests.
NO_ADMISSION = {"enabled": False, "queue_order": "arrival", "queue_cap": 1_000_000_000}


def run(scenario, routings=(), policies=(), extra_args=()):
    scenario = copy.deepcopy(scenario)
    scenario["admission"] = dict(NO_ADMISSION)
    extra = list(extra_args)
    for routing in routings:
        extra += ["--routing", routing]
    return gx.simulate(scenario, list(policies), extra_args=extra)


def model_stats(run_doc, model):
    return run_doc["models"].get(model, {})


def pct(stats, group, key):
    return stats.get(group, {}).get(key) if stats and stats.get("arrived") else None


def routing_row(run_doc, model=SMALL):
    stats = model_stats(run_doc, model)
    cache = run_doc["kv"]["prefix_cache"]["models"].get(model, {})
    return {
        "routing": run_doc["routing"],
        "arrived": stats.get("arrived"),
        "completed": stats.get("completed"),
        "token_hit_rate": cache.get("token_hit_rate"),
        "request_hit_rate": cache.get("request_hit_rate"),
        "host_cached_tokens": cache.get("host_cached_tokens"),
        "ttft_mean": pct(stats, "ttft_ms", "mean"),
        "ttft_p50": pct(stats, "ttft_ms", "p50"),
        "ttft_p99": pct(stats, "ttft_ms", "p99"),
        "queue_p99": pct(stats, "queue_ms", "p99"),
        "steals": run_doc["kv"]["steals"],
        "wall_s": run_doc["sim"]["wall_s"],
    }


def capacity(make, low, high, label):
    """Bisection on the rate (or rate scale) for the highest value late binding keeps stable."""
    steps = []
    while high / low > 1.04:
        middle = (low * high) ** 0.5
        document = run(make(middle), routings=["late-binding"])
        p99 = document["runs"][0]["total"]["queue_ms"]["p99"]
        ok = p99 is not None and p99 < QUEUE_P99_LIMIT_MS
        steps.append({"value": middle, "queue_p99_ms": p99, "stable": ok})
        print(f"capacity {label}: {middle:.3f} queue p99 {p99} ms stable={ok}", file=sys.stderr,
              flush=True)
        if ok:
            low = middle
        else:
            high = middle
    return low, steps


# --------------------------------------------------------------------------------------------
# The infinite-cache reference


def infinite_cache_reference(trace_s, warmup_s, rate_scale, block=16, trace_block=512,
                             max_context=131072):
    """Token and request hit rates of one unbounded prefix cache shared by every GPU, for the
    requests the simulator counts (arrived after the warm-up, in replay time): a prompt reuses
    the longest run of 16-token blocks whose chained content was in any earlier prompt, never
    its last token (which must be computed), exactly as the trace reader hashes it (512-token
    trace blocks, a partial last block, the rest of the prompt unique)."""
    seen = set()
    prompt_tokens = cached_tokens = requests = hits = 0
    first = None
    sub = trace_block // block
    with open(os.path.join(gx.ROOT, MOONCAKE)) as f:
        for line in f:
            row = json.loads(line)
            t = row["timestamp"] / 1000.0
            first = t if first is None else first
            t -= first
            if t >= trace_s:
                break
            n = max(int(row["input_length"]), 1)
            ids = row["hash_ids"]
            covered = min(n, trace_block * len(ids))
            full = covered // block
            reusable = min(full, (n - 1) // block)
            keys = []
            chain = b""
            for j in range(full):
                if j % sub == 0:
                    chain = hashlib.blake2b(chain + str(ids[j // sub]).encode(),
                                            digest_size=12).digest()
                keys.append((chain, j % sub))
            matched = 0
            while matched < reusable and keys[matched] in seen:
                matched += 1
            counted = t / rate_scale >= warmup_s and n + 1 <= max_context
            if counted:
                prompt_tokens += n
                cached_tokens += matched * block
                requests += 1
                hits += matched > 0
            seen.update(keys)
    return {"token_hit_rate": cached_tokens / prompt_tokens, "request_hit_rate": hits / requests,
            "requests": requests, "prompt_tokens": prompt_tokens}


# --------------------------------------------------------------------------------------------
# Experiments


def routing_vs_load(name, make, loads, capacity_value):
    rows = []
    for load in loads:
        document = run(make(load * capacity_value), routings=ROUTINGS)
        for run_doc in document["runs"]:
            row = {"workload": name, "load": load, "rate": load * capacity_value}
            row.update(routing_row(run_doc))
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def h_sweep(hs, loads, window, base_capacity):
    rows = []
    for h in hs:
        for load in loads:
            document = run(h_sweep_scenario(h, load * base_capacity, window),
                           routings=["predicted-ttft", "cache-only", "least-loaded"])
            for run_doc in document["runs"]:
                row = {"h": h, "load": load, "rate": load * base_capacity}
                row.update(routing_row(run_doc))
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def lm_batching(rates, window):
    rows = []
    for rate in rates:
        for aware in (True, False):
            document = run(lm_batching_scenario(rate, aware, window))
            run_doc = document["runs"][0]
            stats = model_stats(run_doc, LARGE)
            cache = run_doc["kv"]["prefix_cache"]["models"][LARGE]
            row = {"rate": rate, "cache_aware": aware,
                   "token_hit_rate": cache["token_hit_rate"],
                   "request_hit_rate": cache["request_hit_rate"],
                   "ttft_p50": pct(stats, "ttft_ms", "p50"),
                   "ttft_p99": pct(stats, "ttft_ms", "p99"),
                   "completed": stats.get("completed"), "arrived": stats.get("arrived")}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def preemption_row(run_doc, label):
    kv = run_doc["kv"]
    modes = {}
    for mode in ("pause", "swap", "recompute"):
        count = kv_tokens = delay = gpu_s = 0
        for model in kv["preemption"]["models"].values():
            count += model[mode]["count"]
            kv_tokens += model[mode]["kv_tokens"]
            delay += model[mode]["victim_delay_s"]
            gpu_s += model[mode]["node_gpu_s"]
        modes[mode] = {"count": count, "kv_tokens": kv_tokens, "victim_delay_s": delay,
                       "node_gpu_s": gpu_s}
    small = model_stats(run_doc, SMALL)
    large = model_stats(run_doc, LARGE)
    node = run_doc["node"]
    return {
        "label": label, "modes": modes, "reasons": kv["preemption"]["reasons"],
        "split": kv["split"], "host_peak_gib": kv["host"]["peak_bytes"] / 2 ** 30,
        "sm_completed": small.get("completed"), "sm_arrived": small.get("arrived"),
        "lm_completed": large.get("completed"), "lm_arrived": large.get("arrived"),
        "sm_ttft_p50": pct(small, "ttft_ms", "p50"), "sm_ttft_p99": pct(small, "ttft_ms", "p99"),
        "sm_e2e_p99": pct(small, "e2e_ms", "p99"),
        "lm_ttft_p99": pct(large, "ttft_ms", "p99"), "lm_queue_p99": pct(large, "queue_ms", "p99"),
        "gang_phases": run_doc["sim"]["gang_phases"],
        "barrier_fraction": node["gang_barrier_fraction"],
        "barrier_gpu_s": node["gang_barrier_fraction"] * node["gpu_seconds"],
        "utilization": node["gpu_utilization"],
    }


def preemption_mix(window):
    rows = []
    for split in ("dynamic", "static"):
        for preemption in ("cost", "swap", "recompute"):
            document = run(lease_heavy_scenario(preemption, window, kv_split=split,
                                                sm_rate=8.0, lm_rate=1.0))
            row = preemption_row(document["runs"][0], f"{split}/{preemption}")
            row.update({"kv_split": split, "preemption": preemption})
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def chunk_sweep(chunks, window):
    rows = []
    timeline = os.path.join(gx.ROOT, "build-kv-rel", "kv-routing-timeline.json")
    os.makedirs(os.path.dirname(timeline), exist_ok=True)
    for chunk in chunks:
        document = run(lease_heavy_scenario("cost", window, kv_split="static", chunk=chunk,
                                            budget=2 * chunk),
                       extra_args=["--timeline", timeline])
        row = preemption_row(document["runs"][0], f"chunk {chunk}")
        row["chunk"] = chunk
        phases = max(1, row["gang_phases"])
        row["barrier_ms_per_phase_per_gpu"] = 1000 * row["barrier_gpu_s"] / phases / 8
        # The drain: from the lease becoming pending to the gang starting (all GPUs at a
        # boundary), from the timeline's gang instants.
        with open(timeline) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        waits, pending = [], None
        for event in sorted((e for e in events if e.get("ph") == "i"), key=lambda e: e["ts"]):
            if event["name"] == "gang pending":
                pending = event["ts"]
            elif event["name"] == "gang start" and pending is not None:
                waits.append((event["ts"] - pending) / 1000.0)
                pending = None
        waits.sort()
        row["drain_ms_p50"] = waits[len(waits) // 2] if waits else None
        row["drain_ms_mean"] = sum(waits) / len(waits) if waits else None
        row["drain_ms_p99"] = waits[min(len(waits) - 1, int(0.99 * len(waits)))] if waits else None
        row["drain_ms_max"] = waits[-1] if waits else None
        row["drains"] = len(waits)
        os.unlink(timeline)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


# --------------------------------------------------------------------------------------------
# Report


def fmt(value, digits=1, percent=False):
    if value is None:
        return "-"
    return f"{100 * value:.{digits}f}%" if percent else f"{value:.{digits}f}"


def routing_tables(rows, loads, title):
    lines = [f"### {title}", ""]
    for metric, label, percent in [("ttft_p99", "TTFT p99 (ms)", False),
                                   ("ttft_mean", "TTFT mean (ms)", False),
                                   ("ttft_p50", "TTFT p50 (ms)", False),
                                   ("token_hit_rate", "prefix hit rate (tokens)", True),
                                   ("request_hit_rate", "requests with a hit", True)]:
        table = []
        for load in loads:
            cells = [f"{load:.2f}"]
            values = {r["routing"]: r[metric] for r in rows if r["load"] == load}
            best = None
            if metric.startswith("ttft_"):
                best = min((v for v in values.values() if v is not None), default=None)
            for routing in ROUTINGS:
                text = fmt(values.get(routing), 1, percent)
                cells.append(f"**{text}**" if best is not None and values.get(routing) == best
                             else text)
            table.append(cells)
        lines += [f"{label}, best in bold:" if "TTFT" in label else f"{label}:", "",
                  gx.markdown_table(["load"] + ROUTINGS, table), ""]
    return lines


def verdict(rows, load, workload):
    at = {r["routing"]: r["ttft_p99"] for r in rows if abs(r["load"] - load) < 1e-9}
    ours = at.get("predicted-ttft")
    others = {k: v for k, v in at.items() if k != "predicted-ttft" and v is not None}
    beaten = [k for k, v in others.items() if ours is not None and ours < v]
    lost = [k for k, v in others.items() if ours is None or ours >= v]
    return {"workload": workload, "load": load, "predicted_ttft_p99": ours,
            "baselines_p99": others, "met": not lost, "not_beaten": lost, "beaten": beaten}


def write_report(results, out_dir):
    L = ["# KV caches, routing and preemption: measured", "",
         "Generated by `scripts/experiments/kv_routing.py`"
         f"{' --quick' if results['quick'] else ''}; do not edit by hand. "
         "docs/kv-and-routing.md explains the mechanisms and reads these numbers. "
         f"Binary: `{os.path.relpath(gx.binary(), gx.ROOT)}` ("
         f"{results['version']}); the whole script ran in {results['wall_s']:.0f} s.", ""]

    L += ["## Capacities (load 1.0)", "",
          "Load 1.0 is the highest rate at which late binding keeps the queueing delay p99 under "
          "1 s (bisection to 4 %).", ""]
    table = [[k, fmt(v["value"], 3), v["unit"]] for k, v in results["capacity"].items()]
    L += [gx.markdown_table(["workload", "load 1.0", "unit"], table), ""]

    L += ["## Routing rules against load", "",
          "Same arrivals for every rule at each point. TTFT of the 8B model's requests in the "
          "measurement window.", ""]
    L += routing_tables(results["prefix_groups"], results["loads"],
                        "Synthetic prefix groups and sessions (8 GPUs, 8B beside the 70B's shard)")
    L += routing_tables(results["mooncake"], results["loads"],
                        "Mooncake conversation trace (8B, 128k context, 8 GPUs)")

    L += ["### Target: predicted-ttft beats every baseline on TTFT p99 at 80 % load", ""]
    table = []
    for v in results["verdicts"]:
        table.append([v["workload"], fmt(v["predicted_ttft_p99"]),
                      ", ".join(f"{k} {fmt(x)}" for k, x in v["baselines_p99"].items()),
                      "met" if v["met"] else "missed (not beaten: " + ", ".join(v["not_beaten"])
                      + ")"])
    L += [gx.markdown_table(["workload", "predicted-ttft p99 (ms)", "baselines p99 (ms)",
                             "target"], table), ""]

    ref = results["infinite_cache"]
    L += ["## Mooncake: the node against an infinite cache", "",
          f"Window: the first {results['mooncake_window'][3]:.0f} s of the trace at rate scale "
          f"{results['mooncake_reference_scale']:.3f} (load 0.8); requests counted after the "
          "warm-up. The trace-level reference is one unbounded cache shared by all GPUs, fed in "
          "arrival order (computed by this script from the file, at the simulator's 16-token "
          "blocks); the simulated reference runs the node with 2,000 GB of HBM per GPU.", ""]
    table = [["infinite cache (trace-level reference)", fmt(ref["token_hit_rate"], 1, True),
              fmt(ref["request_hit_rate"], 1, True), "-"]]
    for row in results["mooncake_cache_runs"]:
        table.append([row["label"], fmt(row["token_hit_rate"], 1, True),
                      fmt(row["request_hit_rate"], 1, True),
                      fmt(100 * (ref["token_hit_rate"] - row["token_hit_rate"]), 1) + " pts"])
    L += [gx.markdown_table(["configuration", "token hit rate", "requests with a hit",
                             "gap to the reference"], table), ""]

    L += ["## Warm busy GPU or cold idle GPU: sweep of h and load", "",
          "64 system prompts (Zipf 1.2) of h x 2,048 tokens plus (1 - h) x 2,048 tokens of the "
          "request's own. Load is relative to the cache-less capacity "
          f"({results['capacity']['h-sweep (no cache)']['value']:.1f} req/s: late binding, "
          "prefix caching off), so above 1.0 only reuse keeps the node stable. "
          "predicted-ttft waits for a warm GPU only while the wait is below the prefill it "
          "saves (~h x P); cache-only always waits; least-loaded never does.", ""]
    hs = sorted({r["h"] for r in results["h_sweep"]})
    hloads = sorted({r["load"] for r in results["h_sweep"]})
    for metric, label, percent in [("ttft_p99", "TTFT p99 (ms)", False),
                                   ("ttft_mean", "TTFT mean (ms)", False),
                                   ("token_hit_rate", "prefix hit rate (tokens)", True)]:
        table = []
        for h in hs:
            for load in hloads:
                cells = [f"{h:.2f}", f"{load:.2f}"]
                vals = {r["routing"]: r[metric] for r in results["h_sweep"]
                        if r["h"] == h and r["load"] == load}
                best = (min((v for v in vals.values() if v is not None), default=None)
                        if not percent else None)
                for routing in ["predicted-ttft", "cache-only", "least-loaded"]:
                    text = fmt(vals.get(routing), 1, percent)
                    cells.append(f"**{text}**" if best is not None and vals.get(routing) == best
                                 else text)
                table.append(cells)
        L += [f"{label}" + (", best in bold:" if not percent else ":"), "",
              gx.markdown_table(["h", "load", "predicted-ttft", "cache-only", "least-loaded"],
                                table), ""]

    L += ["## Large model: cache-aware batch formation", "",
          "The 70B alone on the gang, 64 system prompts of 4,096 tokens (uniform popularity), "
          "an LM pool of ~200k tokens (large_kv_fraction 0.2) so prompts are evicted and "
          "computed again, bursty arrivals (gamma, cv 4), 512-token chunks in a 4,096-token "
          "budget. `lm_cache_aware_batching` defers a queued request whose next uncached "
          "block a resident sequence is computing, so that it hits it one iteration later.", ""]
    table = []
    for row in results["lm_batching"]:
        table.append([fmt(row["rate"], 1), "on" if row["cache_aware"] else "off",
                      fmt(row["token_hit_rate"], 1, True), fmt(row["request_hit_rate"], 1, True),
                      fmt(row["ttft_p50"]), fmt(row["ttft_p99"]),
                      f"{row['completed']}/{row['arrived']}"])
    L += [gx.markdown_table(["rate (req/s)", "cache-aware", "LM token hit rate",
                             "requests with a hit", "LM TTFT p50 (ms)", "LM TTFT p99 (ms)",
                             "completed/arrived"], table), ""]

    L += ["## Preemption by cost under lease-heavy load at 32k contexts", "",
          "8B at 8 req/s and 70B at 1 req/s (beyond what the node sustains, so KV memory "
          "runs out mid-decode), prompts lognormal mean 22k (p99 31k), outputs "
          "mean 500; gangway lease mode with large_weight 3; 8B chunks of 1,024 tokens. "
          "`preemption: swap` and `recompute` force that mode where possible (pause when the "
          "memory is not needed, as in every mode). Costs are the scheduler's predictions at "
          "the time of each choice, summed.", ""]
    table = []
    for row in results["preemption"]:
        m = row["modes"]
        table.append([row["label"],
                      f"{m['pause']['count']} / {m['swap']['count']} / {m['recompute']['count']}",
                      fmt(m["swap"]["victim_delay_s"], 1), fmt(m["recompute"]["victim_delay_s"], 1),
                      fmt(m["recompute"]["node_gpu_s"], 1),
                      " ".join(f"{r}:{v['pause']}/{v['swap']}/{v['recompute']}"
                               for r, v in row["reasons"].items()),
                      fmt(row["host_peak_gib"], 1),
                      f"{row['sm_completed']}/{row['sm_arrived']}",
                      f"{row['lm_completed']}/{row['lm_arrived']}",
                      fmt(row["sm_ttft_p99"], 0), fmt(row["sm_e2e_p99"], 0),
                      fmt(row["lm_queue_p99"], 0)])
    L += [gx.markdown_table(["split/preemption", "pause / swap / recompute",
                             "swap delay (s)", "recompute delay (s)", "recompute GPU-s",
                             "by reason (pause/swap/recompute)", "host peak (GiB)",
                             "SM completed", "LM completed", "SM TTFT p99 (ms)",
                             "SM e2e p99 (ms)", "LM queue p99 (ms)"], table), ""]
    swaps = [r for r in results["preemption"] if r["modes"]["swap"]["count"]]
    recs = [r for r in results["preemption"] if r["modes"]["recompute"]["count"]]
    per = []
    for r in swaps[:1]:
        m = r["modes"]["swap"]
        per.append(f"a swap cost its victim {1000 * m['victim_delay_s'] / m['count']:.0f} ms on "
                   f"average for {m['kv_tokens'] / m['count']:.0f} KV tokens ({r['label']})")
    for r in recs[:1]:
        m = r["modes"]["recompute"]
        per.append(f"a recompute {1000 * m['victim_delay_s'] / m['count']:.0f} ms for "
                   f"{m['kv_tokens'] / m['count']:.0f} KV tokens ({r['label']})")
    if per:
        L += ["Per choice: " + "; ".join(per) + ".", ""]

    L += ["## Drain versus checkpoint: the prefill chunk size", "",
          "The same lease-heavy workload (static split, preemption by cost) with the 8B's "
          "prefill chunk varied, with a token budget of two chunks per iteration, at 4 and 0.4 "
          "req/s; 32,768 means no chunking "
          "(every prompt is one chunk). In lease mode a GPU yields to a pending lease at its "
          "next iteration boundary and its sequences pause in place: the drain is the time "
          "from the lease becoming pending to the gang starting (from the timeline's gang "
          "events). Barrier idle is GPU time spent idle at a boundary waiting for the rest of "
          "the gang (GPUs that reach the boundary early run shorter iterations that end by "
          "the barrier, so this stays small even when the drain is long).", ""]
    table = []
    for row in results["chunks"]:
        table.append([row["chunk"], row["drains"], fmt(row["drain_ms_p50"], 1),
                      fmt(row["drain_ms_mean"], 1),
                      fmt(row["drain_ms_p99"], 1), fmt(row["drain_ms_max"], 1),
                      fmt(row["barrier_fraction"], 2, True), fmt(row["lm_queue_p99"], 0),
                      fmt(row["sm_ttft_p99"], 0), fmt(row["sm_e2e_p99"], 0),
                      f"{row['sm_completed']}/{row['sm_arrived']}"])
    L += [gx.markdown_table(["8B chunk (tokens)", "leases", "drain p50 (ms)", "drain mean (ms)", "drain p99 (ms)",
                             "drain max (ms)", "barrier idle (GPU time)", "LM queue p99 (ms)",
                             "SM TTFT p99 (ms)", "SM e2e p99 (ms)", "SM completed"], table), ""]
    L += ["![TTFT p99 vs load](kv-routing-ttft.png)", "",
          "![h sweep](kv-routing-h-sweep.png)", ""]
    with open(os.path.join(out_dir, "kv-routing.md"), "w") as f:
        f.write("\n".join(L))


def plot(results, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, title in [(axes[0], "prefix_groups", "synthetic prefix groups"),
                           (axes[1], "mooncake", "Mooncake trace")]:
        for routing in ROUTINGS:
            rows = [r for r in results[key] if r["routing"] == routing]
            ax.plot([r["load"] for r in rows], [r["ttft_p99"] for r in rows], marker="o",
                    label=routing)
        ax.set_title(title)
        ax.set_xlabel("load")
        ax.set_yscale("log")
    axes[0].set_ylabel("8B TTFT p99 (ms)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "kv-routing-ttft.png"), dpi=110)

    hs = sorted({r["h"] for r in results["h_sweep"]})
    fig, axes = plt.subplots(2, len(hs), figsize=(3.2 * len(hs), 6), sharex=True)
    for i, h in enumerate(hs):
        for routing in ["predicted-ttft", "cache-only", "least-loaded"]:
            rows = [r for r in results["h_sweep"] if r["h"] == h and r["routing"] == routing]
            axes[0][i].plot([r["load"] for r in rows], [r["ttft_p99"] for r in rows], marker="o",
                            label=routing)
            axes[1][i].plot([r["load"] for r in rows], [r["token_hit_rate"] for r in rows],
                            marker="o", label=routing)
        axes[0][i].set_title(f"h = {h}")
        axes[0][i].set_yscale("log")
        axes[1][i].set_xlabel("load (of cache-less capacity)")
    axes[0][0].set_ylabel("TTFT p99 (ms)")
    axes[1][0].set_ylabel("token hit rate")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "kv-routing-h-sweep.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer points, shorter windows")
    parser.add_argument("--out", default=os.path.join(gx.ROOT, "docs", "results"),
                        help="where the report goes (default: docs/results)")
    args = parser.parse_args()
    started = time.time()
    if args.quick:
        loads = [0.5, 0.8]
        synth_window = (5, 20, 60)
        moon_window = (20, 80, 120, 300)
        hs, hloads = [0.5, 0.8], [0.5, 1.0]
        short = (2, 12, 60)
        chunks = [256, 2048, 32768]
    else:
        loads = [0.3, 0.5, 0.7, 0.8, 0.9]
        synth_window = (10, 40, 60)
        moon_window = (30, 150, 200, 600)
        hs, hloads = [0.2, 0.5, 0.8, 0.95], [0.25, 0.5, 0.75, 1.0, 1.25]
        short = (3, 20, 120)
        chunks = [256, 1024, 4096, 32768]
    version = gx.subprocess.run([gx.binary(), "--version"], capture_output=True,
                                text=True).stdout.strip()

    results = {"quick": args.quick, "loads": loads, "capacity": {}, "version": version}

    # Capacities.
    synth_cap, steps = capacity(lambda r: prefix_groups_scenario(r, synth_window), 100, 3000,
                                "prefix-groups")
    results["capacity"]["prefix-groups"] = {"value": synth_cap, "unit": "req/s", "steps": steps}
    m_window = moon_window

    def moon(scale):
        # The window of the trace replayed shrinks in replay time as the scale grows: replay
        # `trace_s` seconds of trace, measured over (warmup, duration) of replay time.
        trace_s = m_window[3]
        replay = trace_s / scale
        return mooncake_scenario(scale, (min(m_window[0], replay * 0.2), replay,
                                         m_window[2], trace_s))

    moon_cap, steps = capacity(moon, 1.0, 16.0, "mooncake")
    results["capacity"]["mooncake (rate scale)"] = {"value": moon_cap, "unit": "x trace rate",
                                                    "steps": steps}

    def h_nocache(rate):
        scenario = h_sweep_scenario(0.5, rate, short)
        scenario["scheduler"] = {"prefix_caching": False}
        return scenario

    h_cap, steps = capacity(h_nocache, 20, 2000, "h-sweep (no cache)")
    results["capacity"]["h-sweep (no cache)"] = {"value": h_cap, "unit": "req/s", "steps": steps}

    # 1. Routing rules against load.
    results["prefix_groups"] = routing_vs_load(
        "prefix-groups", lambda r: prefix_groups_scenario(r, synth_window), loads, synth_cap)
    results["mooncake"] = routing_vs_load("mooncake", moon, loads, moon_cap)
    results["verdicts"] = [verdict(results["prefix_groups"], 0.8, "prefix-groups"),
                           verdict(results["mooncake"], 0.8, "mooncake")]

    # 5. Mooncake against the infinite cache, at load 0.8.
    scale = 0.8 * moon_cap
    results["mooncake_window"] = list(m_window)
    results["mooncake_reference_scale"] = scale
    base = moon(scale)
    results["infinite_cache"] = infinite_cache_reference(m_window[3], base["warmup_s"], scale)
    cache_runs = []
    for label, host, hbm in [("node, host_prefix_cache off (default)", False, None),
                             ("node, host_prefix_cache on (1 TiB)", True, None),
                             ("simulated infinite cache (2,000 GB HBM per GPU)", False, 2000)]:
        scenario = copy.deepcopy(base)
        scenario["scheduler"]["host_prefix_cache"] = host
        if hbm:
            scenario["node"]["hardware"] = {"preset": "h100-sxm-80gb", "hbm_gb": hbm}
        for routing in ["predicted-ttft"]:
            document = run(scenario, routings=[routing])
            row = routing_row(document["runs"][0])
            row["label"] = f"{label}, {routing}"
            cache_runs.append(row)
            print(json.dumps(row), flush=True)
    results["mooncake_cache_runs"] = cache_runs

    # 2. h and load.
    results["h_sweep"] = h_sweep(hs, hloads, short, h_cap)
    # 3. LM batching.
    results["lm_batching"] = lm_batching([2.0, 4.0, 8.0], short)
    # 4. Preemption and chunking.
    results["preemption"] = preemption_mix(short)
    results["chunks"] = chunk_sweep(chunks, short)

    results["wall_s"] = time.time() - started
    out_dir = args.out
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "kv-routing.json"), "w") as f:
        json.dump(results, f, indent=1)
    write_report(results, out_dir)
    plot(results, out_dir)
    print(f"done in {results['wall_s']:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
