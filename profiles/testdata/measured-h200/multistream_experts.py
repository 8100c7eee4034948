#!/usr/bin/env python3
"""Per-expert GEMMs on one stream against four, and the host's cost per call, for
meshplan's per-expert tail (cost.Options.PerExpertGEMMs, docs/formulas.md §3.5).

Transformer Engine's GroupedLinear runs one cuBLAS GEMM per local expert, round-robin
over 4 compute streams (transformer_engine/common/gemm/cublaslt_gemm.cu
multi_stream_cublas_gemm, num_compute_streams = 4 in common/util/multi_stream.cpp,
since TE 1.9). The planner prices n experts at n·t(FLOPs/n) = t(FLOPs) + (n-1)·t0; on
the GPU the four streams can overlap the tails, and what is left may be the host's.
This measures, for MoE expert shapes (Qwen3-30B-A3B 2048x768, GPT-OSS-120B 2880x2880,
DeepSeek-V3 7168x2048, Qwen3-235B 4096x1536) at 256-8192 tokens an expert and 2-32
local experts, in bf16 and fp8 (torch._scaled_mm, e4m3, tensorwise, bf16 out):

  - gpu_1stream_s: the n GEMMs back to back on one stream (CUDA events around them);
  - gpu_4stream_s: the same, round-robin over 4 side streams joined by events, as TE
    forks and joins them;
  - host_s_per_gemm: the launch loop's wall time per GEMM with the GPU kept busy by a
    long kernel first, so no launch waits for the GPU (the host's cost alone);
  - single_s: one GEMM alone (the t(FLOPs/n) the planner prices).

Not yet run (written for a session with a device). One JSON line per measurement under
$OUT/multistream_experts.jsonl; BUDGET seconds (default 240) bounds the sweep.
Command: OUT=... BUDGET=240 python3 multistream_experts.py"""
import time
import torch
from benchlib import Log, bench

LOG = Log("multistream_experts.jsonl", 240)
emit = LOG.emit

def gpu_time(fn):
    return bench(fn, warm=2, reps=7)

SIDE = [torch.cuda.Stream() for _ in range(4)]

def run(gemms, streams):
    """The GEMMs one after another on the current stream (streams 1), or round-robin
    over the side streams, each waiting for the current stream first and joined back
    by events at the end (TE's fork and join)."""
    if streams == 1:
        for g in gemms: g()
        return
    cur = torch.cuda.current_stream()
    start = torch.cuda.Event()
    start.record(cur)
    for s in SIDE[:streams]: s.wait_event(start)
    for i, g in enumerate(gemms):
        with torch.cuda.stream(SIDE[i % streams]): g()
    for s in SIDE[:streams]:
        e = torch.cuda.Event(); e.record(s); cur.wait_event(e)

def host_per_gemm(gemms, streams):
    """Wall time per GEMM of the launch loop while a long kernel keeps the GPU busy."""
    big = torch.empty(8192, 8192, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        for _ in range(8): big @ big  # about 10 ms of queued work on an H100-class GPU
        w = time.perf_counter(); run(gemms, streams); w = time.perf_counter() - w
        torch.cuda.synchronize(); ts.append(w / len(gemms))
    ts.sort(); return ts[len(ts) // 2]

def expert_gemms(n, m, k, nn, fp8):
    xs = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(n)]
    ws = [torch.randn(nn, k, device="cuda", dtype=torch.bfloat16) for _ in range(n)]
    if not fp8:
        return [lambda x=x, w=w: x @ w.t() for x, w in zip(xs, ws)]
    one = torch.ones((), device="cuda")
    x8 = [x.to(torch.float8_e4m3fn) for x in xs]
    w8 = [w.to(torch.float8_e4m3fn) for w in ws]
    return [lambda x=x, w=w: torch._scaled_mm(x, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            for x, w in zip(x8, w8)]

p = torch.cuda.get_device_properties(0)
emit({"part": "env", "gpu": p.name, "sms": p.multi_processor_count, "torch": torch.__version__, "cuda": torch.version.cuda})

SHAPES = {"qwen3_30b_up": (2048, 1536), "qwen3_30b_down": (768, 2048), "gptoss_up": (2880, 5760),
          "gptoss_down": (2880, 2880), "dsv3_up": (7168, 4096), "dsv3_down": (2048, 7168),
          "qwen3_235b_up": (4096, 3072), "qwen3_235b_down": (1536, 4096)}
for fp8 in (False, True):
    for name, (k, nn) in SHAPES.items():
        for m in (256, 1024, 4096, 8192):
            for n in (2, 4, 8, 16, 32):
                if LOG.over():
                    break
                if n * m * (k + nn) * 2 > 8e9:
                    continue
                try:
                    gemms = expert_gemms(n, m, k, nn, fp8)
                    r = {"part": "experts", "shape": name, "dtype": "fp8" if fp8 else "bf16", "tokens": m, "K": k, "N": nn,
                         "experts": n, "single_s": gpu_time(gemms[0]),
                         "gpu_1stream_s": gpu_time(lambda: run(gemms, 1)), "gpu_4stream_s": gpu_time(lambda: run(gemms, 4)),
                         "host_s_per_gemm_1stream": host_per_gemm(gemms, 1), "host_s_per_gemm_4stream": host_per_gemm(gemms, 4)}
                    emit(r)
                    del gemms
                except Exception as ex:  # an fp8 shape cuBLAS refuses, memory
                    emit({"part": "error", "shape": name, "tokens": m, "experts": n, "fp8": fp8, "error": str(ex)[:200]})
                torch.cuda.empty_cache()
emit({"part": "done"})
