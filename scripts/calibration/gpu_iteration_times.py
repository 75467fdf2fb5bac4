#!/usr/bin/env python3
"""Times one engine iteration of a Llama-3-8B-shaped decoder on one GPU, for the batch shapes
gangway's scheduler builds, so that the roofline cost model (src/model) can be compared with a
real GPU (scripts/calibration/compare.py, docs/calibration.md).

The model: 32 layers, hidden 4096, 32 query / 8 KV heads of 128, SwiGLU MLP 14336, vocabulary
128256 (untied embedding and LM head), bf16, random weights (timing does not depend on values).
Per layer: RMSNorm, fused QKV projection, writing the new tokens' K and V into the KV cache,
attention with torch's scaled_dot_product_attention, output projection, RMSNorm, gate/up
projection, SiLU x up, down projection. Then the final norm and the LM head for the sampled rows
only (one per decode sequence and one per prefill chunk), as vLLM computes logits. Not included:
rotary embeddings, sampling, the engine's CPU-side scheduling.

KV cache: contiguous per sequence ([seqs, kv_heads, context, head_dim] per layer), not paged.
Decode attention folds each KV head's 4 query heads into 4 query rows (exact for GQA, no mask),
so a fused kernel reads each K/V byte once, as a GQA decode kernel does. A prefill chunk of n
tokens on c cached ones attends causally, bottom-right aligned (token i sees c + i + 1 keys); the
implementation used (fused kernel with torch's causal_lower_right bias, or a fallback) is chosen
by a numerical probe at start-up and recorded in the JSON.

KV memory: every layer has its own cache unless a shape's cache for 32 layers exceeds the pool;
then layers share the pool's slots round-robin (kv_slots in the JSON). Each such slot is several
GiB, far beyond the 50 MB L2, so sharing does not make reads cheaper.

Timing: each shape is captured in a CUDA graph (as engines do for decode; prefill in vLLM V1 is
piecewise-graphed too), warmed up, then each replay is timed with its own pair of CUDA events;
the JSON has the median (and min / p90). Falls back to eager timing if capture fails.

Output: $OUT/gpu_iteration_times.json (rewritten after every shape, so a timeout keeps what was
measured). Runs only where CUDA and torch exist; `--dry-run` prints the shape grid without torch.
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import time

LAYERS, HIDDEN, Q_HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB = 32, 4096, 32, 8, 128, 14336, 128256
GROUP = Q_HEADS // KV_HEADS


def shape_grid():
    """(prefill_tokens, prefill_context, decode_seqs, decode_context_per_seq, kind)."""
    shapes = []
    for n in (128, 256, 512, 1024, 2048):
        for c in (0, 2048, 8192):
            shapes.append((n, c, 0, 0, "prefill"))
    shapes.append((512, 32768, 0, 0, "prefill"))
    shapes.append((2048, 32768, 0, 0, "prefill"))
    for b in (1, 8, 32, 64, 128, 256):
        for c in (512, 2048, 8192):
            shapes.append((0, 0, b, c, "decode"))
    shapes += [
        (256, 0, 32, 2048, "mixed"),
        (256, 0, 128, 2048, "mixed"),
        (256, 4096, 64, 8192, "mixed"),
        (512, 0, 64, 2048, "mixed"),
        (512, 2048, 256, 512, "mixed"),
        (1024, 4096, 16, 4096, "mixed"),
    ]
    return shapes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget-s", type=float, default=100,
                        help="start no new shape after this many seconds")
    parser.add_argument("--kv-pool-gib", type=float, default=90)
    parser.add_argument("--max-iters", type=int, default=20)
    parser.add_argument("--target-s", type=float, default=0.6,
                        help="timed replays per shape: about this much GPU time, 5..max-iters")
    parser.add_argument("--quick", action="store_true", help="three shapes only (smoke test)")
    parser.add_argument("--dry-run", action="store_true", help="print the grid; needs no torch")
    parser.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."),
                                                      "gpu_iteration_times.json"))
    args = parser.parse_args()

    grid = shape_grid()
    if args.quick:
        grid = [grid[0], grid[20], grid[-1]]
    if args.dry_run:
        for s in grid:
            print(s)
        print(f"{len(grid)} shapes")
        return
    run(args, grid)


def run(args, grid):
    import torch
    import torch.nn.functional as F

    began = time.time()
    dev = torch.device("cuda")
    dt = torch.bfloat16
    gen = torch.Generator(device=dev).manual_seed(0)

    def w(rows, cols):
        return torch.randn(rows, cols, generator=gen, device=dev, dtype=dt).mul_(0.02)

    qkv_out = (Q_HEADS + 2 * KV_HEADS) * HEAD_DIM
    layers = []
    for _ in range(LAYERS):
        layers.append(dict(qkv=w(HIDDEN, qkv_out), o=w(Q_HEADS * HEAD_DIM, HIDDEN),
                           gate_up=w(HIDDEN, 2 * FFN), down=w(FFN, HIDDEN),
                           n1=torch.ones(HIDDEN, device=dev, dtype=dt),
                           n2=torch.ones(HIDDEN, device=dev, dtype=dt)))
    embed = w(VOCAB, HIDDEN)
    lm_head = w(HIDDEN, VOCAB)
    final_norm = torch.ones(HIDDEN, device=dev, dtype=dt)
    params = sum(t.numel() for l in layers for t in l.values()) + embed.numel() + lm_head.numel()
    pool_elems = int(args.kv_pool_gib * 2**30) // 2
    pool = torch.zeros(pool_elems, device=dev, dtype=dt)
    torch.cuda.synchronize()
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"{params / 1e9:.3f} B parameters, setup {time.time() - began:.1f} s", file=sys.stderr)

    def rms(x, weight):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * weight

    # ---- attention implementations, chosen by a probe ----------------------------------------
    from torch.nn.attention import SDPBackend, sdpa_kernel
    try:
        from torch.nn.attention.bias import causal_lower_right
    except ImportError:
        causal_lower_right = None
    fused = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]
    decode_fused = [True]  # cleared by the probe if no fused kernel takes the decode shape

    def decode_attn(q, k, v):
        # q [B, Q_HEADS*HEAD_DIM]; k, v [B, KV_HEADS, C, HEAD_DIM]. Query head h uses KV head
        # h // GROUP, so the GROUP heads of one KV head become GROUP query rows.
        b = q.shape[0]
        qq = q.view(b, KV_HEADS, GROUP, HEAD_DIM)
        with sdpa_kernel(fused) if decode_fused[0] else contextlib.nullcontext():
            a = F.scaled_dot_product_attention(qq, k, v)
        return a.reshape(b, Q_HEADS * HEAD_DIM)

    def prefill_impl(name):
        # q [1, Q_HEADS, n, HEAD_DIM]; k, v [1, KV_HEADS, c + n, HEAD_DIM]. With c == 0 the causal
        # mask is the plain one (top-left and bottom-right alignment agree).
        def fn(q, k, v, n, c):
            if name == "fused_lower_right_gqa":
                with sdpa_kernel(fused):
                    if c == 0:
                        return F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                              enable_gqa=True)
                    return F.scaled_dot_product_attention(
                        q, k, v, attn_mask=causal_lower_right(n, c + n), enable_gqa=True)
            if name == "fused_lower_right_expand":
                k2 = k.repeat_interleave(GROUP, dim=1)
                v2 = v.repeat_interleave(GROUP, dim=1)
                with sdpa_kernel(fused):
                    if c == 0:
                        return F.scaled_dot_product_attention(q, k2, v2, is_causal=True)
                    return F.scaled_dot_product_attention(
                        q, k2, v2, attn_mask=causal_lower_right(n, c + n))
            mask = torch.ones(n, c + n, device=q.device, dtype=torch.bool).tril(diagonal=c)
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        return fn

    def reference(q, k, v, n, c):
        k2 = k.repeat_interleave(GROUP, dim=1).float()
        v2 = v.repeat_interleave(GROUP, dim=1).float()
        s = (q.float() @ k2.transpose(-1, -2)) / HEAD_DIM**0.5
        mask = torch.ones(n, c + n, device=q.device, dtype=torch.bool).tril(diagonal=c)
        s = s.masked_fill(~mask, float("-inf"))
        return torch.softmax(s, -1) @ v2

    def probe():
        chosen = {}
        n, c = 64, 192
        q = torch.randn(1, Q_HEADS, n, HEAD_DIM, device=dev, dtype=dt)
        k = torch.randn(1, KV_HEADS, c + n, HEAD_DIM, device=dev, dtype=dt)
        v = torch.randn(1, KV_HEADS, c + n, HEAD_DIM, device=dev, dtype=dt)
        for cc in (0, c):
            ref = reference(q, k[:, :, c - cc:], v[:, :, c - cc:], n, cc)
            names = ["fused_lower_right_gqa", "fused_lower_right_expand", "explicit_mask_gqa"]
            if causal_lower_right is None:
                names = names[2:]
            for name in names:
                try:
                    out = prefill_impl(name)(q, k[:, :, c - cc:], v[:, :, c - cc:], n, cc)
                    err = (out.float() - ref).abs().max().item()
                except Exception as e:  # noqa: BLE001 - any failure means "try the next one"
                    print(f"# probe {name} c={cc}: {type(e).__name__}: {e}"[:300], file=sys.stderr)
                    continue
                print(f"# probe {name} c={cc}: max abs err {err:.4f}", file=sys.stderr)
                if err < 0.05:
                    chosen["prefill_c0" if cc == 0 else "prefill_cached"] = name
                    break
        # decode fold vs reference
        b, ctx = 3, 100
        q = torch.randn(b, Q_HEADS * HEAD_DIM, device=dev, dtype=dt)
        k = torch.randn(b, KV_HEADS, ctx, HEAD_DIM, device=dev, dtype=dt)
        v = torch.randn(b, KV_HEADS, ctx, HEAD_DIM, device=dev, dtype=dt)
        try:
            out = decode_attn(q, k, v)
        except Exception as e:  # noqa: BLE001
            print(f"# probe decode fused: {type(e).__name__}: {e}"[:300], file=sys.stderr)
            decode_fused[0] = False
            out = decode_attn(q, k, v)
        ref = reference(q.view(b, Q_HEADS, 1, HEAD_DIM), k, v, 1, ctx - 1)
        err = (out.float() - ref.reshape(b, -1)).abs().max().item()
        print(f"# probe decode fold: max abs err {err:.4f}", file=sys.stderr)
        chosen["decode"] = ("fused_gqa_fold" if decode_fused[0] else "gqa_fold_any_backend") + (
            "" if err < 0.05 else " (PROBE FAILED)")
        return chosen

    attention = probe()
    if "prefill_c0" not in attention or "prefill_cached" not in attention:
        raise SystemExit(f"no prefill attention passed the probe: {attention}")
    attn_c0 = prefill_impl(attention["prefill_c0"])
    attn_cached = prefill_impl(attention["prefill_cached"])

    def prefill_attn(q, k, v, n, c):
        return (attn_c0 if c == 0 else attn_cached)(q, k, v, n, c)

    # ---- one iteration -------------------------------------------------------------------------
    def make_iteration(n, c, b, ctx):
        # KV per layer: decode [b, KV_HEADS, ctx, HEAD_DIM] and prefill [1, KV_HEADS, c+n, ...],
        # K and V each.
        per_seq = KV_HEADS * HEAD_DIM
        dec_elems = b * ctx * per_seq
        pre_elems = (c + n) * per_seq if n else 0
        layer_elems = 2 * (dec_elems + pre_elems)
        slots = min(LAYERS, pool_elems // layer_elems)
        if slots < 1:
            raise MemoryError(f"one layer's KV ({layer_elems * 2 / 2**30:.1f} GiB) exceeds the pool")
        caches = []
        for i in range(slots):
            base = i * layer_elems
            views = []
            for j, (elems, shape) in enumerate([(dec_elems, (b, KV_HEADS, ctx, HEAD_DIM)),
                                                (pre_elems, (1, KV_HEADS, c + n, HEAD_DIM))]):
                if elems == 0:
                    views.append((None, None))
                    continue
                off = base + (0 if j == 0 else 2 * dec_elems)
                kk = pool[off:off + elems].view(shape)
                vv = pool[off + elems:off + 2 * elems].view(shape)
                views.append((kk, vv))
            caches.append(views)

        tokens = b + n
        ids = torch.randint(0, VOCAB, (tokens,), device=dev)
        sample_rows = torch.arange(b, device=dev)
        if n:
            sample_rows = torch.cat([sample_rows, torch.tensor([tokens - 1], device=dev)])
        qd, kvd = Q_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM

        def step():
            x = F.embedding(ids, embed)
            for li in range(LAYERS):
                wt = layers[li]
                (dk, dv), (pk, pv) = caches[li % slots]
                h = rms(x, wt["n1"])
                q, k, v = (h @ wt["qkv"]).split([qd, kvd, kvd], dim=-1)
                outs = []
                if b:
                    # the new token's K/V go to the last slot of each sequence's context
                    dk[:, :, ctx - 1, :] = k[:b].view(b, KV_HEADS, HEAD_DIM)
                    dv[:, :, ctx - 1, :] = v[:b].view(b, KV_HEADS, HEAD_DIM)
                    outs.append(decode_attn(q[:b], dk, dv))
                if n:
                    pk[0, :, c:, :] = k[b:].view(n, KV_HEADS, HEAD_DIM).transpose(0, 1)
                    pv[0, :, c:, :] = v[b:].view(n, KV_HEADS, HEAD_DIM).transpose(0, 1)
                    qq = q[b:].view(n, Q_HEADS, HEAD_DIM).transpose(0, 1).unsqueeze(0)
                    a = prefill_attn(qq, pk, pv, n, c)
                    outs.append(a[0].transpose(0, 1).reshape(n, qd))
                attn = torch.cat(outs) if len(outs) > 1 else outs[0]
                x = x + attn @ wt["o"]
                h = rms(x, wt["n2"])
                gate, up = (h @ wt["gate_up"]).chunk(2, dim=-1)
                x = x + (F.silu(gate) * up) @ wt["down"]
            last = rms(x.index_select(0, sample_rows), final_norm)
            return last @ lm_head

        return step, slots

    def time_shape(step):
        for _ in range(2):
            step()
        torch.cuda.synchronize()
        graph = None
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                step()
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
            run_once = graph.replay
        except Exception as e:  # noqa: BLE001
            print(f"# graph capture failed, timing eagerly: {type(e).__name__}: {e}"[:300],
                  file=sys.stderr)
            graph = None
            torch.cuda.synchronize()
            run_once = step
        for _ in range(3):
            run_once()
        torch.cuda.synchronize()
        times = []
        iters = args.max_iters
        i = 0
        while i < iters:
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            run_once()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1))
            if i == 0:
                iters = max(5, min(args.max_iters, int(args.target_s * 1000 / max(times[0], 1e-3))))
            i += 1
        del graph
        times.sort()
        return dict(median_ms=statistics.median(times), min_ms=times[0],
                    p90_ms=times[min(len(times) - 1, int(0.9 * len(times)))],
                    iters=len(times), cuda_graph=run_once is not step)

    results = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__,
                   cuda=torch.version.cuda, model="llama-3-8b (random bf16 weights)",
                   parameters=params, attention=attention,
                   kv_layout="contiguous per sequence [seqs, kv_heads, context, head_dim], not paged",
                   shapes=[], skipped=[])

    def write():
        results["elapsed_s"] = round(time.time() - began, 1)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(args.out + ".tmp", args.out)

    write()
    with torch.inference_mode():
        for n, c, b, ctx, kind in grid:
            if time.time() - began > args.budget_s:
                results["skipped"].append(dict(shape=[n, c, b, ctx], why="time budget"))
                continue
            row = dict(kind=kind, prefill_tokens=n, prefill_seqs=1 if n else 0,
                       prefill_context_tokens=c if n else 0, decode_seqs=b,
                       decode_context_tokens=b * ctx)
            try:
                step, slots = make_iteration(n, c, b, ctx)
                row.update(time_shape(step))
                row["kv_slots"] = slots
                del step
            except (torch.cuda.OutOfMemoryError, MemoryError, RuntimeError) as e:
                torch.cuda.synchronize()
                results["skipped"].append(dict(shape=[n, c, b, ctx],
                                               why=f"{type(e).__name__}: {e}"[:300]))
                print(f"# skipped {row}: {e}"[:300], file=sys.stderr)
                torch.cuda.empty_cache()
                write()
                continue
            results["shapes"].append(row)
            print(json.dumps(row), flush=True)
            write()
            torch.cuda.empty_cache()
    write()
    print(f"# {len(results['shapes'])} shapes in {time.time() - began:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
