#!/usr/bin/env python3
"""What one local expert costs beyond its GEMMs, for meshplan's per-expert tail
(cost.Options.PerExpertGEMMs; profiles/efficiency.go's t0 of 24 us bf16, 37 us fp8).

An eager grouped MLP of n local experts (SwiGLU: up [K -> 2N], down [N -> K]), forward
and backward by hand, one expert after another as Transformer Engine's GroupedLinear
issues them, in three forms:

  - gemm:  the six GEMMs per expert only (fwd up and down; dgrad and wgrad of both),
           bf16, inputs prepared beforehand: the GEMMs' own time;
  - bf16:  the same with the layer's per-expert eager work around them (the SwiGLU
           and its gradient, the split of the tokens and the concatenation of the
           outputs);
  - fp8:   as bf16, with each GEMM operand cast to e4m3 per expert by a dynamic
           per-tensor scale (amax, scale, cast: three kernels an operand), the
           gradients too, and torch._scaled_mm (TN; a transposed copy where the
           layout needs one), as an unfused per-tensor recipe runs.

For each, at 256 to 8,192 tokens an expert and 4 to 32 experts: the GPU time of the whole
layer (CUDA events, launched as the layer would be), the same with the host's launches
queued ahead behind a long matmul (the GPU's time alone), and the host's wall time. The
per-expert overhead is (layer - gemm)/n. One JSON line per record under
$OUT/expert_layer.jsonl; BUDGET seconds (default 150) bound the sweep.
Command: OUT=... BUDGET=150 python3 expert_layer.py (with benchlib.py beside it)."""
import time
import torch
import torch.nn.functional as F
from benchlib import Log

LOG = Log("expert_layer.jsonl", 150)
emit = LOG.emit
E4M3 = torch.float8_e4m3fn
FP8_MAX = 448.0


def cast(x):
    """Dynamic per-tensor fp8 cast: amax, scale, scaled cast (three kernels)."""
    amax = x.abs().max().float().clamp(min=1e-12)
    scale = FP8_MAX / amax
    return (x.float() * scale).to(E4M3), scale.reciprocal()


def mm8(a, b_t):
    """a[M,K] @ b_t[N,K].T in fp8 with bf16 out; both cast here."""
    a8, sa = cast(a)
    b8, sb = cast(b_t)
    return torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def mm(a, b_t, fp8):
    if fp8:
        return mm8(a, b_t)
    return a @ b_t.t()


class Layer:
    def __init__(self, n, m, k, nn):
        self.n, self.m = n, m
        self.x = torch.randn(n * m, k, device="cuda", dtype=torch.bfloat16)
        self.dy = torch.randn(n * m, k, device="cuda", dtype=torch.bfloat16)
        # Weights as [out, in] (nn.Linear's layout): up [2N, K], down [K, N].
        self.w1 = [torch.randn(2 * nn, k, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(n)]
        self.w2 = [torch.randn(k, nn, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(n)]
        # For the GEMM-only form: every intermediate prepared once.
        self.h = torch.randn(m, 2 * nn, device="cuda", dtype=torch.bfloat16)
        self.a = torch.randn(m, nn, device="cuda", dtype=torch.bfloat16)

    def gemm_only(self):
        m = self.m
        for i in range(self.n):
            x, dy = self.x[i * m:(i + 1) * m], self.dy[i * m:(i + 1) * m]
            self.h = x @ self.w1[i].t()                 # fwd up
            y = self.a @ self.w2[i].t()                 # fwd down
            da = dy @ self.w2[i]                        # dgrad down
            dw2 = dy.t() @ self.a                       # wgrad down
            dx = self.h @ self.w1[i]                    # dgrad up
            dw1 = self.h.t() @ x                        # wgrad up
        return y, da, dw2, dx, dw1

    def layer(self, fp8):
        m = self.m
        xs = torch.split(self.x, [m] * self.n)
        dys = torch.split(self.dy, [m] * self.n)
        ys, dxs = [], []
        for i in range(self.n):
            x, dy = xs[i], dys[i]
            h = mm(x, self.w1[i], fp8)                  # fwd up [m, 2N]
            g, u = h.chunk(2, dim=-1)
            a = F.silu(g) * u                           # SwiGLU
            ys.append(mm(a, self.w2[i], fp8))           # fwd down [m, K]
            da = mm(dy, self.w2[i].t().contiguous() if fp8 else self.w2[i].t(), fp8)  # dgrad down [m, N]
            dw2 = mm(dy.t().contiguous(), a.t().contiguous(), fp8) if fp8 else dy.t() @ a  # wgrad down [K, N]
            sg = torch.sigmoid(g)
            dg = da * u * sg * (1 + g * (1 - sg))      # SwiGLU's gradient
            du = da * F.silu(g)
            dh = torch.cat([dg, du], dim=-1)
            dxs.append(mm(dh, self.w1[i].t().contiguous() if fp8 else self.w1[i].t(), fp8))  # dgrad up [m, K]
            dw1 = mm(dh.t().contiguous(), x.t().contiguous(), fp8) if fp8 else dh.t() @ x    # wgrad up [2N, K]
        return torch.cat(ys), torch.cat(dxs), dw1, dw2


BIG = None


def timed(fn, queued):
    """GPU time of fn between two events (median of 5 after 2 warm-ups). With queued,
    a long matmul is launched first so the host's launches run ahead of the GPU and the
    events time the GPU's work alone; the host's wall time of the launches is returned too."""
    global BIG
    if BIG is None:
        BIG = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    gpu, host = [], []
    for _ in range(5):
        if queued:
            for _ in range(24):
                BIG @ BIG
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        w = time.perf_counter()
        fn()
        w = time.perf_counter() - w
        b.record()
        torch.cuda.synchronize()
        gpu.append(a.elapsed_time(b) / 1e3)
        host.append(w)
    gpu.sort()
    host.sort()
    return gpu[2], host[2]


p = torch.cuda.get_device_properties(0)
emit({"part": "env", "gpu": p.name, "sms": p.multi_processor_count, "torch": torch.__version__, "cuda": torch.version.cuda})

SHAPES = {"qwen3_30b": (2048, 768), "gptoss": (2880, 2880), "qwen3_235b": (4096, 1536), "dsv3": (7168, 2048)}
for name, (k, nn) in SHAPES.items():
    for m in (256, 1024, 4096, 8192):
        for n in (4, 16, 32):
            if LOG.over():
                break
            if n * m * (k + 2 * nn) * 2 * 6 > 24e9:
                continue
            try:
                L = Layer(n, m, k, nn)
                r = {"part": "layer", "shape": name, "K": k, "N": nn, "tokens": m, "experts": n,
                     "gemm_flops": 3 * 2 * m * k * 3 * nn * n}
                for form, fn in (("gemm", L.gemm_only), ("bf16", lambda: L.layer(False)), ("fp8", lambda: L.layer(True))):
                    r[form + "_s"], r[form + "_host_s"] = timed(fn, False)
                    r[form + "_gpu_s"], _ = timed(fn, True)
                emit(r)
                del L
            except Exception as ex:  # memory, a layout _scaled_mm refuses
                emit({"part": "error", "shape": name, "tokens": m, "experts": n, "error": str(ex)[:300]})
            torch.cuda.empty_cache()
emit({"part": "done"})
