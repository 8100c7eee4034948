package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestFP8Matmul works one fp8 projection and the fp8 weight casts by hand
// on one H100 (no sustained fraction on one chip): Llama 3 8B's fused gate
// and up projection on one 8,192-token sequence is 2·8192·4096·28672 =
// 1.924 TFLOP, which at 0.69 of the 1,979 TFLOP/s fp8 peak plus t₀ = 37 µs
// takes 1.446 ms (profiles.Efficiency.MatmulFP8Seconds: gemm-fp8.csv and the
// H200 sweep of profiles/testdata/measured-h200); in
// bf16, at 0.705 of 989 TFLOP/s plus 25 µs, 2.784 ms.
func TestFP8Matmul(t *testing.T) {
	m := llama3("8b")
	h100 := chipH100
	h100.PeakFP8FLOPs = 1979e12
	c := gpuCluster("h100-1", h100, 1, 450e9, 50e9)
	w := space.Workload{Batch: 1, SeqLen: 8192}
	s := strategy(space.Strategy{MB: 1})
	opTime := func(o model.ProgramOptions) (float64, Estimate) {
		t.Helper()
		return ffnInSeconds(t, model.MustProgram(m, o), c, w, s)
	}
	flops := 2.0 * 8192 * 4096 * 28672
	r, _ := model.LookupFP8Recipe(model.FP8Delayed)
	fp8, est8 := opTime(model.ProgramOptions{FP8: &r})
	bf16, est16 := opTime(model.ProgramOptions{})
	if want := flops/(0.69*1979e12) + 37e-6; math.Abs(fp8-want) > 0.01*want {
		t.Errorf("fp8 ffn_in %.4g s, want %.4g s", fp8, want)
	}
	if want := flops/(0.705*989e12) + 25e-6; math.Abs(bf16-want) > 0.01*want {
		t.Errorf("bf16 ffn_in %.4g s, want %.4g s", bf16, want)
	}
	// The fp8 step adds memory-bound work: the quantisation passes and the
	// weights' fp8 copies, once per step on one chip: (2 + 1 + 1) bytes for
	// each of the 6.98B projection parameters at 0.76 of 3.35 TB/s: 11.0 ms.
	proj := 32.0 * (4096*(4096+2*1024) + 4096*4096 + 3*4096*14336)
	cast := 4 * proj / (0.76 * 3350e9)
	if d := est8.MemoryBoundSeconds - est16.MemoryBoundSeconds; d < cast {
		t.Errorf("fp8 adds %.4g s of memory-bound work, want at least the weight casts' %.4g s", d, cast)
	}
	if est8.MatmulSeconds >= 0.6*est16.MatmulSeconds {
		t.Errorf("fp8 matmuls %.4g s against bf16 %.4g s: want below 0.6 of it", est8.MatmulSeconds, est16.MatmulSeconds)
	}
	// A chip without an fp8 peak runs the same program at its bf16 rate.
	plain := gpuCluster("h100-1", chipH100, 1, 450e9, 50e9)
	e, err := NewModel(model.MustProgram(m, model.ProgramOptions{FP8: &r})).Evaluate(plain, w, s, Options{})
	if err != nil || math.Abs(e.MatmulSeconds-est16.MatmulSeconds) > 1e-9*est16.MatmulSeconds {
		t.Errorf("fp8 program without an fp8 peak: matmuls %v s (%v), want bf16's %v s", e.MatmulSeconds, err, est16.MatmulSeconds)
	}
}

// TestNVFP4Matmul works the same projection by hand on one B200 under the
// nvfp4 recipe: 1.924 TFLOP at 0.53 of the 9,000 TFLOP/s fp4 peak plus the
// 62 µs tail (profiles.Efficiency.MatmulFP4Seconds) takes 0.465 ms, against
// 0.681 ms at MXFP8's 0.69 of 4,500 (1.46 times). The weights' fp4 copies
// and their transposes are 0.5625 bytes an element each, so a weight's
// quantisation moves 2 + 2·0.5625 bytes, against MXFP8's 2 + 2. A chip
// without an fp4 peak cannot run the recipe (space.Limits.FP4).
func TestNVFP4Matmul(t *testing.T) {
	m := llama3("8b")
	b200 := profiles.Chip{Name: "b200", Family: "nvidia-blackwell", PeakBF16FLOPs: 2250e12, PeakFP8FLOPs: 4500e12, PeakFP4FLOPs: 9000e12,
		HBMBytes: 191.5e9, HBMBandwidthBytesPerS: 8000e9, FP8AnyLayout: true}
	c := gpuCluster("b200-1", b200, 1, 900e9, 50e9)
	w := space.Workload{Batch: 1, SeqLen: 8192}
	s := strategy(space.Strategy{MB: 1, Precision: space.PrecisionFP8})
	opTime := func(name string) (float64, Estimate) {
		t.Helper()
		r, _ := model.LookupFP8Recipe(name)
		return ffnInSeconds(t, model.MustProgram(m, model.ProgramOptions{FP8: &r}), c, w, s)
	}
	flops := 2.0 * 8192 * 4096 * 28672
	fp4, est4 := opTime(model.FP4NV)
	fp8, est8 := opTime(model.FP8MX)
	if want := (flops + 3.0e11) / (0.53 * 9000e12); math.Abs(fp4-want) > 0.01*want {
		t.Errorf("nvfp4 ffn_in %.4g s, want %.4g s", fp4, want)
	}
	if want := (flops + 1.9e11) / (0.69 * 4500e12); math.Abs(fp8-want) > 0.01*want {
		t.Errorf("mxfp8 ffn_in %.4g s, want %.4g s", fp8, want)
	}
	if est4.MatmulSeconds >= est8.MatmulSeconds/1.3 {
		t.Errorf("nvfp4 matmuls %.4g s against mxfp8's %.4g s: want at least 1.3 times faster", est4.MatmulSeconds, est8.MatmulSeconds)
	}
}

// TestScoreRate: a Blackwell chip whose special-function units run
// ScoreRate times faster (Blackwell Ultra's 2.14) spends that much less on
// its attention's exponentials and the same on its matmuls. On one chip
// (no sustained fraction) a head_dim-128 score costs 512/(0.83 x 2.25e15)
// = 0.274 ps + 0.2 ps forward and 1280/(0.67 x 2.25e15) = 0.849 ps + 0.34
// ps backward, so the attention time falls to between (0.274 + 0.2/2.14)/
// 0.474 = 0.775 and (0.849 + 0.34/2.14)/1.189 = 0.848 of the B200's.
func TestScoreRate(t *testing.T) {
	m := llama3("8b")
	b200 := profiles.Chip{Name: "b200", Family: "nvidia-blackwell", PeakBF16FLOPs: 2250e12, PeakFP8FLOPs: 4500e12,
		HBMBytes: 191.5e9, HBMBandwidthBytesPerS: 8000e9}
	ultra := b200
	ultra.Name, ultra.ScoreRate = "b300-like", 10.7/5
	w := space.Workload{Batch: 1, SeqLen: 8192}
	s := strategy(space.Strategy{MB: 1})
	attention := func(c profiles.Chip) float64 {
		t.Helper()
		est, err := NewModel(model.MustProgram(m, model.ProgramOptions{})).Evaluate(gpuCluster(c.Name+"-1", c, 1, 900e9, 50e9), w, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return est.AttentionSeconds
	}
	base, fast := attention(b200), attention(ultra)
	lo := (512/(0.83*2250e12) + 0.2e-12/2.14) / (512/(0.83*2250e12) + 0.2e-12)
	hi := (1280/(0.67*2250e12) + 0.34e-12/2.14) / (1280/(0.67*2250e12) + 0.34e-12)
	if r := fast / base; r < lo-1e-3 || r > hi+1e-3 {
		t.Errorf("attention %.4g s against %.4g s: ratio %.4f, want between %.4f and %.4f", fast, base, r, lo, hi)
	}
}

// ffnInSeconds evaluates program p's strategy s with a trace and returns
// the forward time of its fused gate and up projection (· Win[) and the
// estimate.
func ffnInSeconds(t *testing.T, p *model.Program, c profiles.Cluster, w space.Workload, s space.Strategy) (float64, Estimate) {
	t.Helper()
	est, err := NewModel(p).Evaluate(c, w, s, Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range est.Ops {
		if op.Pass == "fwd" && strings.Contains(op.Text, "· Win[") {
			return op.Seconds, est
		}
	}
	t.Fatal("no ffn_in op in the trace")
	return 0, est
}
