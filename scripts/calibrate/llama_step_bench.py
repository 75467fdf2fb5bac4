#!/usr/bin/env python3
"""Times one engine iteration of Llama-shaped models on a real GPU, to calibrate gangway's cost
model (src/model) against hardware rather than datasheets alone.

What it measures: a full forward pass through every decoder layer (RMSNorm, QKV projection,
rotary-free attention over a KV cache with grouped-query heads, output projection, SwiGLU MLP)
with random bf16 weights, for a grid of batch shapes: decode batches (B sequences of context C),
prefill chunks (n new tokens on c cached ones) and mixes of both. Each shape is captured in a
CUDA graph and replayed, as serving engines do for decode, so Python launch overhead is not
measured. Weights are random: timing does not depend on their values.

Models: Llama-3-8B (a whole replica on one GPU, TP=1) and one GPU's shard of Llama-3-70B at
TP=8 (the same 80 layers, 1/8 of the heads and of the MLP width; the all-reduces between GPUs are
not measured here and come from the cost model's NCCL figures).

Output: CSV rows on stdout and in OUT/steps.csv:
  model,prefill_tokens,prefill_seqs,prefill_context_tokens,decode_seqs,decode_context_tokens,ms
which is exactly the BatchShape the cost model takes, so scripts/calibrate/fit_cost_model.py can
fit the linear model and the roofline efficiencies to it.

Runs only on a machine with a CUDA GPU and PyTorch; nothing in the build or tests needs it.
"""

import argparse
import csv
import os
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = {
    # name: layers, hidden, q_heads, kv_heads, head_dim, ffn (per GPU)
    "llama-3-8b": (32, 4096, 32, 8, 128, 14336),
    "llama-3-70b-tp8-shard": (80, 8192, 8, 1, 128, 3584),
}


class Model:
    def __init__(self, name, max_kv_tokens, device):
        layers, hidden, q_heads, kv_heads, head_dim, ffn = SHAPES[name]
        self.name, self.layers, self.hidden = name, layers, hidden
        self.q_heads, self.kv_heads, self.head_dim, self.ffn = q_heads, kv_heads, head_dim, ffn
        dt = torch.bfloat16
        qkv_out = (q_heads + 2 * kv_heads) * head_dim
        g = torch.Generator(device=device).manual_seed(0)

        def w(rows, cols):
            return (torch.randn(rows, cols, generator=g, device=device, dtype=dt) * 0.02)

        self.weights = []
        for _ in range(layers):
            self.weights.append(dict(
                qkv=w(hidden, qkv_out), o=w(q_heads * head_dim, hidden),
                gate_up=w(hidden, 2 * ffn), down=w(ffn, hidden),
                norm1=torch.ones(hidden, device=device, dtype=dt),
                norm2=torch.ones(hidden, device=device, dtype=dt)))
        # One KV arena per layer, shared by every shape (contents do not matter for timing).
        self.max_kv_tokens = max_kv_tokens
        self.k = [torch.zeros(max_kv_tokens, kv_heads, head_dim, device=device, dtype=dt)
                  for _ in range(layers)]
        self.v = [torch.zeros(max_kv_tokens, kv_heads, head_dim, device=device, dtype=dt)
                  for _ in range(layers)]

    def rms_norm(self, x, weight):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * weight

    def forward(self, x, decode_seqs, decode_context, chunk_tokens, chunk_context):
        """x: [decode_seqs + chunk_tokens, hidden]. Decode sequences each attend to
        decode_context cached tokens; the prefill chunk attends causally to chunk_context cached
        tokens plus itself."""
        qd, kvd, hd = self.q_heads, self.kv_heads, self.head_dim
        for layer in range(self.layers):
            wt = self.weights[layer]
            h = self.rms_norm(x, wt["norm1"])
            qkv = h @ wt["qkv"]
            q, k, v = qkv.split([qd * hd, kvd * hd, kvd * hd], dim=-1)
            outs = []
            if decode_seqs:
                qq = q[:decode_seqs].view(decode_seqs, qd, 1, hd)
                kk = self.k[layer][: decode_seqs * decode_context].view(
                    decode_seqs, decode_context, kvd, hd).transpose(1, 2)
                vv = self.v[layer][: decode_seqs * decode_context].view(
                    decode_seqs, decode_context, kvd, hd).transpose(1, 2)
                a = F.scaled_dot_product_attention(qq, kk, vv, enable_gqa=True)
                outs.append(a.reshape(decode_seqs, qd * hd))
            if chunk_tokens:
                qq = q[decode_seqs:].view(1, chunk_tokens, qd, hd).transpose(1, 2)
                total = chunk_context + chunk_tokens
                kk = self.k[layer][:total].view(1, total, kvd, hd).transpose(1, 2)
                vv = self.v[layer][:total].view(1, total, kvd, hd).transpose(1, 2)
                # Causal over the new tokens, full over the cached prefix.
                mask = torch.ones(chunk_tokens, total, device=x.device, dtype=torch.bool).tril(
                    diagonal=chunk_context)
                a = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=mask, enable_gqa=True)
                outs.append(a.transpose(1, 2).reshape(chunk_tokens, qd * hd))
            attn = torch.cat(outs) if len(outs) > 1 else outs[0]
            x = x + attn @ wt["o"]
            h = self.rms_norm(x, wt["norm2"])
            gate, up = (h @ wt["gate_up"]).chunk(2, dim=-1)
            x = x + (F.silu(gate) * up) @ wt["down"]
        return x


def time_shape(model, decode_seqs, decode_context, chunk_tokens, chunk_context, replays):
    device = model.k[0].device
    tokens = decode_seqs + chunk_tokens
    x = torch.randn(tokens, model.hidden, device=device, dtype=torch.bfloat16)
    args = (decode_seqs, decode_context, chunk_tokens, chunk_context)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            model.forward(x, *args)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model.forward(x, *args)
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / replays
    del graph
    return ms


def grid(name, quick):
    decode = [(b, c) for b in (1, 8, 32, 64, 128, 256) for c in (512, 2048, 8192)]
    chunks = [(n, c) for n in (64, 128, 256, 512, 1024, 2048) for c in (0, 2048, 8192)]
    mixed = [(b, c, n, 1024) for b in (16, 64, 128) for c in (1024, 4096) for n in (256, 512)]
    if quick:
        decode, chunks, mixed = decode[:3], chunks[:3], mixed[:1]
    shapes = [(b, c, 0, 0) for b, c in decode] + [(0, 0, n, c) for n, c in chunks] + mixed
    return shapes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=list(SHAPES))
    parser.add_argument("--replays", type=int, default=10)
    parser.add_argument("--max-kv-tokens", type=int, default=600_000)
    parser.add_argument("--quick", action="store_true", help="a few shapes only (smoke test)")
    parser.add_argument("--budget-s", type=float, default=400, help="stop starting shapes after this")
    args = parser.parse_args()

    out_dir = os.environ.get("OUT", ".")
    path = os.path.join(out_dir, "steps.csv")
    began = time.time()
    device = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}", file=sys.stderr)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        header = ["model", "prefill_tokens", "prefill_seqs", "prefill_context_tokens",
                  "decode_seqs", "decode_context_tokens", "ms"]
        writer.writerow(header)
        print(",".join(header))
        for name in args.models:
            model = Model(name, args.max_kv_tokens, device)
            for decode_seqs, decode_context, chunk, chunk_context in grid(name, args.quick):
                if time.time() - began > args.budget_s:
                    print("# time budget reached", file=sys.stderr)
                    break
                if max(decode_seqs * decode_context, chunk + chunk_context) > args.max_kv_tokens:
                    continue
                try:
                    ms = time_shape(model, decode_seqs, decode_context, chunk, chunk_context,
                                    args.replays)
                except torch.cuda.OutOfMemoryError:
                    torch.cuda.empty_cache()
                    continue
                row = [name, chunk, 1 if chunk else 0, chunk_context if chunk else 0,
                       decode_seqs, decode_seqs * decode_context, f"{ms:.4f}"]
                writer.writerow(row)
                f.flush()
                print(",".join(str(v) for v in row), flush=True)
            del model
            torch.cuda.empty_cache()
    print(f"# {time.time() - began:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
