"""PyTorch SDPA's flash backend (FlashAttention-2) against its cuDNN backend on one GPU, causal and
in the non-causal chunk shapes of load-balanced ring attention, head_dim 128, 32 query heads with
K/V repeated from 8 (torchtitan's repeat_kv before PyTorch's enable_gqa path).

Writes $OUT/flash-backends.jsonl: one line per backend and shape with the forward and backward
seconds (median of CUDA-event timings) and their rates in TFLOP/s, counting 4*Lq*Lk*H*D forward
FLOPs (half of it causal) and 2.5 times that backward. Usage: python3 flash_backends.py (BUDGET
seconds, default 150)."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from benchlib import Log, bench

H, KV, D = 32, 8, 128
BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def shapes():
    # (batch, query tokens, key tokens, causal): whole causal sequences at 64K tokens a call or
    # more, then ring attention's off-diagonal calls (half a rank's queries against a whole chunk,
    # a whole rank's queries against half a chunk) at 32K tokens a rank.
    for s in (4096, 8192, 16384, 32768, 65536, 131072):
        yield max(1, 65536 // s), s, s, True
    yield 1, 16384, 32768, False
    yield 1, 32768, 16384, False
    yield 1, 16384, 16384, False


def main():
    log = Log("flash-backends.jsonl", 150)
    for b, lq, lk, causal in shapes():
        q = torch.randn(b, H, lq, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(b, KV, lk, D, device="cuda", dtype=torch.bfloat16).repeat_interleave(H // KV, 1).requires_grad_()
        v = torch.randn(b, KV, lk, D, device="cuda", dtype=torch.bfloat16).repeat_interleave(H // KV, 1).requires_grad_()
        fl = 4.0 * b * lq * lk * H * D * (0.5 if causal else 1.0)
        for name, be in BACKENDS.items():
            if log.over(0.9):
                log.emit({"part": "flash", "skipped": "budget", "lq": lq})
                return
            rec = {"part": "flash", "backend": name, "batch": b, "lq": lq, "lk": lk, "causal": causal}
            try:
                with sdpa_kernel([be]):
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    g = torch.randn_like(out)
                    reps = 10 if fl < 2e13 else 4
                    fwd = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), warm=2, reps=reps)

                    def fb():
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        o.backward(g)
                    both = bench(fb, warm=2, reps=reps)
                bwd = both - fwd
                rec.update({"fwd_s": fwd, "bwd_s": bwd, "fwd_tflops": round(fl / fwd / 1e12, 1),
                            "bwd_tflops": round(2.5 * fl / bwd / 1e12, 1)})
            except Exception as e:  # a backend that refuses the shape is a result, not a failure
                rec["error"] = str(e).splitlines()[0][:160]
            q.grad = k.grad = v.grad = None
            log.emit(rec)
            print(rec, flush=True)
        del q, k, v
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
