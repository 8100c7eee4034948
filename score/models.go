// Package score assembles the planner's scoring of a strategy from the
// [cost] and [memory] models: the variants of one model's layer program
// (the sharded program, fp8 projections, whole experts), which variant
// prices a strategy, and the scorers a search calls, each goroutine's with
// evaluators of its own.
//
// [New] builds a model's [Models]; [Models.Scorer] prices strategies on a
// cluster and workload with them, and [Scorer.Worker] gives a goroutine a
// [Worker] that keeps, per variant ([Key]), a cost.Evaluator, a
// cost.Bounder and a memory.Estimator across strategies. Package search
// states the problem and searches it; it asks of a scorer only what its
// interfaces declare.
package score

import (
	"fmt"
	"sync"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// Key names a variant of the layer program by the program options that set
// it apart from the model's program: a Worker keeps its evaluators per
// Key. Adding a variant adds a field here and a step to the pick.
type Key struct {
	// Sharded is the sharded program (New's sharded options), for the
	// strategies with fsdp or cp above 1.
	Sharded bool
	// FP8 is the program with its projections in fp8
	// (model.ProgramOptions.FP8), for precision=fp8.
	FP8 bool
	// Whole is the program with each expert's matrices whole on every tp
	// chip (model.ProgramOptions.ExpertsWhole), for etp=1 on a
	// mixture-of-experts model.
	Whole bool
	// BF16Weights is the program with bf16 parameters, gradients and
	// moments (model.Precision.BF16Weights), for weights=bf16.
	BF16Weights bool
	// BF16Moments is the program with Adam's moments in bf16 beside fp32
	// master weights (model.Precision.BF16Moments), for
	// weights=bf16-moments.
	BF16Moments bool
}

// Models are the planner's models of one layer program and its variants:
// the program, the cost and memory models derived from it, and the
// variants' models, built on first use but the sharded program's. They are
// immutable and safe for concurrent use.
type Models struct {
	// key names this variant.
	key     Key
	program *model.Program
	cost    *cost.Model
	memory  *memory.Model
	// sharded, when not nil, are the models of the strategies that shard
	// the weights or the sequence (New's sharded options).
	sharded *Models
	// fp8 are the same models with the projections in fp8 (New's recipe),
	// built on first use.
	fp8 *lazyModels
	// whole, for a mixture-of-experts model, are the same models with each
	// expert's matrices whole on every tp chip (etp=1,
	// model.ProgramOptions.ExpertsWhole), built on first use.
	whole *lazyModels
	// bf16w are the same models with bf16 weights (weights=bf16), built on
	// first use; nil for a variant that has them.
	bf16w *lazyModels
	// bf16m are the same models with bf16 Adam moments
	// (weights=bf16-moments), built on first use; nil for a variant that
	// has them or bf16 weights.
	bf16m *lazyModels
}

// New builds the models of m under program, and, when sharded is not nil,
// those of m under *sharded for the strategies that shard the weights over
// fsdp or split the sequence over cp: a framework whose mixed precision
// changes with them (torchtitan hands it to FSDP2's fully_shard there, to
// torch.autocast elsewhere). recipe is the fp8 recipe of the strategies
// with precision=fp8; nil means Transformer Engine's delayed scaling
// (model.FP8Delayed). The fp8 and whole-experts variants are built on
// first use. Its error is about the input: a recipe or a model the program
// cannot describe.
func New(m model.Spec, program model.ProgramOptions, sharded *model.ProgramOptions, recipe *model.FP8Recipe) (*Models, error) {
	fp8, _ := model.LookupFP8Recipe(model.FP8Delayed)
	if recipe != nil {
		fp8 = *recipe
	}
	if err := fp8.Validate(); err != nil {
		return nil, err
	}
	ms, err := newModels(m, program, Key{})
	if err != nil {
		return nil, err
	}
	ms.fp8 = newLazyModels(m, program, fp8, Key{FP8: true})
	ms.whole = newWholeModels(m, program, fp8, Key{Whole: true})
	if sharded != nil {
		if ms.sharded, err = newModels(m, *sharded, Key{Sharded: true}); err != nil {
			return nil, err
		}
		ms.sharded.fp8 = newLazyModels(m, *sharded, fp8, Key{Sharded: true, FP8: true})
		ms.sharded.whole = newWholeModels(m, *sharded, fp8, Key{Sharded: true, Whole: true})
	}
	return ms, nil
}

// Program returns the model's layer program (the variant of Key{}).
func (ms *Models) Program() *model.Program { return ms.program }

// Variant returns the key and the layer program of the variant that
// scores s, building it on first use.
func (ms *Models) Variant(s *space.Strategy) (Key, *model.Program, error) {
	v, err := ms.pick(s)
	if err != nil {
		return Key{}, nil, err
	}
	return v.key, v.program, nil
}

// lazyModels builds the models of one layer program on first use; safe for
// concurrent use.
type lazyModels struct {
	once sync.Once
	key  Key
	spec model.Spec
	opts model.ProgramOptions
	// recipe, when not nil, is the fp8 recipe the built models' own fp8
	// variant takes (for the whole-experts models).
	recipe *model.FP8Recipe
	ms     *Models
	err    error
}

// newLazyModels describes the models of m under o with recipe's fp8
// matmuls, the variant key names.
func newLazyModels(m model.Spec, o model.ProgramOptions, recipe model.FP8Recipe, key Key) *lazyModels {
	o.FP8 = &recipe
	return &lazyModels{key: key, spec: m, opts: o}
}

// newWholeModels describes the models of m under o with whole experts
// (etp=1), the variant key names, whose fp8 variant takes recipe; nil for
// a dense model.
func newWholeModels(m model.Spec, o model.ProgramOptions, recipe model.FP8Recipe, key Key) *lazyModels {
	if m.MoE == nil {
		return nil
	}
	o.ExpertsWhole = true
	return &lazyModels{key: key, spec: m, opts: o, recipe: &recipe}
}

// get builds the models once and returns them.
func (l *lazyModels) get() (*Models, error) {
	l.once.Do(func() {
		l.ms, l.err = newModels(l.spec, l.opts, l.key)
		if l.err == nil && l.recipe != nil {
			fp8 := l.key
			fp8.FP8 = true
			l.ms.fp8 = newLazyModels(l.spec, l.opts, *l.recipe, fp8)
		}
	})
	return l.ms, l.err
}

// newModels builds the layer program of m under o and its models, the
// variant key names.
func newModels(m model.Spec, o model.ProgramOptions, key Key) (*Models, error) {
	prog, err := model.NewProgram(m, o)
	if err != nil {
		return nil, err
	}
	ms := &Models{key: key, program: prog, cost: cost.NewModel(prog), memory: memory.NewModel(prog)}
	if !key.BF16Weights && !key.BF16Moments {
		w := o
		w.Precision = w.Precision.BF16Weights()
		k := key
		k.BF16Weights = true
		ms.bf16w = &lazyModels{key: k, spec: m, opts: w}
		bm := o
		bm.Precision = bm.Precision.BF16Moments()
		k = key
		k.BF16Moments = true
		ms.bf16m = &lazyModels{key: k, spec: m, opts: bm}
	}
	return ms, nil
}

// shards reports whether s shards the weights over fsdp or splits the
// sequence over cp, the strategies New's sharded program applies to
// (torchtitan's ParallelDims.fsdp_enabled: dp_shard or cp above 1).
func shards(s *space.Strategy) bool {
	return s.Degree[space.FSDP] > 1 || s.Degree[space.CP] > 1
}

// pick returns the models that score s, whose key names them among a
// worker's evaluators: the sharded program's (fsdp or cp above 1) when
// there is one, with whole experts for etp=1 (Strategy.ExpertsWhole), with
// 8-bit projections for precision=fp8 and int8 (the int8 rate is cost's). Its errors keep the "search:" prefix that plans
// print.
func (ms *Models) pick(s *space.Strategy) (*Models, error) {
	m := ms
	if ms.sharded != nil && shards(s) {
		m = ms.sharded
	}
	if s.ExpertsWhole() && m.whole != nil {
		w, err := m.whole.get()
		if err != nil {
			return nil, fmt.Errorf("search: the layer program with whole experts: %w", err)
		}
		m = w
	}
	if s.EightBit() {
		if m.fp8 == nil {
			return nil, fmt.Errorf("search: precision=%s has no layer program here", s.Precision)
		}
		f, err := m.fp8.get()
		if err != nil {
			return nil, fmt.Errorf("search: the fp8 layer program: %w", err)
		}
		m = f
	}
	var l *lazyModels
	switch {
	case s.BF16Weights():
		l = m.bf16w
	case s.BF16Moments():
		l = m.bf16m
	default:
		return m, nil
	}
	if l == nil {
		return nil, fmt.Errorf("search: weights=%s has no layer program here", s.Weights)
	}
	w, err := l.get()
	if err != nil {
		return nil, fmt.Errorf("search: the layer program with weights=%s: %w", s.Weights, err)
	}
	return w, nil
}
