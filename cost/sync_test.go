package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestSyncLoadsExposed checks the exposure of the weight traffic and of the
// once-per-step data-parallel collectives against hand-computed values:
// the gradient reduction hides only under what the last backward's weight
// traffic leaves of that backward, and the last backward's weight traffic
// only under that backward. Under the interleaved schedule each chunk
// reduces and gathers on its own. The SMs the collectives' kernels hold
// cost their share of the hidden seconds.
func TestSyncLoadsExposed(t *testing.T) {
	for _, c := range []struct {
		name                      string
		l                         syncLoads
		weights, grad, param, sms float64
	}{
		{
			// ZeRO-1 over many nodes, one micro-batch: 0.9 - 0.85·0.6 and
			// 0.5 - 0.85·0.3 exposed.
			name: "zero1 one micro-batch",
			l:    syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, grad: 0.9, gradEdge: 0.03, param: 0.5, paramEdge: 0.02},
			grad: 0.39, param: 0.245,
		},
		{
			// The same with an eighth of the SMs held by the collectives:
			// the reduction's hidden 0.9 - 0.39 = 0.51 s costs 0.06375 s,
			// the gather's hidden 0.5 - 0.245 = 0.255 s costs 0.031875 s.
			name: "zero1 one micro-batch, an eighth of the SMs held",
			l:    syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, share: 0.125, grad: 0.9, gradEdge: 0.03, param: 0.5, paramEdge: 0.02},
			grad: 0.45375, param: 0.276875, sms: 0.095625,
		},
		{
			// Four micro-batches of FSDP weight traffic, 0.3 s each, with
			// an eighth of the SMs held: the edge 0.01 exposed, the other
			// 1.19 s hidden cost 0.14875 s.
			name:    "fsdp four micro-batches, an eighth of the SMs held",
			l:       syncLoads{m: 4, fwd: 0.3, bwd: 0.6, compute: 3.6, wof: 0.85, gof: 0.85, share: 0.125, weights: 0.3, weightsBwd: 0.3, weightEdge: 0.01},
			weights: 0.15875, sms: 0.14875,
		},
		{
			// A reduction shorter than 0.85 of the backward: the last bucket only.
			name: "hidden but the last bucket",
			l:    syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, grad: 0.2, gradEdge: 0.03},
			grad: 0.03,
		},
		{
			// Hybrid sharding, one micro-batch: the backward's 0.6 s of
			// weight traffic leaves 0.09 s exposed past 0.85·0.6 = 0.51
			// (the forward's 0.2 s hide under 0.255), more than the pooled
			// 0.8 - 0.85·0.9 = 0.035; no window is left for the 0.4 s
			// all-reduce over the replicas.
			name:    "hsdp one micro-batch",
			l:       syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, weights: 0.8, weightsBwd: 0.6, weightEdge: 0.02, grad: 0.4, gradEdge: 0.01},
			weights: 0.09, grad: 0.4,
		},
		{
			// Four micro-batches of ZeRO-2 reductions, 0.3 s each: pooled
			// 1.2 - 0.85·3.6 < 0 and 0.3 < 0.85·0.6, so the edge only.
			name:    "zero2 four micro-batches",
			l:       syncLoads{m: 4, fwd: 0.3, bwd: 0.6, compute: 3.6, wof: 0.85, gof: 0.85, weights: 0.3, weightsBwd: 0.3, weightEdge: 0.01},
			weights: 0.01,
		},
		{
			// The parameter gather after the forward's 0.2 s of gathers:
			// window 0.85·0.3 - 0.2 = 0.055, 0.3 - 0.055 exposed; the
			// gathers themselves 0.2 - 0.255 < 0, the pooled 0.2 - 0.85·0.9
			// < 0: the edge.
			name:    "param gather after fsdp gathers",
			l:       syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, weights: 0.2, weightEdge: 0.015, param: 0.3, paramEdge: 0.01},
			weights: 0.015, param: 0.245,
		},
		{
			// The interleaved schedule, 4 chunks run in groups of 4
			// micro-batches: each chunk reduces 0.9/4 = 0.225 s; the last
			// one hides 0.85·0.6/4 = 0.1275 under its own backward
			// (0.0975 exposed), the others under the next chunk's group,
			// 0.85·4·0.6/4 = 0.51 > 0.225. The gathers: 0.5/4 = 0.125, the
			// first one less 0.85·0.3/4 = 0.06375 (0.06125 exposed), the
			// others under 0.85·4·0.3/4 = 0.255.
			name: "interleaved, 4 chunks in groups of 4",
			l:    syncLoads{m: 8, fwd: 0.3, bwd: 0.6, compute: 7.2, wof: 0.85, gof: 0.85, grad: 0.9, gradEdge: 0.03, param: 0.5, paramEdge: 0.02, chunks: 4, group: 4},
			grad: 0.0975, param: 0.06125,
		},
		{
			// Groups of one micro-batch leave each chunk's reduction the
			// same window as its own backward: 2·(0.45 - 0.255) = 0.39, the
			// single chunk's 0.9 - 0.85·0.6.
			name: "interleaved, groups of one",
			l:    syncLoads{m: 1, fwd: 0.3, bwd: 0.6, compute: 0.9, wof: 0.85, gof: 0.85, grad: 0.9, gradEdge: 0.03, chunks: 2, group: 1},
			grad: 0.39,
		},
	} {
		w, g, p, sms := c.l.exposed()
		for _, x := range []struct {
			what      string
			got, want float64
		}{{"weights", w, c.weights}, {"grad", g, c.grad}, {"param", p, c.param}, {"SM share", sms, c.sms}} {
			if math.Abs(x.got-x.want) > 1e-12 {
				t.Errorf("%s: exposed %s %g, want %g", c.name, x.what, x.got, x.want)
			}
		}
	}
}

// TestChunkSyncGate checks that Comm.ChunkSync changes only the interleaved
// schedule's exposed data-parallel collectives, and only downwards.
func TestChunkSyncGate(t *testing.T) {
	m, c := presets(t, "llama3-70b", "h100-512")
	w := space.Workload{Batch: 256, SeqLen: 4096}
	for _, tt := range []struct {
		spec  string
		moves bool
	}{
		{"dp=32,zero=1,tp=4,pp=4,schedule=interleaved,v=5", true},
		{"dp=32,zero=1,tp=4,pp=4", false},
	} {
		s := parseStrategy(t, tt.spec)
		on := Options{Comm: Comm{ChunkSync: true}}
		a, err := evaluate(m, c, w, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := evaluate(m, c, w, s, on)
		if err != nil {
			t.Fatal(err)
		}
		if moved := b.ExposedCommSeconds < a.ExposedCommSeconds; moved != tt.moves || b.ExposedCommSeconds > a.ExposedCommSeconds {
			t.Errorf("%s: exposed %.4g s with ChunkSync, %.4g s without; want lower %v", tt.spec, b.ExposedCommSeconds, a.ExposedCommSeconds, tt.moves)
		}
	}
}

// TestPipelineUnshardedTraffic checks model.Precision.PipelineUnsharded:
// under pipeline parallelism FSDP gathers a stage's weights once and
// reduces their gradients once per step, so the weight traffic does not
// grow with the micro-batches (4 and 16 of one sequence here), where
// without it the traffic is per micro-batch, 4 times as much at 16 as at 4;
// without a pipeline the flag changes nothing.
func TestPipelineUnshardedTraffic(t *testing.T) {
	m, c := presets(t, "llama3-70b", "h100-512")
	on := model.ProgramOptions{Precision: model.AutocastPrecision()}
	on.Precision.PipelineUnsharded = true
	off := model.ProgramOptions{Precision: model.AutocastPrecision()}
	traffic := func(o model.ProgramOptions, spec string, batch int) float64 {
		t.Helper()
		e, err := Evaluate(program(m, o), c, space.Workload{Batch: batch, SeqLen: 4096}, parseStrategy(t, spec), Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		return e.Passes.WeightTrafficSeconds
	}
	const pp = "fsdp=16,tp=8,pp=4"
	if a, b := traffic(on, pp, 64), traffic(on, pp, 256); math.Abs(b/a-1) > 1e-9 || a <= 0 {
		t.Errorf("pipeline_unsharded: weight traffic %.4g s at 4 micro-batches, %.4g s at 16; want equal and positive", a, b)
	}
	if a, b := traffic(off, pp, 64), traffic(off, pp, 256); math.Abs(b/a-4) > 1e-9 {
		t.Errorf("per micro-batch: weight traffic %.4g s at 4 micro-batches, %.4g s at 16; want 4 times", a, b)
	}
	const flat = "fsdp=64,tp=8"
	if a, b := traffic(on, flat, 256), traffic(off, flat, 256); a != b {
		t.Errorf("no pipeline: weight traffic %.4g s with the flag, %.4g s without; want equal", a, b)
	}
}
