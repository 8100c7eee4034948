package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestGatherCopyOut checks Comm.GatherCopyOut, FSDP2's copy of each
// all-gather out of its flat buffer into the parameters on the compute
// stream, against hand-computed values. Llama 3 8B (8,030,261,248
// parameters, every weight sharded over fsdp) on 8 H100s under autocast
// (bf16 weights, 2 bytes): a gather copies 2 × 2 × 8,030,261,248 =
// 32,121,044,992 bytes at 3.35e12 × 0.76 B/s, 12.616 ms; one forward and
// one backward gather a micro-batch, two micro-batches: 50.46 ms more
// compute. Under a pipeline of 4 stages whose FSDP keeps each stage
// gathered, one gather a step of the last stage's 2,270,236,672
// parameters (8 layers of 218,112,000, the final norm's 4,096 and the
// output layer's 525,336,576), the busiest; per micro-batch without it.
// Without FSDP nothing is gathered, so nothing moves.
func TestGatherCopyOut(t *testing.T) {
	m, c := presets(t, "llama3-8b", "h100-8")
	const params, lastStage = 8030261248, 2270236672
	copySeconds := func(n float64) float64 { return 2 * 2 * n / (c.Chip.HBMBandwidthBytesPerS * 0.76) }
	gather, stage := copySeconds(params), copySeconds(lastStage)
	pr := model.AutocastPrecision()
	w := space.Workload{Batch: 16, SeqLen: 4096}
	for _, tt := range []struct {
		name, spec string
		unsharded  bool
		want       float64
	}{
		{"fsdp, two micro-batches", "fsdp=8,mb=1", false, 2 * 2 * gather},
		{"fsdp and dp, two micro-batches", "dp=2,fsdp=4,mb=1", false, 2 * 2 * gather},
		{"pipeline, stage kept gathered", "fsdp=2,pp=4,mb=1", true, stage},
		{"pipeline, gathered per micro-batch", "fsdp=2,pp=4,mb=1", false, 8 * 2 * stage},
		{"no fsdp", "dp=8,mb=1", false, 0},
	} {
		o := model.ProgramOptions{Precision: pr}
		o.Precision.PipelineUnsharded = tt.unsharded
		p := program(m, o)
		s := parseStrategy(t, tt.spec)
		off, err := Evaluate(p, c, w, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		on, err := Evaluate(p, c, w, s, Options{Comm: Comm{GatherCopyOut: true}})
		if err != nil {
			t.Fatal(err)
		}
		got := on.ComputeSeconds - off.ComputeSeconds
		if math.Abs(got-tt.want) > 1e-9+1e-6*tt.want {
			t.Errorf("%s: copy-out adds %.6g s of compute, want %.6g", tt.name, got, tt.want)
		}
		if d := on.MemoryBoundSeconds - off.MemoryBoundSeconds; math.Abs(d-got) > 1e-12 {
			t.Errorf("%s: memory-bound time moved %.6g s, compute %.6g s; want equal", tt.name, d, got)
		}
	}
}
