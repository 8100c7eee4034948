package memory

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// exactCase is a model, cluster and workload whose space the exactness
// tests and benchmarks sample, with the program options to build it under.
type exactCase struct {
	name    string
	m       model.Spec
	cluster string
	w       space.Workload
	opts    []model.ProgramOptions
}

// exactCases are dense, alternating and MoE models (deepseek-v3's MLA,
// shared experts, dense first layers and multi-token prediction
// included), with whole experts and fp8 programs, on GPU and TPU
// clusters.
func exactCases(tb testing.TB) []exactCase {
	tb.Helper()
	preset := func(name string) model.Spec {
		m, err := model.Preset(name)
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	fp8, ok := model.LookupFP8Recipe(model.FP8Delayed)
	if !ok {
		tb.Fatal("no delayed fp8 recipe")
	}
	alternating := preset("llama3-8b")
	alternating.Name, alternating.Pattern, alternating.Window = "llama3-8b-sliding", []string{"sliding", "full"}, 1024
	return []exactCase{
		{"llama3-70b", preset("llama3-70b"), "h100-256", space.Workload{Batch: 512, SeqLen: 8192},
			[]model.ProgramOptions{{}, {FP8: &fp8}}},
		{"gpt3-175b", preset("gpt3-175b"), "a100-1024", space.Workload{Batch: 1536, SeqLen: 2048},
			[]model.ProgramOptions{{}}},
		{"llama2-70b", preset("llama2-70b"), "v5p-256", space.Workload{Batch: 1024, SeqLen: 4096},
			[]model.ProgramOptions{{}}},
		{"llama3-8b-sliding", alternating, "h100-64", space.Workload{Batch: 256, SeqLen: 8192},
			[]model.ProgramOptions{{}}},
		{"mixtral-8x7b", preset("mixtral-8x7b"), "h100-256", space.Workload{Batch: 512, SeqLen: 4096},
			[]model.ProgramOptions{{}, {ExpertsWhole: true}}},
		{"deepseek-v3", preset("deepseek-v3"), "h800-2048", space.Workload{Batch: 1024, SeqLen: 4096},
			[]model.ProgramOptions{{}, {ExpertsWhole: true}, {FP8: &fp8}}},
	}
}

// exactSample returns up to runs x perRun valid strategies of tc's space
// in runs of consecutive gene indices from runs evenly spaced points (a
// search's enumeration order); with variants, some of its pipelined
// strategies are followed by their variants under every other schedule
// that validates (the V-shaped and mirrored placements the space leaves to
// a fix).
func exactSample(tb testing.TB, tc exactCase, c profiles.Cluster, runs, perRun int, variants bool) []space.Strategy {
	tb.Helper()
	sp, err := space.New(tc.m, c, tc.w, space.Fix{})
	if err != nil {
		tb.Fatal(err)
	}
	genes := make([]int, space.NumGenes)
	size := sp.Size()
	var out []space.Strategy
	var s space.Strategy
	for k := int64(0); k < int64(runs); k++ {
		got := 0
		for i := k * (size / int64(runs)); i < size && got < perRun; i++ {
			if !sp.DecodeIndex(i, genes, &s) {
				continue
			}
			out = append(out, s)
			got++
			if !variants || s.Degree[space.PP] <= 1 || got%7 != 0 {
				continue
			}
			for _, sc := range space.Schedules() {
				for _, v := range []int{1, 2, 3} {
					x := s
					x.Schedule, x.V = sc, v
					if (sc != s.Schedule || v != s.V) && x.Validate(tc.m, c, tc.w) == nil {
						out = append(out, x)
					}
				}
			}
		}
	}
	if len(out) < 50 {
		tb.Fatalf("only %d valid strategies decoded", len(out))
	}
	return out
}

// orders returns the orders of n strategies to estimate them in: as
// given, shuffled, reversed, the two halves interleaved (every strategy
// far from the previous one) and each run of 16 sorted by ZeRO stage then
// recompute policy (the layout changing fastest).
func orders(strategies []space.Strategy) map[string][]int {
	n := len(strategies)
	given := make([]int, n)
	for i := range given {
		given[i] = i
	}
	shuffled := slices.Clone(given)
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	reversed := slices.Clone(given)
	slices.Reverse(reversed)
	var interleaved []int
	for i := 0; i < (n+1)/2; i++ {
		interleaved = append(interleaved, i)
		if j := i + (n+1)/2; j < n {
			interleaved = append(interleaved, j)
		}
	}
	regrouped := slices.Clone(given)
	for lo := 0; lo < n; lo += 16 {
		run := regrouped[lo:min(lo+16, n)]
		slices.SortStableFunc(run, func(a, b int) int {
			sa, sb := &strategies[a], &strategies[b]
			if sa.Zero != sb.Zero {
				return sa.Zero - sb.Zero
			}
			if sa.Recompute < sb.Recompute {
				return -1
			}
			if sa.Recompute > sb.Recompute {
				return 1
			}
			return 0
		})
	}
	return map[string][]int{"given": given, "shuffled": shuffled, "reversed": reversed,
		"interleaved": interleaved, "regrouped": regrouped}
}

// sameBits reports whether a and b are equal bit for bit.
func sameBits(a, b Breakdown) bool {
	for _, p := range [][2]float64{
		{a.ParamsBytes, b.ParamsBytes}, {a.GradsBytes, b.GradsBytes}, {a.OptimizerBytes, b.OptimizerBytes},
		{a.ActivationsBytes, b.ActivationsBytes}, {a.BuffersBytes, b.BuffersBytes},
	} {
		if math.Float64bits(p[0]) != math.Float64bits(p[1]) {
			return false
		}
	}
	return true
}

// TestEstimatorExact checks that an Estimator, which keeps what the
// previous strategies' memory was computed from, gives Model.Estimate's
// breakdown bit for bit, and its error, on the strategies of dense,
// alternating and MoE spaces (with whole experts and in fp8), pipelines
// under every schedule included, taken in several orders, with strategies
// the model refuses among them.
func TestEstimatorExact(t *testing.T) {
	for _, tc := range exactCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			c, err := profiles.Parse(tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			strategies := exactSample(t, tc, c, 24, 64, true)
			// Strategies the model refuses: an unknown recompute policy, and
			// a mesh with an axis the cluster lacks; and some with a ZeRO
			// stage Validate refuses, whose states the Estimator does not keep.
			for i := 0; i < len(strategies); i += 97 {
				odd := strategies[i]
				odd.Zero = numZero
				strategies = append(strategies, odd)
				bad := strategies[i]
				bad.Recompute = "no-such-policy"
				strategies = append(strategies, bad)
				bad = strategies[i]
				bad.Mesh[space.EP] = []space.Share{{Axis: "no-such-axis", Size: 2}}
				bad.Degree[space.EP] = 2
				strategies = append(strategies, bad)
			}
			for oi, o := range tc.opts {
				mm := NewModel(model.MustProgram(tc.m, o))
				want := make([]Breakdown, len(strategies))
				wantErr := make([]error, len(strategies))
				for i, s := range strategies {
					want[i], wantErr[i] = mm.Estimate(c, tc.w, s)
				}
				for name, order := range orders(strategies) {
					e := mm.NewEstimator(c, tc.w)
					for _, i := range order {
						got, err := e.Estimate(strategies[i])
						if !sameBits(got, want[i]) || (err == nil) != (wantErr[i] == nil) || err != nil && err.Error() != wantErr[i].Error() {
							t.Fatalf("options %d, order %s: Estimator.Estimate(%s) = %+v, %v; want %+v, %v",
								oi, name, strategies[i].String(), got, err, want[i], wantErr[i])
						}
					}
				}
			}
		})
	}
}

// TestEstimatorNoAllocs checks that an Estimator does not allocate once
// it has seen the strategies it estimates.
func TestEstimatorNoAllocs(t *testing.T) {
	tc := exactCases(t)[5] // deepseek-v3
	c, err := profiles.Parse(tc.cluster)
	if err != nil {
		t.Fatal(err)
	}
	strategies := exactSample(t, tc, c, 8, 32, true)
	mm := NewModel(model.MustProgram(tc.m, tc.opts[0]))
	e := mm.NewEstimator(c, tc.w)
	for _, s := range strategies {
		_, _ = e.Estimate(s)
	}
	i := 0
	if n := testing.AllocsPerRun(len(strategies), func() {
		_, _ = e.Estimate(strategies[i%len(strategies)])
		i++
	}); n != 0 {
		t.Errorf("Estimator.Estimate allocates %v times per call, want 0", n)
	}
}

// BenchmarkEstimator measures an Estimator's strategies per second on
// samples of the exactness tests' spaces, in enumeration order (runs of
// consecutive valid gene indices, as search.BenchmarkCosted takes them)
// and shuffled (cold).
//
//	go test ./memory -run '^$' -bench '^BenchmarkEstimator$' -benchmem
func BenchmarkEstimator(b *testing.B) {
	for _, tc := range exactCases(b) {
		c, err := profiles.Parse(tc.cluster)
		if err != nil {
			b.Fatal(err)
		}
		ordered := exactSample(b, tc, c, 64, 64, false)
		cold := slices.Clone(ordered)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(cold), func(i, j int) { cold[i], cold[j] = cold[j], cold[i] })
		mm := NewModel(model.MustProgram(tc.m, tc.opts[0]))
		for _, order := range []struct {
			name       string
			strategies []space.Strategy
		}{{"enumeration", ordered}, {"cold", cold}} {
			b.Run(tc.name+"/"+order.name, func(b *testing.B) {
				e := mm.NewEstimator(c, tc.w)
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					if _, err := e.Estimate(order.strategies[n%len(order.strategies)]); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "strategies/s")
			})
		}
	}
}

// TestEstimatorManySchedules checks the Estimator against Model.Estimate
// on more schedules of one layout than it keeps flight terms for
// (maxFlights), visited twice over in a cycle and back and forth, with
// the ZeRO stage changing in between.
func TestEstimatorManySchedules(t *testing.T) {
	tc := exactCases(t)[0] // llama3-70b: 80 layers
	c, err := profiles.Parse(tc.cluster)
	if err != nil {
		t.Fatal(err)
	}
	base := space.Strategy{Degree: space.Degrees{space.DP: 8, space.FSDP: 1, space.TP: 8, space.CP: 1, space.PP: 4, space.EP: 1},
		MB: 1, V: 1, Schedule: space.OneFOneB, Recompute: space.RecomputeSelective}
	base, err = base.Place(c)
	if err != nil {
		t.Fatal(err)
	}
	var schedules []space.Strategy
	for _, sc := range space.Schedules() {
		for v := 1; v <= 2*maxFlights; v++ {
			s := base
			s.Schedule, s.V = sc, v
			if s.Validate(tc.m, c, tc.w) == nil {
				schedules = append(schedules, s)
			}
		}
	}
	if len(schedules) <= maxFlights {
		t.Fatalf("only %d schedules validate; want more than %d", len(schedules), maxFlights)
	}
	var run []space.Strategy
	for pass := range 2 {
		for i := range schedules {
			s := schedules[i]
			s.Zero = (i + pass) % numZero
			run = append(run, s)
		}
	}
	for i := len(schedules) - 1; i >= 0; i -= 3 {
		run = append(run, schedules[i], schedules[len(schedules)-1-i])
	}
	mm := NewModel(model.MustProgram(tc.m, tc.opts[0]))
	e := mm.NewEstimator(c, tc.w)
	for _, s := range run {
		want, wantErr := mm.Estimate(c, tc.w, s)
		got, err := e.Estimate(s)
		if !sameBits(got, want) || err != nil || wantErr != nil {
			t.Fatalf("Estimator.Estimate(%s) = %+v, %v; want %+v, %v", s.String(), got, err, want, wantErr)
		}
	}
}

// TestEstimatorClasses checks the Estimator against Model.Estimate when
// it keeps its terms across the placements of a class (the same role
// degrees, degrees and sequence parallelism): the strategies of each
// class of a space in turn, twice over, the second time in reverse.
func TestEstimatorClasses(t *testing.T) {
	for _, tc := range exactCases(t)[4:] { // the MoE models: placements of ep differ in role degrees
		t.Run(tc.name, func(t *testing.T) {
			c, err := profiles.Parse(tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			strategies := exactSample(t, tc, c, 16, 96, false)
			mm := NewModel(model.MustProgram(tc.m, tc.opts[0]))
			type classKey struct {
				roles  [space.NumRoles]int
				degree space.Degrees
				sp     bool
			}
			byClass := map[classKey][]int{}
			var classes []classKey
			for i := range strategies {
				s := &strategies[i]
				roles, err := s.RoleDegrees(c)
				if err != nil {
					t.Fatal(err)
				}
				k := classKey{roles: roles, degree: s.Degree, sp: s.SP}
				if _, ok := byClass[k]; !ok {
					classes = append(classes, k)
				}
				byClass[k] = append(byClass[k], i)
			}
			e := mm.NewEstimator(c, tc.w)
			shared := 0
			for _, k := range classes {
				run := byClass[k]
				back := slices.Clone(run)
				slices.Reverse(back)
				for _, i := range append(slices.Clone(run), back...) {
					s := strategies[i]
					want, _ := mm.Estimate(c, tc.w, s)
					got, err := e.Estimate(s)
					if err != nil || !sameBits(got, want) {
						t.Fatalf("Estimator.Estimate(%s) = %+v, %v; want %+v", s.String(), got, err, want)
					}
				}
				if len(run) > 1 {
					shared++
				}
			}
			if shared == 0 {
				t.Error("no class with several strategies")
			}
		})
	}
}
