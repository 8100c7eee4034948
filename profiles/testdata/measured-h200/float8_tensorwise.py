"""A linear layer's forward and backward in bf16 against fp8 with dynamic per-tensor (tensorwise)
scaling, as torchao's float8 training runs it under torch.compile, at the projection shapes of
torchtitan's Llama 3 runs (8B and 70B at tensor-parallel degree 8, 8B unsharded).

The fp8 path, written here after torchao's recipe (read, not imported: torchao is not installed on
the measuring machine): each operand's absolute maximum, a scale of the format's largest value over
it, a saturating cast (e4m3 for input and weight, e5m2 for the output gradient); the forward
torch._scaled_mm with fast accumulation; the backward recasts input and weight from their bf16
copies in the transposed layouts its two matmuls need (torchao keeps the high-precision tensors for
the backward) and runs both without fast accumulation. The casts are compiled (inductor fuses each
reduction and cast); "gemm" timings are the matmuls alone on operands cast beforehand.

Writes $OUT/float8-tensorwise.jsonl: one line per shape with bf16 and fp8 forward and backward
seconds, whole and matmul-only, and the compiled casts alone (cast_x_s: the input, absolute maximum
and e4m3 copy; cast_go_s: the output gradient, e5m2 in both layouts). Usage: python3 float8_tensorwise.py (BUDGET seconds, default 200)."""
import torch

from benchlib import Log, bench

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2

# (set, name, tokens M, in features K, out features N): y[M,N] = x[M,K] @ W[N,K]^T. torchtitan's
# Llama runs wq, wk, wv and w1, w3 as separate projections (wk and wv share a shape).
SHAPES = [
    ("8b_tp8", "wq", 98304, 4096, 512), ("8b_tp8", "wkv", 98304, 4096, 128),
    ("8b_tp8", "wo", 98304, 512, 4096), ("8b_tp8", "w13", 98304, 4096, 1792),
    ("8b_tp8", "w2", 98304, 1792, 4096),
    ("70b_tp8", "wq", 131072, 8192, 1024), ("70b_tp8", "wkv", 131072, 8192, 128),
    ("70b_tp8", "wo", 131072, 1024, 8192), ("70b_tp8", "w13", 131072, 8192, 3584),
    ("70b_tp8", "w2", 131072, 3584, 8192),
    ("8b_tp1", "wq", 16384, 4096, 4096), ("8b_tp1", "wkv", 16384, 4096, 1024),
    ("8b_tp1", "w13", 16384, 4096, 14336), ("8b_tp1", "w2", 16384, 14336, 4096),
]


def cast(t, dtype):
    """Tensorwise dynamic scaling: the fp8 copy and the inverse scale _scaled_mm multiplies by."""
    fmax = torch.finfo(dtype).max
    amax = t.abs().amax().float().clamp(min=1e-12)
    scale = fmax / amax
    return (t.float() * scale).clamp(-fmax, fmax).to(dtype), scale.reciprocal()


def fwd8(x, w):
    x8, sx = cast(x, E4M3)
    w8, sw = cast(w, E4M3)
    return torch._scaled_mm(x8, w8.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16, use_fast_accum=True)


def bwd8(x, w, go):
    g8, sg = cast(go, E5M2)
    w8, sw = cast(w, E4M3)
    x8, sx = cast(x, E4M3)
    # dx[M,K] = go[M,N] @ W[N,K]: W as the column-major right operand.
    dx = torch._scaled_mm(g8, w8.t().contiguous().t(), scale_a=sg, scale_b=sw, out_dtype=torch.bfloat16)
    # dW[N,K] = go^T[N,M] @ x[M,K]: go transposed row-major, x column-major.
    dw = torch._scaled_mm(g8.t().contiguous(), x8.t().contiguous().t(), scale_a=sg, scale_b=sx, out_dtype=torch.bfloat16)
    return dx, dw


def cast_x(x):
    return cast(x, E4M3)


def cast_go(go):
    g8, sg = cast(go, E5M2)
    return g8, g8.t().contiguous(), sg


def main():
    log = Log("float8-tensorwise.jsonl", 200)
    # Static shapes, compiled afresh for each (as torchtitan's compiled blocks are); dynamo's
    # default limit of 8 recompilations a function would fall back to eager after 8 shapes.
    for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 1024)
    compiled = True
    try:
        f8, b8 = torch.compile(fwd8, dynamic=False), torch.compile(bwd8, dynamic=False)
        cx, cg = torch.compile(cast_x, dynamic=False), torch.compile(cast_go, dynamic=False)
        x = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        f8(x, x); b8(x, x, x); cx(x); cg(x)
    except Exception as e:
        log.emit({"part": "float8", "compile_error": str(e).splitlines()[0][:160]})
        f8, b8, cx, cg, compiled = fwd8, bwd8, cast_x, cast_go, False
    for group, name, m, k, n in SHAPES:
        if log.over(0.9):
            log.emit({"part": "float8", "skipped": "budget", "set": group, "name": name})
            return
        rec = {"part": "float8", "set": group, "name": name, "M": m, "K": k, "N": n, "compiled": compiled}
        try:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
            go = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
            rec["bf16_fwd_s"] = bench(lambda: x @ w.t())
            rec["bf16_bwd_s"] = bench(lambda: (go @ w, go.t() @ x))
            rec["fp8_fwd_s"] = bench(lambda: f8(x, w))
            rec["fp8_bwd_s"] = bench(lambda: b8(x, w, go))
            # The casts alone: the input's (once per forward, and again in the backward) and the
            # output gradient's in both layouts the backward's matmuls read.
            rec["cast_x_s"] = bench(lambda: cx(x))
            rec["cast_go_s"] = bench(lambda: cg(go))
            x8, sx = cast(x, E4M3)
            w8, sw = cast(w, E4M3)
            g8, sg = cast(go, E5M2)
            wc, gt, xc = w8.t().contiguous().t(), g8.t().contiguous(), x8.t().contiguous().t()
            rec["fp8_gemm_fwd_s"] = bench(lambda: torch._scaled_mm(x8, w8.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16, use_fast_accum=True))
            rec["fp8_gemm_bwd_s"] = bench(lambda: (torch._scaled_mm(g8, wc, scale_a=sg, scale_b=sw, out_dtype=torch.bfloat16),
                                                   torch._scaled_mm(gt, xc, scale_a=sg, scale_b=sx, out_dtype=torch.bfloat16)))
            fl = 2.0 * m * k * n
            rec["bf16_fwd_tflops"] = round(fl / rec["bf16_fwd_s"] / 1e12, 1)
            rec["fp8_gemm_fwd_tflops"] = round(fl / rec["fp8_gemm_fwd_s"] / 1e12, 1)
            rec["speedup_fwd_bwd"] = round((rec["bf16_fwd_s"] + rec["bf16_bwd_s"]) / (rec["fp8_fwd_s"] + rec["fp8_bwd_s"]), 3)
            del x, w, go, x8, w8, g8, wc, gt, xc
        except Exception as e:
            rec["error"] = str(e).splitlines()[0][:160]
        log.emit(rec)
        print(rec, flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
