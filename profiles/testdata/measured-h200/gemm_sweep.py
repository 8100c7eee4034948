#!/usr/bin/env python3
"""GEMM sweep for meshplan's matmul tail (t0): bf16 and fp8 (torch._scaled_mm, e4m3,
tensorwise scale, bf16 out) for dense and MoE-expert projection shapes over tokens M,
forward / dgrad / wgrad products, each timed as a single call (CUDA events around one
call, as gpu-measure.py's bench) and back to back (10 calls between events, /10); then
grouped expert matmuls (torch._grouped_mm bf16, torch._scaled_grouped_mm fp8 rowwise)
against the same experts run one GEMM each. One JSON line per measurement."""
import os, sys, time, subprocess
import torch
from benchlib import Log, bench

LOG = Log("gemm_sweep.jsonl", 300)
emit, T0, BUDGET = LOG.emit, LOG.t0, LOG.budget

def bench_loop(fn, n=10, reps=5):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n): fn()
        b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / 1e3 / n)
    ts.sort(); return ts[len(ts) // 2]

def timed(fn):
    s = bench(fn)
    l = bench_loop(fn) if s < 1e-3 else s
    return s, l

def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        return str(e)[:100]

p = torch.cuda.get_device_properties(0)
emit({"part": "env", "gpu": p.name, "sms": p.multi_processor_count, "mem": p.total_memory,
      "torch": torch.__version__, "cuda": torch.version.cuda, "smi": smi()})

# copy bandwidth (bytes read + written)
x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
s = bench(lambda: y.copy_(x))
emit({"part": "copy", "bytes": 2 << 30, "s": s, "GBps": round(2 * (1 << 30) / s / 1e9, 1)})
del x, y

DENSE = [("1b_qkv", 2048, 3072), ("7b_w13", 4096, 22016), ("7b_w2", 11008, 4096), ("70b_w13_tp8", 8192, 7168),
         ("sq_8k", 8192, 8192), ("8b_qkv", 4096, 6144), ("8b_o", 4096, 4096), ("8b_w13", 4096, 28672), ("8b_w2", 14336, 4096)]
MOE = [("gptoss_fc1", 2880, 5760), ("gptoss_fc2", 2880, 2880), ("q30_fc1", 2048, 1536), ("q30_fc2", 768, 2048),
       ("q235_fc1", 4096, 3072), ("q235_fc2", 1536, 4096), ("dsv3_fc1", 7168, 4096), ("dsv3_fc2", 2048, 7168)]
one = torch.tensor(1.0, device="cuda")

def gemm_rows(name, K, N, M):
    # the three products of a linear layer y[M,N] = x[M,K] W[K,N]: (rows, inner, cols)
    prods = {"fwd": (M, K, N), "dgrad": (M, N, K), "wgrad": (K, M, N)}
    rec = {"part": "gemm", "name": name, "M": M, "K": K, "N": N}
    for p, (r, i, c) in prods.items():
        fl = 2.0 * r * i * c
        # bf16 in the layouts autograd uses: fwd x@W, dgrad dy@W^T, wgrad x^T@dy
        if p == "fwd":
            a = torch.randn(r, i, device="cuda", dtype=torch.bfloat16); b = torch.randn(i, c, device="cuda", dtype=torch.bfloat16)
            f = lambda: a @ b
        elif p == "dgrad":
            a = torch.randn(r, i, device="cuda", dtype=torch.bfloat16); w = torch.randn(c, i, device="cuda", dtype=torch.bfloat16)
            f = lambda: a @ w.t()
        else:
            xx = torch.randn(i, r, device="cuda", dtype=torch.bfloat16); dy = torch.randn(i, c, device="cuda", dtype=torch.bfloat16)
            f = lambda: xx.t() @ dy
        s, l = timed(f)
        rec["bf16_" + p + "_s"] = s; rec["bf16_" + p + "_loop_s"] = l
        rec["bf16_" + p + "_tflops"] = round(fl / s / 1e12, 1)
        f = None; torch.cuda.empty_cache()
        # fp8: TN layout as cuBLASLt needs on Hopper (Transformer Engine casts transposes for dgrad/wgrad)
        a8 = torch.randn(r, i, device="cuda").to(torch.float8_e4m3fn)
        b8 = torch.randn(c, i, device="cuda").to(torch.float8_e4m3fn)
        f = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        s, l = timed(f)
        rec["fp8_" + p + "_s"] = s; rec["fp8_" + p + "_loop_s"] = l
        rec["fp8_" + p + "_tflops"] = round(fl / s / 1e12, 1)
        del a8, b8
        f = None; torch.cuda.empty_cache()
    emit(rec)

for M in (256, 512, 1024, 2048, 4096, 8192, 16384, 32768):
    for name, K, N in DENSE + MOE:
        if M == 32768 and (name, K, N) in MOE:
            continue
        if time.time() - T0 > BUDGET * 0.7:
            break
        try:
            gemm_rows(name, K, N, M)
        except Exception as e:
            emit({"part": "gemm", "name": name, "M": M, "err": (type(e).__name__ + ": " + str(e))[:300]})
        torch.cuda.empty_cache()
emit({"part": "smi", "smi": smi()})

# grouped expert GEMMs: G local experts, T tokens each, forward product only
def grouped(name, K, N, G, T):
    rec = {"part": "grouped", "name": name, "K": K, "N": N, "G": G, "T": T}
    fl = 2.0 * G * T * K * N
    a = torch.randn(G * T, K, device="cuda", dtype=torch.bfloat16)
    bs = [torch.randn(K, N, device="cuda", dtype=torch.bfloat16) for _ in range(G)]
    chunks = a.split(T)
    def per_expert():
        for g in range(G):
            chunks[g] @ bs[g]
    s = bench(per_expert); rec["bf16_per_expert_s"] = s; rec["bf16_per_expert_tflops"] = round(fl / s / 1e12, 1)
    offs = torch.arange(T, G * T + 1, T, device="cuda", dtype=torch.int32)
    try:
        b3 = torch.randn(G, N, K, device="cuda", dtype=torch.bfloat16).transpose(-2, -1)
        f = lambda: torch._grouped_mm(a, b3, offs=offs, out_dtype=torch.bfloat16)
        s = bench(f); rec["bf16_grouped_s"] = s; rec["bf16_grouped_tflops"] = round(fl / s / 1e12, 1)
        del b3
    except Exception as e:
        rec["bf16_grouped_err"] = (type(e).__name__ + ": " + str(e))[:200]
    try:
        a8 = a.to(torch.float8_e4m3fn)
        b8s = [torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn) for _ in range(G)]
        c8 = a8.split(T)
        def per_expert8():
            for g in range(G):
                torch._scaled_mm(c8[g], b8s[g].t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        s = bench(per_expert8); rec["fp8_per_expert_s"] = s; rec["fp8_per_expert_tflops"] = round(fl / s / 1e12, 1)
        b83 = torch.randn(G, N, K, device="cuda").to(torch.float8_e4m3fn).transpose(-2, -1)
        sa = torch.ones(G * T, device="cuda", dtype=torch.float32); sb = torch.ones(G, N, device="cuda", dtype=torch.float32)
        f = lambda: torch._scaled_grouped_mm(a8, b83, sa, sb, offs=offs, out_dtype=torch.bfloat16)
        s = bench(f); rec["fp8_grouped_s"] = s; rec["fp8_grouped_tflops"] = round(fl / s / 1e12, 1)
    except Exception as e:
        rec["fp8_grouped_err"] = (type(e).__name__ + ": " + str(e))[:200]
    emit(rec)

for name, K, N in MOE:
    for G in (2, 16):
        for T in (256, 1024, 4096, 8192):
            if time.time() - T0 > BUDGET:
                break
            try:
                grouped(name, K, N, G, T)
            except Exception as e:
                emit({"part": "grouped", "name": name, "G": G, "T": T, "err": (type(e).__name__ + ": " + str(e))[:300]})
            torch.cuda.empty_cache()
emit({"part": "done", "smi": smi()})
print("done", round(time.time() - T0, 1), "s")
