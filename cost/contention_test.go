package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/space"
)

// TestCollectiveSMShare checks the share of the SMs NCCL's collectives
// take per family: 16 of an H100's 132, 24 of an A100's 108, 32 of a
// B200's 148, none on a TPU.
func TestCollectiveSMShare(t *testing.T) {
	for _, c := range []struct {
		family string
		sms    int
		want   float64
	}{
		{"nvidia-hopper", 132, 16.0 / 132},
		{"nvidia-ampere", 108, 24.0 / 108},
		{"nvidia-blackwell", 148, 32.0 / 148},
		{"amd-cdna3", 304, 16.0 / 304},
		{"tpu-v5p", 0, 0},
		{"nvidia-hopper", 8, 1},
	} {
		if got := collectiveSMShare(c.family, c.sms); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s with %d SMs: share %g, want %g", c.family, c.sms, got, c.want)
		}
	}
}

// TestCollectiveSMSeconds checks the term in a whole step: each overlapped
// load keeps (1 - share) of what it hid without the term, so the SMs' cost
// is share/(1 - share) of what stays hidden, summed over the weight
// traffic, the gradient reduction, the parameter gather and the pipeline
// sends; a TPU step has none.
func TestCollectiveSMSeconds(t *testing.T) {
	for _, c := range []struct {
		model, cluster, spec string
		share                float64
	}{
		{"llama3-8b", "h100-64", "fsdp=64", 16.0 / 132},
		{"llama3-70b", "h100-512", "dp=8,zero=1,tp=8,pp=8,mb=1", 16.0 / 132},
		{"llama3-8b", "a100-64", "dp=64,zero=1", 24.0 / 108},
		{"llama3-8b", "v5p-64", "fsdp=32", 0},
	} {
		m, cl := presets(t, c.model, c.cluster)
		est, err := evaluate(m, cl, space.Workload{Batch: 512, SeqLen: 4096}, parseStrategy(t, c.spec), Options{Trace: true})
		if err != nil {
			t.Fatalf("%s on %s: %v", c.spec, c.cluster, err)
		}
		p := est.Passes
		hidden := p.WeightTrafficSeconds - p.WeightTrafficExposedSeconds + p.GradReduceSeconds - p.GradReduceExposedSeconds +
			p.ParamGatherSeconds - p.ParamGatherExposedSeconds
		if p.PipelineSends > 0 {
			hidden += p.PipelineSends*p.PipelineSendSeconds - p.PipelineSendExposedSeconds
		}
		want := 0.0
		if c.share > 0 {
			want = c.share / (1 - c.share) * hidden
		}
		if got := est.CollectiveSMSeconds; math.Abs(got-want) > 1e-9*max(1, want) || (c.share > 0 && got <= 0) {
			t.Errorf("%s on %s: collective SMs %g s, want %g s (hidden %g s)", c.spec, c.cluster, got, want, hidden)
		}
		if est.CollectiveSMSeconds > est.ExposedCommSeconds {
			t.Errorf("%s on %s: collective SMs %g s above the exposed communication %g s", c.spec, c.cluster, est.CollectiveSMSeconds, est.ExposedCommSeconds)
		}
	}
}
