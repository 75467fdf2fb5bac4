#!/usr/bin/env python3
"""What the GPU's kernels reach on their own, to read gpu_iteration_times.py's results against
(docs/calibration.md): HBM bandwidth of a plain read and a copy, and the rate of Llama-3-8B's
linear layers (QKV, output, gate/up and down projections of all 32 layers, bf16, through torch's
matmul, i.e. cuBLAS) for M tokens at a time. Each figure is the median of CUDA-event-timed CUDA
graph replays after warm-up. Output: $OUT/gpu_kernel_rates.json. Needs CUDA and torch.
"""

import argparse
import json
import os
import statistics
import sys
import time

LAYERS, HIDDEN, Q_HEADS, KV_HEADS, HEAD_DIM, FFN = 32, 4096, 32, 8, 128, 14336


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."),
                                                      "gpu_kernel_rates.json"))
    args = parser.parse_args()
    import torch

    began = time.time()
    dev = torch.device("cuda")
    dt = torch.bfloat16

    def timed(fn, iters=10):
        for _ in range(2):
            fn()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(graph):
            fn()
        for _ in range(2):
            graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(iters):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            graph.replay()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1))
        del graph
        return statistics.median(times)

    out = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, hbm=[], linear=[])
    with torch.inference_mode():
        # HBM: read 8 GiB (sum), copy 4 GiB (read 4 + write 4).
        big = torch.ones(4 * 2**30, device=dev, dtype=dt)  # 8 GiB
        ms = timed(lambda: big.sum(dtype=torch.float32))
        out["hbm"].append(dict(op="sum (read)", bytes=big.numel() * 2, ms=ms,
                               tb_per_s=big.numel() * 2 / ms / 1e9))
        half = big[: 2 * 2**30]
        dst = torch.empty_like(half)
        ms = timed(lambda: dst.copy_(half))
        out["hbm"].append(dict(op="copy (read + write)", bytes=2 * half.numel() * 2, ms=ms,
                               tb_per_s=2 * half.numel() * 2 / ms / 1e9))
        del big, half, dst
        torch.cuda.empty_cache()
        print(json.dumps(out["hbm"]), flush=True)

        gen = torch.Generator(device=dev).manual_seed(0)
        qkv_out = (Q_HEADS + 2 * KV_HEADS) * HEAD_DIM
        mats = []
        for _ in range(LAYERS):
            for k, n in ((HIDDEN, qkv_out), (Q_HEADS * HEAD_DIM, HIDDEN), (HIDDEN, 2 * FFN),
                         (FFN, HIDDEN)):
                mats.append(torch.randn(k, n, generator=gen, device=dev, dtype=dt).mul_(0.02))
        weight_bytes = sum(m.numel() for m in mats) * 2
        flops_per_token = 2 * sum(m.numel() for m in mats)
        for m_tokens in (1, 8, 32, 64, 128, 192, 256, 384, 512, 1024, 2048, 4096):
            xs = {k: torch.randn(m_tokens, k, device=dev, dtype=dt) for k in (HIDDEN, FFN)}

            def run_all():
                for w in mats:
                    torch.matmul(xs[w.shape[0]], w)

            ms = timed(run_all, iters=5 if m_tokens >= 1024 else 10)
            row = dict(tokens=m_tokens, ms=ms, tflops=flops_per_token * m_tokens / ms / 1e9,
                       weight_tb_per_s=weight_bytes / ms / 1e9)
            out["linear"].append(row)
            print(json.dumps(row), flush=True)
    out["linear_weight_bytes"] = weight_bytes
    out["elapsed_s"] = round(time.time() - began, 1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"# {out['elapsed_s']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
