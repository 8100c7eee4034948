"""Shared by the measured-h200 scripts: a JSON-lines log under $OUT with the seconds since
start on each line, the sweep's time budget ($BUDGET), and the median of CUDA-event timings."""
import json, os, time
import torch


class Log:
    """One JSON object a line in $OUT/name, each with "t", the seconds since the log opened."""

    def __init__(self, name, budget_s):
        out = os.environ.get("OUT", "out")
        os.makedirs(out, exist_ok=True)
        self.f = open(os.path.join(out, name), "w")
        self.t0 = time.time()
        self.budget = float(os.environ.get("BUDGET", str(budget_s)))

    def emit(self, r):
        r["t"] = round(time.time() - self.t0, 1)
        self.f.write(json.dumps(r) + "\n")
        self.f.flush()

    def over(self, share=1.0):
        """Whether share of the budget is spent."""
        return time.time() - self.t0 > self.budget * share


def bench(fn, warm=3, reps=10):
    """The median over reps of one call of fn between two CUDA events, after warm calls."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    ts.sort()
    return ts[len(ts) // 2]
