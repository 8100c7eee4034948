package search

import (
	"context"
	"errors"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// stripElapsed returns r without what legitimately varies between runs:
// the elapsed time and the number of strategies costed (branch and bound).
func stripElapsed(r *Result) Result {
	c := *r
	c.Elapsed, c.costed = 0, 0
	return c
}

func TestExhaustiveMatchesBruteForce(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    *Problem
	}{
		{"bowl", bowlProblem([]int{4, 4, 3, 3, 2}, []int{2, 1, 0, 1, 0}, 60e9)},
		{"bowl tight memory", bowlProblem([]int{4, 4, 3, 3, 2, 2}, []int{3, 3, 2, 0, 1, 1}, 30e9)},
		{"hash with ties", hashProblem([]int{3, 4, 5, 3, 2}, 9)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, feasible, valid, _ := bruteForce(tt.p)
			slices.SortFunc(want, func(a, b Candidate) int { return compareCandidates(&a, &b) })
			got, err := Exhaustive{Workers: 3, ChunkSize: 7}.Search(context.Background(), tt.p)
			if err != nil {
				t.Fatalf("Exhaustive.Search: %v", err)
			}
			if !sameRows(got.Front, want) {
				t.Errorf("front:\n got %v\nwant %v", rows(got.Front), rows(want))
			}
			if got.Feasible != feasible || got.Valid != valid || got.Evaluated != valid {
				t.Errorf("counts: feasible %d valid %d evaluated %d; want %d %d %d", got.Feasible, got.Valid, got.Evaluated, feasible, valid, valid)
			}
			if got.Visited != got.SpaceSize {
				t.Errorf("visited %d of %d", got.Visited, got.SpaceSize)
			}
			if len(want) > 0 {
				rec, ok := got.Recommended()
				if !ok || rec.StepSeconds != want[0].StepSeconds {
					t.Errorf("Recommended() = %v, %v; want step %g", rec.StepSeconds, ok, want[0].StepSeconds)
				}
			}
		})
	}
}

func rows(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Strategy.String())
	}
	return out
}

func TestExhaustiveDeterministic(t *testing.T) {
	p := hashProblem([]int{3, 4, 5, 3, 4}, 12)
	base, err := Exhaustive{Workers: 1}.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []Exhaustive{{Workers: 2}, {Workers: 8, ChunkSize: 5}, {Workers: 5, ChunkSize: 1}, {}} {
		got, err := ex.Search(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stripElapsed(got), stripElapsed(base)) {
			t.Errorf("Exhaustive%+v differs from one worker:\n got %v\nwant %v", ex, rows(got.Front), rows(base.Front))
		}
	}
}

func TestEvolveDeterministic(t *testing.T) {
	p := bowlProblem([]int{8, 8, 6, 6, 4, 4, 3}, []int{5, 2, 3, 1, 2, 0, 1}, 50e9)
	ev := Evolve{Seed: 7, Generations: 40}
	a, err := ev.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := ev.Search(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stripElapsed(a), stripElapsed(b)) {
			t.Fatalf("two runs with seed 7 differ:\n%v (%d evaluated)\n%v (%d evaluated)", rows(a.Front), a.Evaluated, rows(b.Front), b.Evaluated)
		}
	}
	c, err := Evolve{Seed: 8, Generations: 40}.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Visited == a.Visited && reflect.DeepEqual(c.Front, a.Front) {
		t.Logf("seeds 7 and 8 gave the same result (possible, but unlikely)")
	}
}

func TestEvolveReachesOptimum(t *testing.T) {
	// 8^4 * 6^2 * 4 * 3 = 1,769,472 gene vectors.
	cards := []int{8, 8, 8, 8, 6, 6, 4, 3}
	target := []int{5, 2, 7, 1, 3, 0, 2, 1}
	p := bowlProblem(cards, target, 1e12)
	ex, err := Exhaustive{}.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Evolve{Seed: 1}.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	best, _ := ex.Recommended()
	got, _ := ev.Recommended()
	t.Logf("exhaustive %d evaluated, best %.4g s; evolve %d evaluated in %d generations, best %.4g s",
		ex.Evaluated, best.StepSeconds, ev.Evaluated, ev.Generations, got.StepSeconds)
	if got.StepSeconds > best.StepSeconds*1.01 {
		t.Errorf("evolve best %g s; exhaustive %g s", got.StepSeconds, best.StepSeconds)
	}
	if ev.Evaluated*10 > ex.Evaluated {
		t.Errorf("evolve evaluated %d strategies, more than 10%% of %d", ev.Evaluated, ex.Evaluated)
	}
}

func TestEvolveArchiveFront(t *testing.T) {
	// On a space smaller than one population's reach, evolution sees
	// almost everything: its front is a subset-consistent front.
	p := hashProblem([]int{3, 4, 5, 3}, 10)
	r, err := Evolve{Seed: 3, Generations: 30}.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkFront(t, r.Front, nil)
	if r.Feasible == 0 || len(r.Front) == 0 {
		t.Errorf("evolve found nothing feasible on a space with feasible strategies")
	}
}

// checkFront verifies the front invariants of front against the candidates
// it was taken from (all; nil skips the completeness check).
func checkFront(t *testing.T, front, all []Candidate) {
	t.Helper()
	keys := map[string]bool{}
	for i := range front {
		if !front[i].Feasible() {
			t.Errorf("front row %d is not feasible", i)
		}
		k := front[i].Strategy.String()
		if keys[k] {
			t.Errorf("front repeats %s", k)
		}
		keys[k] = true
		for j := range front {
			if Dominates(&front[j], &front[i]) {
				t.Errorf("front row %d dominates row %d", j, i)
			}
			if j != i && front[j].StepSeconds == front[i].StepSeconds && front[j].MemoryBytes == front[i].MemoryBytes {
				t.Errorf("front rows %d and %d are the same point", j, i)
			}
		}
		if i > 0 && compareCandidates(&front[i-1], &front[i]) >= 0 {
			t.Errorf("front rows %d and %d out of order", i-1, i)
		}
	}
	for i := range all {
		c := &all[i]
		if !c.Feasible() || keys[c.Strategy.String()] {
			continue
		}
		dominated := false
		for j := range front {
			same := front[j].StepSeconds == c.StepSeconds && front[j].MemoryBytes == c.MemoryBytes
			if Dominates(&front[j], c) || same {
				dominated = true
				break
			}
		}
		if !dominated {
			t.Errorf("%s (%g s, %g B) is neither on the front, nor dominated, nor equal to a front row", c.Strategy.String(), c.StepSeconds, c.MemoryBytes)
		}
	}
}

func TestFrontProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 200 {
		n := rng.Intn(60)
		levels := 1 + rng.Intn(8)
		cands := make([]Candidate, n)
		for i := range cands {
			s := space.Strategy{Degree: space.Degrees{space.DP: 1 + rng.Intn(6), space.TP: 1 + rng.Intn(3), space.PP: 1, space.CP: 1, space.FSDP: 1, space.EP: 1}, MB: 1, V: 1, Schedule: space.OneFOneB, Recompute: space.RecomputeNone}
			cands[i] = Candidate{
				Strategy:    s,
				Index:       int64(s.Degree[space.DP]*10 + s.Degree[space.TP]),
				MemoryBytes: float64(1 + rng.Intn(levels)),
				UsableBytes: float64(levels),
				Fits:        rng.Intn(6) != 0,
				Costed:      true,
				StepSeconds: float64(1 + rng.Intn(levels)),
			}
			// The same strategy always has the same objectives.
			cands[i].MemoryBytes = float64(1 + (s.Degree[space.DP]*7+s.Degree[space.TP]*3)%levels)
		}
		front := Front(cands)
		checkFront(t, front, cands)
		shuffled := slices.Clone(cands)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		// Objectives per strategy must be consistent for order
		// independence; force it on the shuffled copy via the first copy.
		if got := Front(shuffled); !reflect.DeepEqual(got, front) && consistent(cands) {
			t.Errorf("trial %d: Front depends on the input order", trial)
		}
		if t.Failed() {
			t.Fatalf("trial %d failed", trial)
		}
	}
}

// consistent reports whether equal strategies carry equal objectives.
func consistent(cands []Candidate) bool {
	seen := map[string]Candidate{}
	for _, c := range cands {
		k := c.Strategy.String()
		if p, ok := seen[k]; ok && (p.StepSeconds != c.StepSeconds || p.MemoryBytes != c.MemoryBytes || p.Feasible() != c.Feasible()) {
			return false
		}
		seen[k] = c
	}
	return true
}

func TestFrontEmpty(t *testing.T) {
	if got := Front(nil); len(got) != 0 {
		t.Errorf("Front(nil) = %v", got)
	}
	if got := Top(nil, 3); len(got) != 0 {
		t.Errorf("Top(nil, 3) = %v", got)
	}
}

func TestNoFit(t *testing.T) {
	p := bowlProblem([]int{4, 4, 3, 3}, []int{1, 1, 1, 1}, 1e9) // nothing fits in 1 GB
	ctx := context.Background()
	for _, m := range []Method{Exhaustive{}, Evolve{Seed: 1, Generations: 10}} {
		r, err := m.Search(ctx, p)
		var nf *NoFitError
		if !errors.As(err, &nf) {
			t.Fatalf("%T.Search error = %v; want *NoFitError", m, err)
		}
		if r == nil || r.Feasible != 0 || len(r.Front) != 0 {
			t.Fatalf("%T.Search result = %+v; want a result with nothing feasible", m, r)
		}
		if nf.Smallest == nil || nf.MinMemoryBytes <= nf.UsableBytes || nf.Dominant == "" {
			t.Errorf("%T: NoFitError = %+v", m, nf)
		}
		msg := nf.Error()
		if !strings.HasPrefix(msg, "search: ") || strings.Contains(msg, "\n") {
			t.Errorf("%T: Error() = %q", m, msg)
		}
		if nf.FitCluster != "" || nf.FitSeqLen != 0 || nf.FitBatch != 0 {
			t.Errorf("%T: suggestions without Variant: %+v", m, nf)
		}
	}
	// The exhaustive smallest is the true minimum.
	_, _, _, all := bruteForce(p)
	minMem := all[0].MemoryBytes
	for _, c := range all {
		minMem = min(minMem, c.MemoryBytes)
	}
	_, err := Exhaustive{}.Search(ctx, p)
	var nf *NoFitError
	errors.As(err, &nf)
	if nf.MinMemoryBytes != minMem {
		t.Errorf("MinMemoryBytes = %g; want %g", nf.MinMemoryBytes, minMem)
	}
	if nf.Dominant != "optimizer" {
		t.Errorf("Dominant = %q; want optimizer", nf.Dominant)
	}
}

func TestNoFitSuggestions(t *testing.T) {
	// Memory per chip is 100 GB/TP + 10 GB (at least 60 GB) times
	// f = tokens/base tokens * 16/chips; 10 GB are usable, so a strategy
	// fits when f <= 1/6: on 128 chips (96 needed), with sequences of 512
	// tokens (682 allowed) or with a batch of 8 (10 allowed).
	base := space.Workload{Batch: 64, SeqLen: 4096}
	var tried []string
	var mk func(c profiles.Cluster, w space.Workload) (*Problem, error)
	resolve := func(name string) (profiles.Cluster, error) {
		tried = append(tried, name)
		c := testCluster()
		c.Name = name
		n, err := strconv.Atoi(strings.TrimPrefix(name, "test-"))
		if err != nil {
			return c, errors.New("profiles: unknown cluster")
		}
		c.Axes[0].Size = n
		return c, nil
	}
	mk = func(c profiles.Cluster, w space.Workload) (*Problem, error) {
		f := float64(w.Batch*w.SeqLen) / float64(base.Batch*base.SeqLen) * 16 / float64(c.Chips())
		d := bowl([]int{2, 2}, []int{0, 0}, 10e9)
		d.Cluster, d.Workload = c, w
		sc := d.Scorer.(funcScorer)
		mem := sc.memory
		sc.memory = func(s *space.Strategy) memory.Breakdown {
			b := mem(s)
			b.ParamsBytes *= f
			b.OptimizerBytes *= f
			b.ActivationsBytes *= f
			return b
		}
		d.Scorer, d.Variant, d.ResolveCluster = sc, mk, resolve
		return NewCustomProblem(d)
	}
	p, _ := mk(testCluster(), base)
	_, err := Run(context.Background(), p, Settings{Method: MethodExhaustive, Suggest: true})
	var nf *NoFitError
	if !errors.As(err, &nf) {
		t.Fatalf("Search error = %v; want *NoFitError", err)
	}
	if nf.FitCluster != "test-128" || nf.FitChips != 128 || nf.FitSeqLen != 512 || nf.FitBatch != 8 {
		t.Errorf("suggestions: cluster %q (%d chips), seq %d, batch %d; want test-128 (128), 512, 8",
			nf.FitCluster, nf.FitChips, nf.FitSeqLen, nf.FitBatch)
	}
	if want := []string{"test-32", "test-64", "test-128"}; !slices.Equal(tried, want) {
		t.Errorf("clusters tried: %v; want %v", tried, want)
	}
	want := "search: bowl on test-16 with batch 64 of 4096-token sequences does not fit: the smallest strategy needs 60.0 GB per chip but 10.0 GB is usable (largest part: optimizer, 30.0 GB); it would fit on test-128 (128 chips), with sequences of 512 tokens or with a batch of 8"
	if got := nf.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
}

func TestNoValidStrategy(t *testing.T) {
	d := bowl([]int{3, 3}, []int{0, 0}, 1e12)
	d.Space = &gridSpace{cards: []int{3, 3}, invalid: func([]int) bool { return true }}
	p := mustProblem(d)
	for _, m := range []Method{Exhaustive{}, Evolve{Seed: 1, Generations: 5}} {
		_, err := m.Search(context.Background(), p)
		var nf *NoFitError
		if !errors.As(err, &nf) || nf.Valid != 0 || nf.Smallest != nil {
			t.Errorf("%T.Search error = %v; want *NoFitError with no valid strategy", m, err)
		}
	}
}

func TestCostFailures(t *testing.T) {
	d := bowl([]int{3, 3}, []int{0, 0}, 1e12)
	sc := d.Scorer.(funcScorer)
	sc.time = func(*space.Strategy) (cost.Estimate, error) { return cost.Estimate{}, errors.New("cost: broken") }
	d.Scorer = sc
	p := mustProblem(d)
	r, err := Exhaustive{}.Search(context.Background(), p)
	var nf *NoFitError
	if !errors.As(err, &nf) || nf.CostErr == nil {
		t.Fatalf("Search error = %v; want *NoFitError wrapping the cost error", err)
	}
	if r.Failed != r.Valid {
		t.Errorf("Failed = %d; want %d", r.Failed, r.Valid)
	}
}

func TestAuto(t *testing.T) {
	p := bowlProblem([]int{4, 4, 3}, []int{1, 1, 1}, 1e12)
	for _, tt := range []struct {
		limit int64
		want  string
	}{{0, MethodExhaustive}, {48, MethodExhaustive}, {47, MethodEvolve}} {
		r, err := Auto{MaxExhaustiveSize: tt.limit, Evolve: Evolve{Seed: 1, Generations: 3}}.Search(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Method != tt.want {
			t.Errorf("Auto{MaxExhaustiveSize: %d} ran %s; want %s", tt.limit, r.Method, tt.want)
		}
	}
}

// TestAutoDefaultCrossover checks the default threshold: a space just
// above DefaultMaxExhaustiveSize gene vectors is evolved and says how much
// of it was seen; one of DefaultMaxExhaustiveSize is within the limit (an
// exhaustive search of it takes seconds, so the choice is checked, not
// run).
func TestAutoDefaultCrossover(t *testing.T) {
	const n = DefaultMaxExhaustiveSize/5 + 1 // 5·n is just above the threshold
	above := bowlProblem([]int{5, n}, []int{2, 7}, 1e12)
	r, err := Auto{Evolve: Evolve{Seed: 1, Generations: 3, PolishTuples: -1}}.Search(context.Background(), above)
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodEvolve || r.SpaceSize != 5*n {
		t.Errorf("a space of %d gene vectors: ran %s over %d; want evolve", 5*n, r.Method, r.SpaceSize)
	}
	if r.Visited <= 0 || r.Visited >= r.SpaceSize {
		t.Errorf("evolve saw %d of %d gene vectors; want a part of the space", r.Visited, r.SpaceSize)
	}
	for _, tt := range []struct {
		size int64
		want string
	}{{DefaultMaxExhaustiveSize - 1, MethodExhaustive}, {DefaultMaxExhaustiveSize, MethodExhaustive}, {DefaultMaxExhaustiveSize + 1, MethodEvolve}} {
		if got := (Auto{}).choose(tt.size); got != tt.want {
			t.Errorf("Auto.choose(%d) = %s; want %s", tt.size, got, tt.want)
		}
	}
}

func TestSettingsMethod(t *testing.T) {
	p := bowlProblem([]int{4, 3}, []int{1, 1}, 1e12)
	for _, tt := range []struct{ name, want string }{{"", MethodExhaustive}, {"auto", MethodExhaustive}, {"exhaustive", MethodExhaustive}, {"evolve", MethodEvolve}} {
		if err := CheckMethod(tt.name); err != nil {
			t.Errorf("CheckMethod(%q): %v", tt.name, err)
		}
		r, err := Run(context.Background(), p, Settings{Method: tt.name, Seed: 1})
		if err != nil || r.Method != tt.want {
			t.Errorf("Run(method %q) ran %v, %v; want %s", tt.name, r.Method, err, tt.want)
		}
	}
	if err := CheckMethod("random"); err == nil || !strings.HasPrefix(err.Error(), "search: ") {
		t.Errorf("CheckMethod(random) error = %v", err)
	}
}

func TestCancel(t *testing.T) {
	p := bowlProblem([]int{8, 8, 8, 8, 8}, []int{1, 1, 1, 1, 1}, 1e12)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range []Method{Exhaustive{}, Evolve{Seed: 1}} {
		if _, err := m.Search(ctx, p); !errors.Is(err, context.Canceled) {
			t.Errorf("%T.Search on a canceled context: error %v", m, err)
		}
	}
}

func TestProgress(t *testing.T) {
	p := bowlProblem([]int{8, 8, 8, 4}, []int{1, 1, 1, 1}, 1e12)
	var calls, last atomic.Int64
	var total int64
	prog := func(done, tot int64) {
		calls.Add(1)
		last.Store(done)
		total = tot
	}
	if _, err := (Exhaustive{Progress: prog}).Search(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if calls.Load() == 0 || last.Load() != total || total != 8*8*8*4 {
		t.Errorf("progress: %d calls, last %d of %d", calls.Load(), last.Load(), total)
	}
}

func TestRadix(t *testing.T) {
	cards := []int{3, 1, 4, 2}
	genes := make([]int, len(cards))
	walk := make([]int, len(cards))
	for i := int64(0); i < 24; i++ {
		genesOf(cards, i, genes)
		if !slices.Equal(genes, walk) {
			t.Errorf("genesOf(%d) = %v; want %v", i, genes, walk)
		}
		if got := indexOf(cards, genes); got != i {
			t.Errorf("indexOf(%v) = %d; want %d", genes, got, i)
		}
		next(cards, walk)
	}
}

func TestGenomeOperators(t *testing.T) {
	p := bowlProblem([]int{8, 8, 6, 6}, []int{1, 2, 3, 4}, 1e12)
	sp, _ := p.Space()
	cards := sp.Cardinalities()
	m := newMemo(p, sp, cards, 1)
	ops := newOperators(sp, cards)
	a := &genome{genes: []int{0, 1, 2, 3}, m: m, ops: ops, capBytes: 1e12}
	b := &genome{genes: []int{7, 6, 5, 4}, m: m, ops: ops, capBytes: 1e12}
	for seed := range int64(20) {
		a2 := a.Clone().(*genome)
		a2.Crossover(b, rand.New(rand.NewSource(seed)))
		if !slices.Equal(b.genes, []int{7, 6, 5, 4}) {
			t.Fatalf("Crossover changed its argument: %v", b.genes)
		}
		for k, g := range a2.genes {
			if g != a.genes[k] && g != b.genes[k] {
				t.Errorf("Crossover gene %d = %d; want %d or %d", k, g, a.genes[k], b.genes[k])
			}
		}
		m1, m2 := a.Clone().(*genome), a.Clone().(*genome)
		m1.Mutate(rand.New(rand.NewSource(seed)))
		m2.Mutate(rand.New(rand.NewSource(seed)))
		if !slices.Equal(m1.genes, m2.genes) {
			t.Errorf("Mutate with seed %d: %v and %v", seed, m1.genes, m2.genes)
		}
		if slices.Equal(m1.genes, a.genes) {
			t.Errorf("Mutate with seed %d changed nothing", seed)
		}
		for k, g := range m1.genes {
			if g < 0 || g >= cards[k] {
				t.Errorf("Mutate gene %d = %d out of [0, %d)", k, g, cards[k])
			}
		}
		if !slices.Equal(a.genes, []int{0, 1, 2, 3}) {
			t.Fatalf("Clone shares genes")
		}
	}
	f, _ := a.Evaluate()
	if f <= 0 || f >= overMemoryPenaltySeconds {
		t.Errorf("Evaluate() = %g; want a step time", f)
	}
}

func TestEvolveOptions(t *testing.T) {
	p := bowlProblem([]int{4, 4, 3}, []int{1, 1, 1}, 1e12)
	for _, ev := range []Evolve{
		{PopulationSize: 3},
		{MemoryCaps: []float64{1, 0}},
		{MutationRate: 2},
	} {
		if _, err := ev.Search(context.Background(), p); err == nil || !strings.HasPrefix(err.Error(), "search: ") {
			t.Errorf("Evolve%+v.Search error = %v; want a search: error", ev, err)
		}
	}
	r, err := Evolve{Seed: 1, Populations: 1, MemoryCaps: []float64{1}, MaxEvaluations: 10}.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Visited < 10 || r.Visited > 10+2*DefaultPopulationSize {
		t.Errorf("MaxEvaluations 10: visited %d", r.Visited)
	}
}

func TestMemoryCapsWidenFront(t *testing.T) {
	p := bowlProblem([]int{8, 8, 6, 6, 4, 4}, []int{5, 2, 3, 1, 2, 0}, 200e9)
	ex, err := Exhaustive{}.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := Evolve{Seed: 1, MemoryCaps: []float64{1}}.Search(context.Background(), p)
	all, _ := Evolve{Seed: 1}.Search(context.Background(), p)
	low := func(r *Result) float64 { return r.Front[len(r.Front)-1].MemoryBytes }
	t.Logf("least memory on the front: exhaustive %.3g, one run %.3g, default runs %.3g", low(ex), low(one), low(all))
	if low(all) != low(ex) {
		t.Errorf("default runs reach %g bytes at least; exhaustive %g", low(all), low(ex))
	}
}

func TestFitsAny(t *testing.T) {
	// 8^6 * 9 gene vectors, more than maxFitScan: the evolutionary path.
	// Memory is least (2.8 GB) at TP=PP=CP=FSDP=8 and MB=1.
	cards := []int{8, 8, 8, 8, 8, 8, 9}
	for _, tt := range []struct {
		usable float64
		want   bool
	}{{3e9, true}, {2.7e9, false}} {
		p := bowlProblem(cards, []int{0, 0, 0, 0, 0, 0, 0}, tt.usable)
		if got := fitsAny(context.Background(), p); got != tt.want {
			t.Errorf("fitsAny(usable %g) = %v; want %v", tt.usable, got, tt.want)
		}
		small := bowlProblem(cards[:6], []int{0, 0, 0, 0, 0, 0}, tt.usable)
		if got := fitsAny(context.Background(), small); got != tt.want {
			t.Errorf("fitsAny(small, usable %g) = %v; want %v", tt.usable, got, tt.want)
		}
	}
}

func TestTinySpace(t *testing.T) {
	p := bowlProblem([]int{1, 1}, []int{0, 0}, 1e12)
	for _, m := range []Method{Exhaustive{}, Evolve{Seed: 1}, Auto{}} {
		r, err := m.Search(context.Background(), p)
		if err != nil {
			t.Fatalf("%T.Search: %v", m, err)
		}
		if len(r.Front) != 1 || r.SpaceSize != 1 || r.Feasible != 1 {
			t.Errorf("%T.Search: front %d rows, size %d, feasible %d; want 1, 1, 1", m, len(r.Front), r.SpaceSize, r.Feasible)
		}
	}
}

// TestProgressEndsAtTotal wants every stage of a search to report its
// total as done at its end: the exhaustive search the space size its result
// states (layouts no class holds included), the evolutionary search its
// generations and then its polish rounds, each stage announced first.
func TestProgressEndsAtTotal(t *testing.T) {
	p := realProblem(t, "llama3-8b", "v5p-16", 32, 8192)
	for _, c := range []struct {
		name   string
		method func(prog func(done, total int64), stage func(string)) Method
		stages []string
	}{
		{"exhaustive", func(prog func(done, total int64), stage func(string)) Method {
			return Exhaustive{Progress: prog, Stage: stage}
		}, []string{"enumerating"}},
		{"evolve", func(prog func(done, total int64), stage func(string)) Method {
			return Evolve{Seed: 1, Progress: prog, Stage: stage}
		}, []string{"evolving", "polishing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var stages []string
			var last []int64 // last done of each stage
			var totals []int64
			prog := func(done, total int64) {
				mu.Lock()
				defer mu.Unlock()
				if len(stages) == 0 {
					t.Errorf("progress %d/%d before any stage", done, total)
					return
				}
				i := len(stages) - 1
				if done < last[i] || done > total || totals[i] != 0 && totals[i] != total {
					t.Errorf("stage %s: progress %d/%d after %d/%d", stages[i], done, total, last[i], totals[i])
				}
				last[i], totals[i] = done, total
			}
			stage := func(name string) {
				mu.Lock()
				defer mu.Unlock()
				stages, last, totals = append(stages, name), append(last, 0), append(totals, 0)
			}
			r, err := c.method(prog, stage).Search(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stages, c.stages) {
				t.Fatalf("stages %v, want %v", stages, c.stages)
			}
			for i := range stages {
				if totals[i] == 0 || last[i] != totals[i] {
					t.Errorf("stage %s ended at %d of %d", stages[i], last[i], totals[i])
				}
			}
			if c.name == "exhaustive" && totals[0] != r.SpaceSize {
				t.Errorf("exhaustive total %d, the result states %d gene vectors", totals[0], r.SpaceSize)
			}
		})
	}
}

func TestNoValidStrategyMessage(t *testing.T) {
	base := NoFitError{Model: "m", Cluster: "c-72", Workload: space.Workload{Batch: 512, SeqLen: 8192}}
	const what = "search: no valid strategy for m on c-72 with batch 512 of 8192-token sequences: "
	tests := []struct {
		framework  string
		fixed      bool
		fitCluster string
		want       string
	}{
		{"", false, "", what + "no layout of its chips suits the model's and the batch's shapes; try a batch that is a multiple of the chip count or a smaller cluster"},
		{"maxtext", false, "", what + "maxtext's rules reject every layout of its chips; try a batch that is a multiple of the chip count, a smaller cluster or another framework"},
		{"", true, "", what + "the fixed dimensions reject every layout of its chips; try a batch that is a multiple of the chip count, a smaller cluster or fewer fixed dimensions"},
		{"torchtitan", true, "", what + "the fixed dimensions and torchtitan's rules reject every layout of its chips; try a batch that is a multiple of the chip count, a smaller cluster, another framework or fewer fixed dimensions"},
		{"maxtext", false, "c-144", what + "maxtext's rules reject every layout of its chips; it would fit on c-144 (144 chips)"},
		{"generic", false, "", what + "generic's rules reject every layout of its chips; try a batch that is a multiple of the chip count or a smaller cluster"},
	}
	for _, tt := range tests {
		e := base
		e.Framework, e.Fixed = tt.framework, tt.fixed
		if tt.fitCluster != "" {
			e.FitCluster, e.FitChips = tt.fitCluster, 144
		}
		if got := e.Error(); got != tt.want {
			t.Errorf("framework %q, fixed %v, fit %q:\n got %s\nwant %s", tt.framework, tt.fixed, tt.fitCluster, got, tt.want)
		}
	}
}
