package cost

import (
	"strings"
	"testing"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// sendOf returns the pipeline's SendRecv collective of est.
func sendOf(t *testing.T, est Estimate) Collective {
	t.Helper()
	for _, c := range est.Collectives {
		if c.Op == SendRecv {
			return c
		}
	}
	t.Fatalf("no SendRecv among %d collectives", len(est.Collectives))
	return Collective{}
}

// TestPipelineSlowAxis puts the pipeline's outer part on a node axis of 1
// byte/s: every send crosses some boundary on it, so the send (priced on
// the slowest hop) dominates the step (issue 10: it was priced on the
// innermost, NVLink, axis).
func TestPipelineSlowAxis(t *testing.T) {
	c := gpuCluster("h100-64", chipH100, 64, 450e9, 50e9)
	c.Axes[1].BandwidthBytesPerS = 1
	s, err := space.Parse("tp=4,pp=16,mesh=tp:gpu*4;pp:gpu*2.node*8")
	if err != nil {
		t.Fatal(err)
	}
	m := llama3("8b")
	w := space.Workload{Batch: 16, SeqLen: 8192}
	est, err := evaluate(m, c, w, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	send := sendOf(t, est)
	one := send.Bytes / (1 * 0.9) // 1 B/s at the axis's efficiency 0.9
	t.Logf("step %.3g s, exposed %.3g s, one send %.3g B (%.3g s on the node axis) over %v", est.StepSeconds, est.ExposedCommSeconds, send.Bytes, one, send.Axes)
	if got := send.Seconds / float64(send.Count); got < one {
		t.Errorf("one send takes %.3g s, want at least %.3g s (the node axis)", got, one)
	}
	if est.ExposedCommSeconds < 0.99*est.StepSeconds {
		t.Errorf("exposed communication %.3g s of a %.3g s step: the slow sends should dominate", est.ExposedCommSeconds, est.StepSeconds)
	}
	if strings.Join(send.Axes, ",") != "gpu,node" {
		t.Errorf("send axes %v, want gpu,node", send.Axes)
	}
}

// TestPipelineDCN checks that a pipeline across the slices of 2xv5p-256
// sends at the data-centre network's bandwidth, and that its ramp walks the
// ICI boundaries at ICI speed: of 3 boundaries of pp = z*2.slice*2, one
// crosses the slices.
func TestPipelineDCN(t *testing.T) {
	c, err := profiles.Parse("2xv5p-256")
	if err != nil {
		t.Fatal(err)
	}
	s, err := space.Parse("fsdp=64,pp=4,mesh=fsdp:x*4.y*4.z*4;pp:z*2.slice*2")
	if err != nil {
		t.Fatal(err)
	}
	placed, err := s.Place(c)
	if err != nil {
		t.Fatal(err)
	}
	mesh, err := placed.Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	est, err := evaluate(llama3("8b"), c, space.Workload{Batch: 256, SeqLen: 8192}, placed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	send := sendOf(t, est)
	var ici, dcn space.Group
	for _, g := range mesh.Pipeline {
		if g.Axis.Tier == profiles.DCN {
			dcn = g
		} else {
			ici = g
		}
	}
	want := SendRecvSeconds(send.Bytes, dcn)
	if got := send.Seconds / float64(send.Count); !near(got, want, 1e-9) {
		t.Errorf("one send %.4g s, want %.4g s at DCN bandwidth (ICI would be %.4g s)", got, want, SendRecvSeconds(send.Bytes, ici))
	}
	steady, ramp := PipelineSendSeconds(send.Bytes, mesh.Pipeline)
	if wantRamp := 2*SendRecvSeconds(send.Bytes, ici) + SendRecvSeconds(send.Bytes, dcn); !near(steady, want, 1e-9) || !near(ramp, wantRamp, 1e-9) {
		t.Errorf("PipelineSendSeconds = %.4g, %.4g; want %.4g, %.4g", steady, ramp, want, wantRamp)
	}
}
