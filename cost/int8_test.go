package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestInt8Matmul works one int8 (AQT) projection by hand on one v6e (no
// sustained fraction on one chip): Llama 3 8B's fused gate and up
// projection on one 8,192-token sequence is 2·8192·4096·28672 = 1.924
// TFLOP. The int8 rate is 1,836 TOP/s [GC-v6e] at the bf16 curve's
// fraction 0.77 and t₀ = 3 µs (half point roundSig(0.77·918e12·3e-6) =
// 2.1e9 FLOPs, so t₀ = 2.1e9/(0.77·918e12) = 2.97 µs): 1.364 ms; bf16
// 1.924e12/(0.77·918e12) + 2.97 µs = 2.725 ms; fp8 on the same program
// without an fp8 peak runs at the bf16 rate. Under int8, AQT quantises the
// 4096·28672 weight inside the call at 5 bytes an element
// (aqtWeightBytes): 587 MB at 0.85 of 1,640 GB/s, 0.421 ms more.
func TestInt8Matmul(t *testing.T) {
	m := llama3("8b")
	v6e := profiles.Chip{Name: "v6e", Family: "tpu-v6e", PeakBF16FLOPs: 918e12, PeakInt8OPs: 1836e12,
		HBMBytes: 32e9, HBMBandwidthBytesPerS: 1640e9}
	c := profiles.Cluster{Name: "v6e-1", Chip: v6e, Axes: []profiles.Axis{tpuAxis("x", 1, false)}}
	w := space.Workload{Batch: 1, SeqLen: 8192}
	r, _ := model.LookupFP8Recipe(model.FP8Delayed)
	cm := NewModel(model.MustProgram(m, model.ProgramOptions{FP8: &r}))
	flops := 2.0 * 8192 * 4096 * 28672
	t0 := 2.1e9 / (0.77 * 918e12)
	tests := []struct {
		precision string
		want      float64
	}{
		{space.PrecisionInt8, flops/(0.77*1836e12) + t0 + 5*4096*28672/(0.85*1640e9)},
		{space.PrecisionFP8, flops/(0.77*918e12) + t0},
		{space.PrecisionBF16, flops/(0.77*918e12) + t0}, // the 8-bit program at the bf16 rate
	}
	for _, tt := range tests {
		s := strategy(space.Strategy{MB: 1, Precision: tt.precision})
		est, err := cm.Evaluate(c, w, s, Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		got := -1.0
		for _, op := range est.Ops {
			if op.Pass == "fwd" && strings.Contains(op.Text, "· Win[") {
				got = op.Seconds
				break
			}
		}
		if math.Abs(got-tt.want) > 0.01*tt.want {
			t.Errorf("precision=%s: ffn_in %.4g s, want %.4g s", tt.precision, got, tt.want)
		}
	}
}
