#!/usr/bin/env python3
"""Sets measured H200 iteration times (gpu_iteration_times.py) beside the roofline cost model's
predictions (bench/cost_table.cc, target gangway_cost_table), fits the roofline's three cost
settings (compute_efficiency, bandwidth_efficiency, launch_overhead_s) to the measurements, and
fits the linear cost model's four coefficients too, and writes docs/results/calibration-h200.json
and docs/results/calibration-h200.md (the table that docs/calibration.md quotes). Needs no GPU: the measurements are committed under docs/results/.

  cmake -S . -B build-calib -DCMAKE_BUILD_TYPE=Release -DGANGWAY_BUILD_TESTS=OFF \\
        -DGANGWAY_BUILD_BENCHMARKS=ON
  cmake --build build-calib -j2 --target gangway_cost_table
  python3 scripts/calibration/compare.py

The fit searches a grid and rescales the default prediction's terms (at TP=1 the roofline is
launch + max(compute, memory), compute inversely proportional to compute_efficiency and memory to
bandwidth_efficiency); the fitted settings' predictions in the table are then taken from
gangway_cost_table run with those settings, and checked against the rescaled ones.
"""

import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYS = ("prefill_tokens", "prefill_seqs", "prefill_context_tokens", "decode_seqs",
        "decode_context_tokens")


def key(row):
    return tuple(row[k] for k in KEYS)


def label(row):
    p, c, d, k = (row["prefill_tokens"], row["prefill_context_tokens"], row["decode_seqs"],
                  row["decode_context_tokens"])
    parts = []
    if p:
        parts.append(f"prefill {p}" + (f" on {c} cached" if c else ""))
    if d:
        parts.append(f"decode {d} x {k // d}")
    return " + ".join(parts)


def cost_table(binary, timings, settings=None, hardware="h200"):
    cmd = [binary, timings, "--hardware", hardware]
    for name, value in (settings or {}).items():
        cmd += [f"--{name.replace('_', '-')}", repr(value)]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out, {key(r): r for r in out["shapes"]}


def rescaled(pred, defaults, ce, be, launch_ms):
    compute = pred["compute_ms"] * defaults["compute_efficiency"] / ce
    memory = pred["memory_ms"] * defaults["bandwidth_efficiency"] / be
    return launch_ms + max(compute, memory)


def fit(rows, preds, defaults, fixed=None):
    """Least squares on log(measured / predicted) over a grid; returns (ce, be, launch_ms, rms)."""
    fixed = fixed or {}
    ces = [fixed["ce"]] if "ce" in fixed else [x / 100 for x in range(25, 101)]
    bes = [fixed["be"]] if "be" in fixed else [x / 100 for x in range(35, 101)]
    launches = [fixed["launch"]] if "launch" in fixed else [x / 10 for x in range(0, 31)]
    data = [(math.log(r["median_ms"]), preds[key(r)]) for r in rows]
    best = None
    for ce in ces:
        for be in bes:
            for launch in launches:
                err = 0.0
                for log_measured, p in data:
                    err += (log_measured - math.log(rescaled(p, defaults, ce, be, launch))) ** 2
                if best is None or err < best[3]:
                    best = (ce, be, launch, err)
    ce, be, launch, err = best
    return dict(compute_efficiency=ce, bandwidth_efficiency=be, launch_overhead_ms=launch,
                rms_log_error=math.sqrt(err / len(data)), shapes=len(data))


def fit_linear(rows):
    """The linear cost model's four coefficients (seconds), least squares on relative error,
    non-negative (a coefficient that comes out negative is dropped and the rest refitted)."""
    def feats(r):
        # base (ms), per prefill token, per decode seq, per 1k KV tokens read; in ms
        return [1.0, r["prefill_tokens"], r["decode_seqs"],
                (r["decode_context_tokens"] + r["prefill_context_tokens"]) / 1000]
    active = [0, 1, 2, 3]
    while True:
        n = len(active)
        a = [[0.0] * n for _ in range(n)]
        b = [0.0] * n
        for r in rows:
            f = feats(r)
            w = 1 / r["median_ms"] ** 2
            for i in range(n):
                b[i] += w * f[active[i]] * r["median_ms"]
                for j in range(n):
                    a[i][j] += w * f[active[i]] * f[active[j]]
        # Gaussian elimination with partial pivoting
        for col in range(n):
            piv = max(range(col, n), key=lambda i: abs(a[i][col]))
            a[col], a[piv] = a[piv], a[col]
            b[col], b[piv] = b[piv], b[col]
            for i in range(n):
                if i != col:
                    k = a[i][col] / a[col][col]
                    for j in range(col, n):
                        a[i][j] -= k * a[col][j]
                    b[i] -= k * b[col]
        x = [b[i] / a[i][i] for i in range(n)]
        if min(x) >= 0:
            break
        del active[x.index(min(x))]
    coef = [0.0] * 4
    for i, v in zip(active, x):
        coef[i] = v
    base_ms, prefill_ms, decode_ms, kv_ms_per_k = coef
    return dict(base_s=base_ms / 1e3, per_prefill_token_s=prefill_ms / 1e3,
                per_decode_seq_s=decode_ms / 1e3, per_kv_token_s=kv_ms_per_k / 1e6)


def summary(rows, ratio_of):
    out = {}
    for kind in ("prefill", "decode", "mixed", "all"):
        rs = [ratio_of(r) for r in rows if kind in ("all", r["kind"])]
        if rs:
            out[kind] = dict(shapes=len(rs), min=min(rs), max=max(rs),
                             geomean=math.exp(sum(math.log(x) for x in rs) / len(rs)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    res = os.path.join(ROOT, "docs", "results")
    parser.add_argument("--measured", default=os.path.join(res, "h200-gpu-iteration-times.json"))
    parser.add_argument("--rerun", default=os.path.join(res, "h200-gpu-iteration-times-rerun.json"))
    parser.add_argument("--kernels", default=os.path.join(res, "h200-gpu-kernel-rates.json"))
    parser.add_argument("--cost-table",
                        default=os.path.join(ROOT, "build-calib", "bench", "gangway_cost_table"))
    parser.add_argument("--json-out", default=os.path.join(res, "calibration-h200.json"))
    parser.add_argument("--md-out", default=os.path.join(res, "calibration-h200.md"))
    args = parser.parse_args()

    measured = json.load(open(args.measured))
    rows = measured["shapes"]
    rerun = {}
    if os.path.exists(args.rerun):
        rerun = {key(r): r["median_ms"] for r in json.load(open(args.rerun))["shapes"]}
    kernels = json.load(open(args.kernels)) if os.path.exists(args.kernels) else None

    default_out, default = cost_table(args.cost_table, args.measured)
    defaults = {k: default_out[k] for k in ("compute_efficiency", "bandwidth_efficiency",
                                             "launch_overhead_s")}

    fits = {
        "all shapes": fit(rows, default, defaults),
        "prefill only (chunks >= 512)": fit(
            [r for r in rows if r["kind"] == "prefill" and r["prefill_tokens"] >= 512], default,
            defaults, fixed={"be": defaults["bandwidth_efficiency"]}),
        "decode only": fit([r for r in rows if r["kind"] == "decode"], default, defaults,
                           fixed={"ce": defaults["compute_efficiency"]}),
    }
    rec = fits["all shapes"]
    settings = dict(compute_efficiency=rec["compute_efficiency"],
                    bandwidth_efficiency=rec["bandwidth_efficiency"],
                    launch_overhead_s=round(rec["launch_overhead_ms"] / 1e3, 6))
    _, fitted = cost_table(args.cost_table, args.measured, settings)
    _, fitted_h100 = cost_table(args.cost_table, args.measured, settings, hardware="h100")
    _, default_h100 = cost_table(args.cost_table, args.measured, hardware="h100")
    for r in rows:
        want = rescaled(default[key(r)], defaults, rec["compute_efficiency"],
                        rec["bandwidth_efficiency"], rec["launch_overhead_ms"])
        got = fitted[key(r)]["predicted_ms"]
        if abs(want - got) > 1e-3 * got + 1e-4:
            sys.exit(f"rescaled fit {want} != gangway_cost_table {got} for {label(r)}")

    linear = fit_linear(rows)
    linear_arg = ",".join(repr(linear[k]) for k in ("base_s", "per_prefill_token_s",
                                                     "per_decode_seq_s", "per_kv_token_s"))
    cmd = [args.cost_table, args.measured, "--linear", linear_arg]
    linear_out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    if linear_out["cost_model"] != "linear":
        sys.exit("gangway_cost_table did not switch to the linear model")
    linear_pred = {key(r): r for r in linear_out["shapes"]}

    def rms_log(pred):
        return math.sqrt(sum(math.log(r["median_ms"] / pred[key(r)]["predicted_ms"]) ** 2
                             for r in rows) / len(rows))

    table = []
    for r in rows:
        d, f = default[key(r)], fitted[key(r)]
        table.append(dict(
            shape=label(r), kind=r["kind"], **{k: r[k] for k in KEYS},
            measured_ms=r["median_ms"], rerun_ms=rerun.get(key(r)),
            predicted_ms=d["predicted_ms"], ratio=r["median_ms"] / d["predicted_ms"],
            roofline_bound="compute" if d["compute_bound"] else "memory",
            compute_ms=d["compute_ms"], memory_ms=d["memory_ms"],
            fitted_predicted_ms=f["predicted_ms"], fitted_ratio=r["median_ms"] / f["predicted_ms"],
            linear_predicted_ms=linear_pred[key(r)]["predicted_ms"],
            linear_ratio=r["median_ms"] / linear_pred[key(r)]["predicted_ms"],
            sum_of_terms_ratio=r["median_ms"] / (d["launch_ms"] + d["compute_ms"] + d["memory_ms"]),
            h100_default_predicted_ms=default_h100[key(r)]["predicted_ms"],
            h100_fitted_predicted_ms=fitted_h100[key(r)]["predicted_ms"]))

    # Attention's own rate: a prefill chunk on c cached tokens against the same chunk on none. The
    # extra measured time is the extra attention; the extra default compute term is its FLOPs at
    # the default compute_efficiency, so the achieved efficiency is their ratio times that.
    attention_rates = []
    by_key = {key(r): t for r, t in zip(rows, table)}
    for r, t in zip(rows, table):
        if r["kind"] != "prefill" or not r["prefill_context_tokens"]:
            continue
        base = by_key.get((r["prefill_tokens"], 1, 0, 0, 0))
        if base is None:
            continue
        extra_ms = t["measured_ms"] - base["measured_ms"]
        extra_compute_ms = t["compute_ms"] - base["compute_ms"]
        attention_rates.append(dict(
            shape=t["shape"], extra_measured_ms=extra_ms, extra_compute_ms_at_default=extra_compute_ms,
            achieved_compute_efficiency=defaults["compute_efficiency"] * extra_compute_ms / extra_ms))

    rerun_spread = [abs(t["rerun_ms"] / t["measured_ms"] - 1) for t in table if t["rerun_ms"]]
    result = dict(
        source=dict(measured=os.path.relpath(args.measured, ROOT), device=measured["device"],
                    torch=measured["torch"], attention=measured["attention"],
                    kv_layout=measured["kv_layout"]),
        model="llama-3-8b, TP=1", hardware=default_out["hardware"], default_settings=defaults,
        fits=fits, recommended_settings=settings,
        ratio_default=summary(table, lambda t: t["ratio"]),
        ratio_fitted=summary(table, lambda t: t["fitted_ratio"]),
        ratio_linear=summary(table, lambda t: t["linear_ratio"]),
        ratio_sum_of_default_terms=summary(table, lambda t: t["sum_of_terms_ratio"]),
        rms_log_error=dict(default=rms_log(default), fitted=rms_log(fitted),
                           linear=rms_log(linear_pred)),
        linear_fit=linear, attention_rates=attention_rates,
        rerun_max_relative_difference=max(rerun_spread) if rerun_spread else None,
        kernel_rates=kernels, shapes=table)
    with open(args.json_out, "w") as fh:
        json.dump(result, fh, indent=1)

    lines = [
        "<!-- generated by scripts/calibration/compare.py; do not edit -->",
        f"Measured: {measured['device']}, torch {measured['torch']}, Llama-3-8B shape (random bf16 "
        "weights), CUDA graphs, median of CUDA-event timings. Predicted: roofline on "
        f"{default_out['hardware']} with the default settings (compute_efficiency "
        f"{defaults['compute_efficiency']}, bandwidth_efficiency "
        f"{defaults['bandwidth_efficiency']}, launch_overhead_s {defaults['launch_overhead_s']}); "
        f"fitted: compute_efficiency {settings['compute_efficiency']}, bandwidth_efficiency "
        f"{settings['bandwidth_efficiency']}, launch_overhead_s {settings['launch_overhead_s']}. "
        "Ratio = measured / predicted.",
        "",
        "| shape | measured ms | rerun ms | predicted ms | ratio | roofline bound | fitted ms | "
        "fitted ratio | linear ms | linear ratio |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for t in table:
        rr = f"{t['rerun_ms']:.2f}" if t["rerun_ms"] else "-"
        lines.append(f"| {t['shape']} | {t['measured_ms']:.2f} | {rr} | {t['predicted_ms']:.2f} | "
                     f"{t['ratio']:.2f} | {t['roofline_bound']} | {t['fitted_predicted_ms']:.2f} | "
                     f"{t['fitted_ratio']:.2f} | {t['linear_predicted_ms']:.2f} | "
                     f"{t['linear_ratio']:.2f} |")
    def cell(x):
        return f"{x['geomean']:.2f} ({x['min']:.2f}-{x['max']:.2f})"

    lines += ["", "Measured / predicted, geomean (min-max):", "",
              "| shapes | roofline, default settings | roofline, fitted settings | "
              "linear model, fitted | default terms added (launch + compute + memory) |",
              "|---|---|---|---|---|"]
    for kind in result["ratio_default"]:
        lines.append(f"| {kind} ({result['ratio_default'][kind]['shapes']}) | "
                     f"{cell(result['ratio_default'][kind])} | {cell(result['ratio_fitted'][kind])}"
                     f" | {cell(result['ratio_linear'][kind])} | "
                     f"{cell(result['ratio_sum_of_default_terms'][kind])} |")
    e = result["rms_log_error"]
    lines += ["", f"RMS of log(measured / predicted): default {e['default']:.3f}, fitted roofline "
              f"{e['fitted']:.3f}, fitted linear {e['linear']:.3f}. Linear fit: base_ms "
              f"{linear['base_s'] * 1e3:.2f}, per_prefill_token_us "
              f"{linear['per_prefill_token_s'] * 1e6:.2f}, per_decode_seq_us "
              f"{linear['per_decode_seq_s'] * 1e6:.2f}, per_kv_token_ns "
              f"{linear['per_kv_token_s'] * 1e9:.2f}."]
    lines += ["", "| fit | compute_efficiency | bandwidth_efficiency | launch_overhead ms | "
              "rms log error |", "|---|---:|---:|---:|---:|"]
    for name, f in fits.items():
        lines.append(f"| {name} ({f['shapes']} shapes) | {f['compute_efficiency']:.2f} | "
                     f"{f['bandwidth_efficiency']:.2f} | {f['launch_overhead_ms']:.1f} | "
                     f"{f['rms_log_error']:.3f} |")
    lines += ["", "Attention's own rate (prefill on c cached tokens minus the same chunk on none): extra "
              "measured ms; extra roofline compute ms at the default efficiency; achieved efficiency "
              "of the extra attention FLOPs.", "",
              "| shape | extra measured ms | extra predicted compute ms | achieved efficiency |",
              "|---|---:|---:|---:|"]
    for a in attention_rates:
        lines.append(f"| {a['shape']} | {a['extra_measured_ms']:.2f} | "
                     f"{a['extra_compute_ms_at_default']:.2f} | "
                     f"{a['achieved_compute_efficiency']:.2f} |")
    if rerun_spread:
        lines += ["", "Rerun (the whole grid timed again on a fresh start of the machine): largest "
                  f"difference from the first run {100 * max(rerun_spread):.1f} %."]
    if kernels:
        lines += ["", "Kernel rates on the same GPU (scripts/calibration/gpu_kernel_rates.py):", "",
                  "| measurement | ms | rate |", "|---|---:|---:|"]
        for h in kernels["hbm"]:
            lines.append(f"| HBM {h['op']}, {h['bytes'] / 2**30:.0f} GiB moved | {h['ms']:.2f} | "
                         f"{h['tb_per_s']:.2f} TB/s |")
        for l in kernels["linear"]:
            lines.append(f"| 8B linear layers (all 32 layers' weight matmuls), {l['tokens']} tokens"
                         f" | {l['ms']:.2f} | {l['tflops']:.0f} TFLOP/s, "
                         f"{l['weight_tb_per_s']:.2f} TB/s of weights |")
    md = "\n".join(lines) + "\n"
    with open(args.md_out, "w") as fh:
        fh.write(md)
    print(md)


if __name__ == "__main__":
    main()
