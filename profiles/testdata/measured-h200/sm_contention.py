#!/usr/bin/env python3
"""How much a matmul slows while a persistent communication-like kernel holds k SMs:
a Triton kernel of k programs x 512 threads (NCCL's channel blocks run 512-640 threads)
copies a 1 GiB buffer in a loop on a second stream while 40 back-to-back bf16 GEMMs run on
the first; the GEMMs' time against their time alone, per k. One JSON line per measurement."""
import json, os, time
import torch, triton, triton.language as tl

OUT = os.environ.get("OUT", "out"); os.makedirs(OUT, exist_ok=True)
RES = open(os.path.join(OUT, "sm_contention.jsonl"), "w")
T0 = time.time()
def emit(r):
    r["t"] = round(time.time() - T0, 1); RES.write(json.dumps(r) + "\n"); RES.flush(); print(json.dumps(r), flush=True)

@triton.jit
def copy_loop(src, dst, n, iters, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for it in range(iters):
        for start in range(pid * BLOCK, n, nprog * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            m = offs < n
            x = tl.load(src + offs, mask=m)
            tl.store(dst + offs, x, mask=m)

p = torch.cuda.get_device_properties(0)
emit({"part": "env", "gpu": p.name, "sms": p.multi_processor_count, "torch": torch.__version__, "triton": triton.__version__})
N = 1 << 28  # 256M fp32 = 1 GiB
src = torch.randn(N, device="cuda"); dst = torch.empty_like(src)
BLOCK = 4096
s_comm = torch.cuda.Stream(); s_comp = torch.cuda.Stream()

def copy_alone(k, iters):
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s_comm):
        a.record(); copy_loop[(k,)](src, dst, N, iters, BLOCK=BLOCK, num_warps=16); b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / 1e3

shapes = [("sq_8k", 8192, 8192, 8192), ("70b_w13_tp8", 8192, 8192, 7168), ("8b_w2", 8192, 14336, 4096)]
for name, M, K, Nn in shapes:
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16); w = torch.randn(K, Nn, device="cuda", dtype=torch.bfloat16)
    def gemms(n=40):
        for _ in range(n):
            x @ w
    # alone
    with torch.cuda.stream(s_comp):
        gemms(5)
    torch.cuda.synchronize()
    def timed_gemms():
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(s_comp):
            a.record(); gemms(); b.record()
        return a, b
    alone = []
    for _ in range(3):
        a, b = timed_gemms(); torch.cuda.synchronize(); alone.append(a.elapsed_time(b) / 1e3)
    t_alone = sorted(alone)[1]
    emit({"part": "alone", "name": name, "gemms_s": t_alone, "tflops": round(40 * 2 * M * K * Nn / t_alone / 1e12, 1)})
    for k in (4, 8, 16, 24, 32, 64):
        # size the copy loop to outlast the GEMMs: one pass of 2 GiB at about k/132 of 4 TB/s
        one = copy_alone(k, 1)
        iters = max(2, int(2.0 * t_alone / one) + 2)
        res = []
        for _ in range(3):
            torch.cuda.synchronize()
            with torch.cuda.stream(s_comm):
                c0 = torch.cuda.Event(enable_timing=True); c1 = torch.cuda.Event(enable_timing=True)
                c0.record(); copy_loop[(k,)](src, dst, N, iters, BLOCK=BLOCK, num_warps=16); c1.record()
            time.sleep(0.002)  # let the copy kernel take its SMs first
            a, b = timed_gemms()
            torch.cuda.synchronize()
            res.append((a.elapsed_time(b) / 1e3, c0.elapsed_time(c1) / 1e3))
        res.sort()
        t_with, t_copy = res[1]
        emit({"part": "with_copy", "name": name, "k": k, "gemms_s": t_with, "slowdown": round(t_with / t_alone - 1, 4),
              "k_over_sms": round(k / p.multi_processor_count, 4), "copy_pass_alone_s": one,
              "copy_GBps_alone": round(2 * 4 * N / one / 1e9, 1), "copy_iters": iters, "copy_s": t_copy})
    del x, w
    torch.cuda.empty_cache()
emit({"part": "done"})
