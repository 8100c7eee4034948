package cost

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestEvaluatorMatchesModel checks that an Evaluator, which reuses block
// costs between strategies that differ only in their pipeline schedule and
// recycles its working memory, gives exactly the estimate computed in fresh
// memory, for strategies of a space taken in the space's order and shuffled.
func TestEvaluatorMatchesModel(t *testing.T) {
	for _, tc := range []struct {
		model, cluster string
		batch          int    // 64 when 0
		fix            string // every strategy of the space when ""
	}{
		{"llama3-8b", "h100-32", 0, ""},
		{"mixtral-8x7b", "h100-32", 0, ""},
		{"llama2-7b", "v5p-64", 0, ""},
		// Sliding-window and full layers, experts, context parallelism's
		// windowed K/V exchange.
		{"../model/testdata/gpt-oss-20b.config.json", "h100-32", 0, ""},
		// Multi-head latent attention, shared experts, dense first layers,
		// multi-token prediction.
		{"deepseek-v3", "h800-64", 0, ""},
		// Many placements per degree tuple on a 3-D torus: einsum
		// outcomes under three operand states in one generation rotate
		// the memo's ways, and outcomes go stale after a rotation
		// (evaluator.memoFor); a memo that aliased its ways' emissions
		// fails here alone.
		{"llama2-70b", "v5p-256", 0, ""},
		// Every placement of degrees under which the weight-gradient
		// einsum dqkv/dxn's rules choose differently on some placements
		// (fsdp on y*4 or on y*2.z*2): stale outcomes that resolve again
		// differently (evaluator.einsum, evaluator.revalidate), and the
		// roles' choices kept per collective model (roleChoices) as the
		// shuffled orders revisit placements.
		{"llama2-70b", "v5p-256", 1024, "dp=4,fsdp=4,tp=2,cp=2,pp=2,mb=1,zero=1,schedule=1f1b"},
		// The same placements under every ZeRO stage: a block's costs
		// with and without ZeRO-2 share their recompute pass
		// (evaluator.revalidateFrom).
		{"llama2-70b", "v5p-256", 1024, "dp=4,fsdp=4,tp=2,cp=2,pp=2,mb=1,schedule=1f1b"},
	} {
		t.Run(fmt.Sprintf("%s/%s/batch-%d", filepath.Base(tc.model), tc.cluster, max(tc.batch, 64)), func(t *testing.T) {
			m, c := presets(t, tc.model, tc.cluster)
			w := space.Workload{Batch: max(tc.batch, 64), SeqLen: 4096}
			stride := func(i int64) int64 { return 1 + i%3 } // a sample of the space's order
			if tc.fix != "" {
				stride = func(int64) int64 { return 1 } // every strategy of the fixed degrees
			}
			strategies := spaceStrategies(t, m, c, w, tc.fix, stride, 2000)
			if len(strategies) < 100 {
				t.Fatalf("only %d valid strategies decoded", len(strategies))
			}
			cm := NewModel(program(m, model.ProgramOptions{}))
			for _, o := range []Options{{SkipCollectives: true}, {}} {
				checkEvaluator(t, cm, c, w, strategies, o)
			}
		})
	}
}

// spaceStrategies returns the valid strategies of the space of m on c with
// workload w and fixed genes fix, decoded from index 0 on by steps of
// stride(index), at most limit of them (all when limit is negative).
func spaceStrategies(t *testing.T, m model.Spec, c profiles.Cluster, w space.Workload, fix string, stride func(int64) int64, limit int) []space.Strategy {
	t.Helper()
	f, err := space.ParseFix(fix)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := space.New(m, c, w, f)
	if err != nil {
		t.Fatal(err)
	}
	var out []space.Strategy
	genes := make([]int, space.NumGenes)
	for i := int64(0); i < sp.Size() && (limit < 0 || len(out) < limit); i += stride(i) {
		var s space.Strategy
		if sp.DecodeIndex(i, genes, &s) {
			out = append(out, s)
		}
	}
	return out
}

func checkEvaluator(t *testing.T, cm *Model, c profiles.Cluster, w space.Workload, strategies []space.Strategy, o Options) {
	t.Helper()
	want := make([]Estimate, len(strategies))
	traced := o
	traced.Trace = true
	for i, s := range strategies {
		got, err := cm.NewEvaluator(c, w, o).Evaluate(s)
		if err != nil {
			t.Fatalf("Evaluate(%v): %v", s.String(), err)
		}
		want[i] = got
		// A traced evaluation resolves the rules of every op afresh (no
		// memoised einsum outcomes): the same estimate, with its ops and
		// collectives.
		ref, err := cm.NewEvaluator(c, w, traced).Evaluate(s)
		if err != nil {
			t.Fatalf("traced Evaluate(%v): %v", s.String(), err)
		}
		checkPasses(t, s.String(), ref)
		ref.Ops, ref.Passes = nil, nil
		if o.SkipCollectives {
			ref.Collectives = nil
		}
		if !reflect.DeepEqual(got, ref) {
			t.Fatalf("Evaluate(%v) = %+v; traced %+v", s.String(), got, ref)
		}
	}
	order := make([]int, len(strategies))
	for i := range order {
		order[i] = i
	}
	shuffled := append([]int(nil), order...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// Shuffled within runs of one degree tuple, micro-batch and sequence
	// parallelism: every change of placement, recompute policy, ZeRO stage
	// and schedule follows every other (Model.remesh).
	grouped := append([]int(nil), shuffled...)
	slices.SortStableFunc(grouped, func(a, b int) int {
		sa, sb := &strategies[a], &strategies[b]
		if c := slices.Compare(sa.Degree[:], sb.Degree[:]); c != 0 {
			return c
		}
		if c := cmp.Compare(sa.MB, sb.MB); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(sa.SP), boolInt(sb.SP))
	})
	// Each mesh's name for EvaluatePlacedTo: one per distinct mesh, and
	// none (-1) for every seventh strategy.
	names := map[string]int64{}
	placement := make([]int64, len(strategies))
	for i := range strategies {
		k := fmt.Sprint(strategies[i].Mesh)
		if _, ok := names[k]; !ok {
			names[k] = int64(len(names))
		}
		placement[i] = names[k]
		if i%7 == 6 {
			placement[i] = -1
		}
	}
	for _, run := range []struct {
		name  string
		order []int
	}{{"in order", order}, {"shuffled", shuffled}, {"shuffled within a shape", grouped}} {
		ev, named := cm.NewEvaluator(c, w, o), cm.NewEvaluator(c, w, o)
		for _, i := range run.order {
			s := strategies[i]
			if got, err := ev.Evaluate(s); err != nil || !reflect.DeepEqual(got, want[i]) {
				t.Fatalf("%s: Evaluator.Evaluate(%v) = %+v, %v; want %+v", run.name, s.String(), got, err, want[i])
			}
			var got Estimate
			if err := named.EvaluatePlacedTo(&s, placement[i], &got); err != nil || !reflect.DeepEqual(got, want[i]) {
				t.Fatalf("%s: Evaluator.EvaluatePlacedTo(%v, %d) = %+v, %v; want %+v", run.name, s.String(), placement[i], got, err, want[i])
			}
		}
	}
}

// TestKeyCompare checks segmentKey.compare against the equality of the
// keys' fields it groups, on keys that differ in each field.
func TestKeyCompare(t *testing.T) {
	base := segmentKey{deg: space.Degrees{space.TP: 2, space.DP: 4}, mb: 1, recompute: "full", placement: -1}
	base.shares[0].axis, base.shares[0].size = 1, 4
	vary := []func(k *segmentKey){
		func(k *segmentKey) {},
		func(k *segmentKey) { k.deg[space.TP] = 4 },
		func(k *segmentKey) { k.mb = 2 },
		func(k *segmentKey) { k.sp = true },
		func(k *segmentKey) { k.zero2 = true },
		func(k *segmentKey) { k.recompute = "none" },
		func(k *segmentKey) { k.shares[0].axis = 2 },
		func(k *segmentKey) { k.shares[1].size = 2 },
		func(k *segmentKey) { k.shares[0].dim = uint8(space.TP) },
		func(k *segmentKey) { k.dispatcher = space.DispatcherDeepEP },
	}
	for i, f := range vary {
		k := base
		f(&k)
		a, b := k, base
		a.recompute, a.zero2, b.recompute, b.zero2 = "", false, "", false
		forward := a == b
		a.shares, b.shares = keyShares{}, keyShares{}
		shape, placed, same := k.compare(&base)
		if shape != (a == b) || placed != forward || same != (k == base) {
			t.Errorf("variant %d: compare = %v, %v, %v; want %v, %v, %v", i, shape, placed, same, a == b, forward, k == base)
		}
	}
	// Named placements: the same name stands for the same shares, and
	// other names compare the shares.
	for _, tc := range []struct {
		a, b   int64
		shares bool // b's shares differ from a's
		placed bool
	}{
		{3, 3, false, true},
		{3, 4, false, true},
		{3, 4, true, false},
		{-1, -1, true, false},
	} {
		k, o := base, base
		k.placement, o.placement = tc.a, tc.b
		if tc.shares {
			o.shares[0].size = 8
		}
		if _, placed, _ := k.compare(&o); placed != tc.placed {
			t.Errorf("placements %d and %d (other shares %v): placed = %v; want %v", tc.a, tc.b, tc.shares, placed, tc.placed)
		}
	}
}

// boolInt is 1 for true and 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestKeyOfSegments checks the mesh shares of a segment key: the same
// placement gives the same key, another axis or size another, and a share
// on an axis the cluster lacks no key (the strategy is evaluated afresh).
func TestKeyOfSegments(t *testing.T) {
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	key := func(spec string) (segmentKey, bool) {
		s := parseStrategy(t, spec)
		return keyOfSegments(&s, c.Axes)
	}
	base, ok := key("tp=8,dp=8,mesh=tp:gpu;dp:node")
	if !ok {
		t.Fatal("no key for a placed strategy")
	}
	for _, tc := range []struct {
		spec     string
		ok, same bool
	}{
		{"tp=8,dp=8,mesh=tp:gpu;dp:node", true, true},
		{"tp=8,dp=8,zero=1,mesh=tp:gpu;dp:node", true, true},
		{"tp=8,dp=8,mesh=tp:gpu*4.node*2;dp:gpu*2.node*4", true, false},
		{"tp=8,dp=8,mesh=tp:node;dp:gpu", true, false},
		{"tp=8,dp=8,mesh=tp:x;dp:node", false, false},
	} {
		k, ok := key(tc.spec)
		if ok != tc.ok || ok && (k.shares == base.shares) != tc.same {
			t.Errorf("%s: key ok %v, same shares as the base %v; want %v, %v", tc.spec, ok, k.shares == base.shares, tc.ok, tc.same)
		}
	}
}

// TestEvaluatorReprices checks a placement that changes how the rules
// resolve an op (evaluator.reprice applies only when they resolve as
// before): on llama2-70b / v5p-256, tp on a whole ring of x and then split
// over x and y resolves one op of the second differently from the first,
// and the Evaluator must give the second's fresh estimate.
func TestEvaluatorReprices(t *testing.T) {
	m, c := presets(t, "llama2-70b", "v5p-256")
	var strategies []space.Strategy
	for _, spec := range []string{
		"dp=32,zero=2,tp=4,mb=4,recompute=full,mesh=tp:x*4;dp:y*4.z*8",
		"dp=32,zero=2,tp=4,mb=4,recompute=full,mesh=tp:x*2.y*2;dp:x*2.y*2.z*8",
	} {
		strategies = append(strategies, parseStrategy(t, spec))
	}
	cm := NewModel(program(m, model.ProgramOptions{}))
	checkEvaluator(t, cm, c, space.Workload{Batch: 1024, SeqLen: 4096}, strategies, Options{})
}

// TestResolveRolesKeepsOthers checks what evaluator.resolveRoles rests on:
// each role's part of a resolution comes from that role's choice alone,
// so choosing again for any subset of the roles, from a resolution whose
// bits for that subset are wrong, gives back the whole resolution; and
// what its memo of choices (roleChoices) rests on: for the roles of an
// outcome's dep, the stale path's moved roles, a fresh choice prices the
// role unless its plan fixes the choice (then one of the op's collectives
// holds it, and a requote prices it again), and a choice taken from the
// memo gives the same resolution and dep. It runs over every einsum outcome one evaluation of llama2-70b on
// v5p-256 records.
func TestResolveRolesKeepsOthers(t *testing.T) {
	m, c := presets(t, "llama2-70b", "v5p-256")
	s := parseStrategy(t, "dp=2,fsdp=8,tp=4,cp=2,zero=1,mb=1,recompute=full,mesh=tp:x*4;cp:y*2;fsdp:y*2.z*4;dp:z*2")
	ev := NewModel(program(m, model.ProgramOptions{})).NewEvaluator(c, space.Workload{Batch: 256, SeqLen: 4096}, Options{})
	if _, err := ev.Evaluate(s); err != nil {
		t.Fatal(err)
	}
	e := &ev.st.e
	checked := 0
	for i := range e.memo {
		mo := &e.memo[i]
		if mo.gen != e.gen || mo.x.o == nil {
			continue
		}
		x := mo.x
		want := e.resolve(&x)
		if want != mo.rs {
			t.Fatalf("op %d resolves as %+v, recorded %+v", i, want, mo.rs)
		}
		var emitted roleSet
		for _, em := range mo.emit {
			emitted |= em.roles
		}
		if lost := mo.dep & mo.plans.fixed &^ emitted; lost != 0 {
			t.Fatalf("op %d: roles %08b of its dep have a fixed choice and no collective", i, lost)
		}
		roles := x.ra | x.rb | x.rc
		for sub := roleSet(0); sub <= roles; sub++ {
			if sub&^roles != 0 {
				continue
			}
			wrong := want ^ resolution(uint64(sub)*lanes) // sub flipped in every lane
			e.opDep = 0
			if got := e.resolveRoles(&x, wrong, sub, nil, nil); got != want {
				t.Fatalf("op %d: resolveRoles over %08b = %+v, want %+v", i, sub, got, want)
			}
			dep := e.opDep
			e.opDep = 0
			if got := e.resolveRoles(&x, wrong, sub, nil, &mo.plans); got != want || e.opDep != dep {
				t.Fatalf("op %d: resolveRoles over %08b with the memo's plans = %+v with dep %08b, want %+v with %08b", i, sub, got, e.opDep, want, dep)
			}
			checked++
			if sub&^mo.dep != 0 {
				continue
			}
			// A role whose plan fixes its choice is chosen without
			// pricing: it is in the dep through the op's emissions, which
			// a requote prices again (checked below).
			fixed := sub & mo.plans.fixed
			if e.opDep&sub != sub&^fixed {
				t.Fatalf("op %d: choosing %08b of its dep %08b afresh priced %08b only", i, sub, mo.dep, e.opDep)
			}
			e.opDep = mo.dep &^ sub
			if got := e.resolveRoles(&x, wrong, sub, &mo.choices, &mo.plans); got != want || e.opDep != mo.dep&^fixed {
				t.Fatalf("op %d: resolveRoles over %08b from the memo = %+v with dep %08b, want %+v with %08b", i, sub, got, e.opDep, want, mo.dep&^fixed)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d (op, roles) pairs checked", checked)
	}
	t.Logf("%d (op, roles) pairs", checked)
}

// TestEmissionHoldsNoPointers checks that an emission is plain memory (its
// reason an index into the Model's texts, whyID): the passes copy and
// replay emissions by the thousand per strategy, and a pointer in them
// would put the garbage collector's write barrier on every copy.
func TestEmissionHoldsNoPointers(t *testing.T) {
	typ := reflect.TypeFor[emission]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Type.Kind() {
		case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
			reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Float64:
		default:
			t.Errorf("emission.%s is a %s; want a number or a bool", f.Name, f.Type.Kind())
		}
	}
}

// TestRevalidateFromStaleSource checks that a block cost made current from
// another cost of its block (evaluator.revalidateFrom, as swapBlock does
// with the cost it puts aside) takes only the source's current passes: a
// recompute pass priced under an earlier placement is revalidated from the
// cost's own op outcomes, not copied, and the cost is then current and the
// estimate it gives is a fresh evaluation's.
func TestRevalidateFromStaleSource(t *testing.T) {
	cm, c, w, placed := placements(t, "llama2-70b", "v5p-256", "dp=4,fsdp=4,tp=2,cp=2,pp=2,mb=1,zero=1,schedule=1f1b,recompute=full")
	o := Options{SkipCollectives: true}
	for _, s2 := range placed[1:] {
		ev := cm.NewEvaluator(c, w, o)
		s1 := placed[0]
		for _, s := range []space.Strategy{s1, zero2(s1), zero2(s2)} {
			if _, err := ev.Evaluate(s); err != nil {
				t.Fatal(err)
			}
		}
		e, st := &ev.st.e, &ev.st
		moved := e.movedSince(^roleSet(0), 0)
		if moved == 0 {
			continue // a placement that prices as the first: nothing is stale
		}
		checked := 0
		for b, cur := range st.blocks {
			if e.m.idle[b] || !e.freshBlock(cur) {
				continue
			}
			for j, sc := range st.spares[b].sc {
				k := st.spares[b].key[j]
				if sc == nil || st.spares[b].gen[j] != e.gen || k.rerun != st.keys[b].rerun || k.zero >= 2 || e.freshBlock(sc) {
					continue
				}
				// A source whose recompute pass is of an earlier placement.
				src := new(segCost)
				for r := range src.runs {
					src.runs[r].copyFrom(&cur.runs[r])
				}
				src.runs[1].dep, src.runs[1].at = moved, 0
				if !e.revalidateFrom(b, sc, src, true) {
					t.Fatalf("%s: block %d: the cost with ZeRO-1 was not made current", &s2, b)
				}
				if !e.freshBlock(sc) {
					t.Fatalf("%s: block %d: a stale pass of the source was taken", &s2, b)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Fatalf("%s: no stale cost with ZeRO-1 beside a current one with ZeRO-2", &s2)
		}
		got, err := ev.Evaluate(s2)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cm.NewEvaluator(c, w, o).Evaluate(s2)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %+v, %v; fresh %+v", &s2, got, err, want)
		}
		return
	}
	t.Fatal("no placement moves a role's collectives")
}

// zero2 returns s with ZeRO stage 2.
func zero2(s space.Strategy) space.Strategy {
	s.Zero = 2
	return s
}

// TestRevalidateFromOtherRecompute checks a block's cost with ZeRO-2 made
// current from a source whose recompute pass a placement since resolved
// differently: the backward pass starts from the weights the recompute
// pass gathered, so the source's recompute pass may be taken only when it
// used the same outcomes (evaluator.revalidateFrom). Each pair of
// placements of mixtral-8x7b's degrees on a 3-D torus is evaluated in the
// order ZeRO-2 and ZeRO-1 under the first, ZeRO-1 and ZeRO-2 under the
// second, against a fresh evaluation.
func TestRevalidateFromOtherRecompute(t *testing.T) {
	cm, c, w, placed := placements(t, "mixtral-8x7b", "v5p-512", "dp=32,fsdp=2,tp=4,ep=4,etp=4,mb=1,zero=1,schedule=1f1b,recompute=full")
	o := Options{SkipCollectives: true}
	for _, s1 := range placed {
		for _, s2 := range placed {
			ev := cm.NewEvaluator(c, w, o)
			var got Estimate
			for _, s := range []space.Strategy{zero2(s1), s1, s2, zero2(s2)} {
				var err error
				if got, err = ev.Evaluate(s); err != nil {
					t.Fatal(err)
				}
			}
			want, err := cm.NewEvaluator(c, w, o).Evaluate(zero2(s2))
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s after %s: %+v, %v; fresh %+v", &s2, &s1, got, err, want)
			}
		}
	}
}

// placements returns the cost model of preset modelName, cluster
// clusterName, a workload of 1024 sequences of 4096 tokens and every
// placement of the strategy fix fixes but for its placement (at least two).
func placements(t *testing.T, modelName, clusterName, fix string) (*Model, profiles.Cluster, space.Workload, []space.Strategy) {
	t.Helper()
	m, c := presets(t, modelName, clusterName)
	w := space.Workload{Batch: 1024, SeqLen: 4096}
	placed := spaceStrategies(t, m, c, w, fix, func(int64) int64 { return 1 }, -1)
	if len(placed) < 2 {
		t.Fatalf("%d placements", len(placed))
	}
	return NewModel(program(m, model.ProgramOptions{})), c, w, placed
}

// TestModelEvaluateOptionsChange checks that Model.Evaluate, which
// recycles its working memory across calls, prices each call under that
// call's options: a framework's overlap of the FSDP weight traffic and of
// the step's gradient reduction (Comm.WeightOverlap, Comm.GradOverlap)
// gives what a fresh model gives, whatever the calls before it asked.
func TestModelEvaluateOptionsChange(t *testing.T) {
	m, c := presets(t, "llama3-8b", "h100-64")
	w := space.Workload{Batch: 64, SeqLen: 8192}
	s := parseStrategy(t, "fsdp=8,dp=8,mb=1,zero=1,schedule=1f1b,recompute=full")
	none, half := 0.0, 0.5
	opts := []Options{
		{},
		{Comm: Comm{WeightOverlap: &none}},
		{Comm: Comm{GradOverlap: &none}},
		{Comm: Comm{WeightOverlap: &half, GradOverlap: &half}},
		{},
	}
	p := program(m, model.ProgramOptions{})
	shared := NewModel(p)
	seen := map[float64]bool{}
	for i, o := range opts {
		want, err := NewModel(p).Evaluate(c, w, s, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := shared.Evaluate(c, w, s, o)
		if err != nil {
			t.Fatal(err)
		}
		if got.StepSeconds != want.StepSeconds || got.ExposedCommSeconds != want.ExposedCommSeconds {
			t.Errorf("options %d (%+v): a recycled evaluation gives %.6f s, a fresh one %.6f s", i, o.Comm, got.StepSeconds, want.StepSeconds)
		}
		seen[want.StepSeconds] = true
	}
	if len(seen) < 3 {
		t.Fatalf("the options give %d step times; want them to differ, or the test checks nothing", len(seen))
	}
}
