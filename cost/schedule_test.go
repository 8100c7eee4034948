package cost

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// presetCase evaluates strategy spec of the preset model on the preset
// cluster with batch sequences of the model's length.
func presetCase(t *testing.T, modelName, clusterName, spec string, batch int, o Options) Estimate {
	t.Helper()
	m, c := presets(t, modelName, clusterName)
	s, err := space.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: batch, SeqLen: m.SeqLen}
	if err := s.Validate(m, c, w); err != nil {
		t.Fatal(err)
	}
	est, err := evaluate(m, c, w, s, o)
	if err != nil {
		t.Fatal(err)
	}
	return est
}

// relClose reports whether a and b agree to 1e-9 of the larger.
func relClose(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b)) }

// TestZeroBubbleWeightPasses checks the split of the backward pass that
// ZB-H1's bubble reads: (p-1)(T_F+T_B-T_W) [ZB §2.1] is 1F1B's
// (p-1)(T_F+T_B+T_W) less 2(p-1)T_W, where T_W is the time of the
// weight-gradient matmuls (dW = Aᵀ·dC) of the busiest rank's micro-batch,
// read off the traced program. Llama 3 8B on pp=4: the last rank runs 8
// layers and the output layer; data parallelism alone puts no
// communication on the critical path.
func TestZeroBubbleWeightPasses(t *testing.T) {
	const spec = "pp=4,dp=2"
	o := Options{Trace: true}
	one := presetCase(t, "llama3-8b", "h100-8", spec, 8, o)
	zb := presetCase(t, "llama3-8b", "h100-8", spec+",schedule=zb-h1", 8, o)
	var layerW, headW float64
	for _, op := range zb.Ops {
		if op.Pass != "bwd" || !strings.Contains(op.Text, "-> dW") {
			continue
		}
		switch {
		case strings.Contains(op.Text, "dWlm"):
			headW += op.Seconds
		case strings.Contains(op.Text, "dWemb"): // the first rank's
		default:
			layerW += op.Seconds
		}
	}
	tW := 8*layerW + headW
	if tW <= 0 {
		t.Fatal("no weight-gradient op in the trace")
	}
	want := one.BubbleSeconds - 2*3*tW
	t.Logf("1F1B bubble %.4g s, T_W %.4g s per micro-batch: ZB-H1 %.4g s, want %.4g s", one.BubbleSeconds, tW, zb.BubbleSeconds, want)
	if !relClose(zb.BubbleSeconds, want) {
		t.Errorf("ZB-H1 bubble %.6g s, want 1F1B's %.6g s - 2(p-1)T_W = %.6g s", zb.BubbleSeconds, one.BubbleSeconds, want)
	}
	if zb.ComputeSeconds != one.ComputeSeconds || zb.ExposedCommSeconds != one.ExposedCommSeconds {
		t.Errorf("ZB-H1 changes compute (%v vs %v) or exposed communication (%v vs %v); only the bubble should differ",
			zb.ComputeSeconds, one.ComputeSeconds, zb.ExposedCommSeconds, one.ExposedCommSeconds)
	}
	// The weight-gradient matmuls cost what the forward matmuls with the
	// same weights cost: the same FLOPs (dW = Aᵀ·dC for C = A·W).
	var layerFwd float64
	for _, op := range zb.Ops {
		if op.Pass == "fwd" && strings.Contains(op.Text, " · W") && !strings.Contains(op.Text, "Wemb") && !strings.Contains(op.Text, "Wlm") {
			layerFwd += op.Seconds
		}
	}
	if !relClose(layerW, layerFwd) {
		t.Errorf("a layer's weight-gradient passes take %.6g s, its forward weight matmuls %.6g s", layerW, layerFwd)
	}
}

// TestDualPipeHidesAllToAll is Mixtral 8x7B on h100-64 with pp=4 and ep=8:
// DualPipe runs m - 3p/2 + 1 = 16 - 6 + 1 = 11 of the 16 micro-batches as
// overlapped forward-backward pairs, each hiding one micro-batch's MoE
// dispatch and combine (forward under the other's backward, backward under
// the other's forward) while they take less than OverlapFraction of that
// compute [DSV3 §3.2.1]. The rank's layers are 8 MoE layers under both
// schedules, so its all-to-all per micro-batch is the same: the exposed
// all-to-all falls by 11/16 of the step's.
func TestDualPipeHidesAllToAll(t *testing.T) {
	const spec = "pp=4,ep=8,dp=16"
	one := presetCase(t, "mixtral-8x7b", "h100-64", spec, 256, Options{})
	dual := presetCase(t, "mixtral-8x7b", "h100-64", spec+",schedule=dualpipe", 256, Options{})
	var a2a float64
	for _, c := range one.Collectives {
		if c.Op == AllToAll {
			a2a += c.Seconds
			if c.Overlapped {
				t.Errorf("1F1B overlaps %s", c.Why)
			}
		}
	}
	if a2a <= 0 || !relClose(one.ExposedA2ASeconds, a2a) {
		t.Fatalf("1F1B exposes %.6g s of all-to-all, its collectives take %.6g s", one.ExposedA2ASeconds, a2a)
	}
	want := a2a - 11.0/16*a2a
	t.Logf("all-to-all %.4g s per step: exposed under 1F1B %.4g s, DualPipe %.4g s (want %.4g s); exposed communication %.4g s vs %.4g s",
		a2a, one.ExposedA2ASeconds, dual.ExposedA2ASeconds, want, one.ExposedCommSeconds, dual.ExposedCommSeconds)
	if !relClose(dual.ExposedA2ASeconds, want) {
		t.Errorf("DualPipe exposes %.6g s of all-to-all, want 5/16 of %.6g s = %.6g s", dual.ExposedA2ASeconds, a2a, want)
	}
	if dual.ExposedCommSeconds > one.ExposedCommSeconds-(a2a-want)/2 {
		t.Errorf("DualPipe exposes %.4g s of communication, 1F1B %.4g s: the hidden all-to-all (%.4g s) should show", dual.ExposedCommSeconds, one.ExposedCommSeconds, a2a-want)
	}
	for _, c := range dual.Collectives {
		if c.Op == AllToAll && !c.Overlapped {
			t.Errorf("DualPipe does not mark %s overlapped", c.Why)
		}
	}
	// The traced ops say so too; under 1F1B they are exposed.
	for _, tc := range []struct {
		spec string
		want bool
	}{{spec, false}, {spec + ",schedule=dualpipe", true}} {
		traced := presetCase(t, "mixtral-8x7b", "h100-64", tc.spec, 256, Options{Trace: true})
		n := 0
		for _, op := range traced.Ops {
			if op.Collective.Op == AllToAll && strings.HasPrefix(op.Collective.Why, "dispatch") {
				n++
				if op.Collective.Overlapped != tc.want || strings.Contains(op.Text, "paired chunks") != tc.want {
					t.Errorf("%s: traced %q overlapped %v", tc.spec, op.Text, op.Collective.Overlapped)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no traced dispatch", tc.spec)
		}
	}
	// ZB-H1 overlaps nothing.
	zb := presetCase(t, "mixtral-8x7b", "h100-64", spec+",schedule=zb-h1", 256, Options{})
	if zb.ExposedA2ASeconds != one.ExposedA2ASeconds {
		t.Errorf("ZB-H1 exposes %.6g s of all-to-all, 1F1B %.6g s", zb.ExposedA2ASeconds, one.ExposedA2ASeconds)
	}
}

// TestPairedPlacements checks where the V-shaped and mirrored schedules
// put the embedding and the output layer: ZB-V runs both on rank 0 for
// every micro-batch, DualPipe each on ranks 0 and pp-1 for half of them.
// On pp=2 DualPipe's two ranks each hold the whole model and run half of
// it per micro-batch, so they compute what 1F1B's two ranks compute on
// average and update twice the parameters of one.
func TestPairedPlacements(t *testing.T) {
	const spec = "pp=2,dp=4"
	one := presetCase(t, "llama3-8b", "h100-8", spec, 16, Options{})
	dual := presetCase(t, "llama3-8b", "h100-8", spec+",schedule=dualpipe", 16, Options{})
	zbv := presetCase(t, "llama3-8b", "h100-8", spec+",schedule=zb-v", 16, Options{})
	whole := presetCase(t, "llama3-8b", "h100-8", "dp=8", 16, Options{})
	// DualPipe's optimizer step covers both copies: on pp=2 the whole
	// model, as without a pipeline (no ZeRO), about twice 1F1B's rank's.
	if !relClose(dual.OptimizerSeconds, whole.OptimizerSeconds) || dual.OptimizerSeconds < 1.9*one.OptimizerSeconds {
		t.Errorf("DualPipe optimizer %.6g s, want the whole model's %.6g s, about twice 1F1B's %.6g s", dual.OptimizerSeconds, whole.OptimizerSeconds, one.OptimizerSeconds)
	}
	// Its matmuls per micro-batch are half the model's: the average of
	// 1F1B's two ranks, below the busiest's (the one with the output layer).
	if dual.MatmulSeconds >= one.MatmulSeconds {
		t.Errorf("DualPipe matmuls %.6g s, want below 1F1B's busiest rank's %.6g s", dual.MatmulSeconds, one.MatmulSeconds)
	}
	// ZB-V's rank 0 runs the embedding, the output layer and about half the
	// layers of each linear rank: the same layers per micro-batch as 1F1B's
	// last rank, plus the embedding lookup.
	if zbv.MatmulSeconds < one.MatmulSeconds {
		t.Errorf("ZB-V matmuls %.6g s, want at least 1F1B's busiest rank's %.6g s", zbv.MatmulSeconds, one.MatmulSeconds)
	}
	var sends int
	for _, c := range zbv.Collectives {
		if c.Op == SendRecv {
			sends = c.Count
		}
	}
	// Two chunks per rank: twice 1F1B's 2·M = 8 sends [ZB-HF].
	if sends != 16 {
		t.Errorf("ZB-V sends %d times per step, want 2·M·2 = 16", sends)
	}
}

// TestPairedEvaluateNoAllocs: an Evaluator costs the V-shaped and mirrored
// schedules without allocating, as it does the others.
func TestPairedEvaluateNoAllocs(t *testing.T) {
	m, c := presets(t, "mixtral-8x7b", "h100-64")
	ev := NewModel(program(m, model.ProgramOptions{})).NewEvaluator(c, space.Workload{Batch: 256, SeqLen: 4096}, Options{SkipCollectives: true})
	for _, spec := range []string{"pp=4,ep=8,dp=16,schedule=dualpipe", "pp=4,ep=8,dp=16,schedule=zb-v", "pp=4,ep=8,dp=16,schedule=dualpipev"} {
		s, err := space.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = s.Place(c); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(50, func() { _, _ = ev.Evaluate(s) }); n != 0 {
			t.Errorf("%s: Evaluate allocates %v times per call, want 0", spec, n)
		}
	}
}

// TestEvaluatorSchedules checks that an Evaluator that keeps the block
// costs' sums of each pipeline rank view while only the schedule changes
// (rankSums) gives, for every schedule after every other (linear, V-shaped
// and mirrored placements, with and without virtual stages), the estimate
// of a fresh evaluation.
func TestEvaluatorSchedules(t *testing.T) {
	schedules := []space.Schedule{space.OneFOneB, space.GPipe, space.ZBH1, space.ZBV, space.DualPipe, space.DualPipeV, space.Interleaved}
	for _, tc := range []struct{ model, cluster, spec string }{
		{"llama3-8b", "h100-64", "pp=4,dp=16,zero=1"},
		{"mixtral-8x7b", "h100-64", "pp=4,ep=8,dp=16"},
		{"deepseek-v3", "h800-64", "pp=8,ep=8,dp=8,recompute=full"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			m, c := presets(t, tc.model, tc.cluster)
			w := space.Workload{Batch: 256, SeqLen: 4096}
			cm := NewModel(program(m, model.ProgramOptions{}))
			o := Options{SkipCollectives: true}
			base := parseStrategy(t, tc.spec)
			var ss []space.Strategy
			var want []Estimate
			for _, sched := range schedules {
				s := base
				s.Schedule = sched
				if sched == space.Interleaved {
					s.V = 2
				}
				est, err := cm.NewEvaluator(c, w, o).Evaluate(s)
				if err != nil {
					continue // a schedule this pipeline cannot run
				}
				ss, want = append(ss, s), append(want, est)
			}
			if len(ss) < 5 {
				t.Fatalf("only %d schedules run", len(ss))
			}
			t.Logf("%d schedules", len(ss))
			checkPairs(t, cm.NewEvaluator(c, w, o), ss, want)
		})
	}
}

// TestEvaluatorPolicies is TestEvaluatorSchedules for the recompute
// policies (the host-offloading ones among them) and ZeRO stages: one
// Evaluator evaluates every strategy after every other, each as a fresh
// one does. The parameter and offload tables it keeps per generation and
// ZeRO sharding or policy (evalState.keepParams, keepOffload) must follow.
func TestEvaluatorPolicies(t *testing.T) {
	m, c := presets(t, "llama3-8b", "h100-64")
	w := space.Workload{Batch: 256, SeqLen: 4096}
	cm := NewModel(program(m, model.ProgramOptions{}))
	o := Options{SkipCollectives: true}
	base := parseStrategy(t, "pp=4,dp=16")
	var ss []space.Strategy
	var want []Estimate
	offloads := 0
	for _, pol := range model.Policies() {
		for _, zero := range []int{0, 1, 2} {
			s := base
			s.Recompute, s.Zero = pol.Name, zero
			est, err := cm.NewEvaluator(c, w, o).Evaluate(s)
			if err != nil {
				t.Fatalf("%s zero %d: %v", pol.Name, zero, err)
			}
			ss, want = append(ss, s), append(want, est)
			if len(pol.Offload) > 0 && zero == 0 {
				offloads++
			}
		}
	}
	if offloads == 0 {
		t.Fatal("no policy offloads to host memory")
	}
	checkPairs(t, cm.NewEvaluator(c, w, o), ss, want)
}

// checkPairs evaluates, with ev, each strategy of ss after every other
// and checks each estimate against want, a fresh evaluator's.
func checkPairs(t *testing.T, ev *Evaluator, ss []space.Strategy, want []Estimate) {
	t.Helper()
	for i := range ss {
		for j := range ss {
			for _, k := range [2]int{i, j} {
				got, err := ev.Evaluate(ss[k])
				if err != nil || !reflect.DeepEqual(got, want[k]) {
					t.Fatalf("%s after %s: %+v, %v; want %+v", &ss[k], &ss[i], got, err, want[k])
				}
			}
		}
	}
}
