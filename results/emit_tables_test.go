package results

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// keyTable is a framework's flags or keys and, for those it restricts,
// their choices, as testdata/emit/*.txt hold them (extract.py wrote them
// from the framework's source at the commit in the file's first line).
type keyTable map[string][]string

// readKeyTable reads one table of testdata/emit and checks that its
// header names the commit the emitter targets.
func readKeyTable(t *testing.T, name, framework string) keyTable {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "emit", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab := keyTable{}
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			r := releaseOf(framework)
			if !strings.Contains(line, r.Repo+"@"+r.Commit) {
				t.Fatalf("%s: header %q does not name %s@%s, the release the emitter targets", name, line, r.Repo, r.Commit)
			}
			continue
		}
		key, choices, _ := strings.Cut(line, "\t")
		tab[key] = nil
		if choices != "" {
			tab[key] = strings.Split(choices, ",")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tab
}

// check reports a key the table lacks or a value outside its choices.
func (tab keyTable) check(key, value string) error {
	choices, ok := tab[key]
	switch {
	case !ok:
		return fmt.Errorf("%s is not a key of the framework", key)
	case len(choices) > 0 && value != "" && !slices.Contains(choices, value):
		return fmt.Errorf("%s %q is not one of %s", key, value, strings.Join(choices, ", "))
	}
	return nil
}

// emitCase is one strategy of the grid, on one model, cluster and workload.
type emitCase struct {
	model, cluster string
	w              space.Workload
	strategy       string
}

// emitGrid returns strategies over every parallel dimension, schedule,
// recompute policy, ZeRO stage and precision, on GPU and TPU clusters.
func emitGrid() []emitCase {
	var out []emitCase
	dense := space.Workload{Batch: 64, SeqLen: 8192}
	layouts := []string{
		"dp=64", "fsdp=64", "dp=8,tp=8", "fsdp=8,tp=8", "dp=2,fsdp=4,tp=8", "fsdp=4,tp=8,cp=2",
		"dp=4,tp=8,cp=2", "fsdp=2,tp=8,pp=4", "dp=2,tp=8,pp=4", "dp=4,fsdp=2,tp=8", "dp=2,tp=4,cp=2,pp=4",
		"dp=8,tp=8,mesh=tp:gpu*8;dp:node*8", "dp=8,tp=4,pp=2,mesh=tp:gpu*4;dp:gpu*2.node*4;pp:node*2",
		// Placements outside Megatron-LM's rank order with Megatron-FSDP:
		// tp across nodes beside fsdp inside, cp across nodes beside fsdp.
		"fsdp=16,tp=4,mesh=tp:gpu*2.node*2;fsdp:gpu*4.node*4", "fsdp=32,cp=2,mesh=cp:node*2;fsdp:gpu*8.node*4",
		// Stages of different sizes, on every schedule.
		"fsdp=2,tp=8,pp=4,first=6,last=6",
	}
	schedules := []string{"1f1b", "gpipe", "interleaved,v=2", "interleaved,v=4", "zb-h1", "zb-v", "dualpipe", "dualpipev"}
	for _, l := range layouts {
		var scheds []string
		if strings.Contains(l, "pp=") {
			for _, s := range schedules {
				scheds = append(scheds, ",schedule="+s)
			}
		} else {
			scheds = []string{""}
		}
		for _, sc := range scheds {
			for _, r := range model.PolicyNames() {
				for _, prec := range []string{"bf16", "fp8"} {
					for z := range 3 {
						if z > 0 && !strings.HasPrefix(l, "dp=") {
							continue
						}
						s := fmt.Sprintf("%s%s,recompute=%s,precision=%s,zero=%d", l, sc, r, prec, z)
						out = append(out, emitCase{"llama3-8b", "h100-64", dense, s})
					}
				}
			}
		}
	}
	moe := space.Workload{Batch: 256, SeqLen: 4096}
	for _, s := range []string{
		"dp=16,tp=4,ep=8,etp=4", "dp=16,tp=4,ep=8,etp=1", "fsdp=16,tp=4,ep=8,etp=4", "fsdp=16,tp=4,ep=8,etp=1",
		"dp=64,ep=8", "fsdp=64,ep=8", "dp=8,fsdp=8,ep=8", "dp=8,tp=4,pp=2,ep=8,etp=4",
	} {
		for _, r := range []string{"none", "full", "minimal"} {
			out = append(out, emitCase{"mixtral-8x7b", "h100-64", moe, s + ",recompute=" + r})
		}
	}
	tpu := space.Workload{Batch: 64, SeqLen: 8192}
	for _, s := range []string{"fsdp=32", "dp=2,fsdp=16", "fsdp=16,tp=2", "fsdp=8,pp=4,schedule=gpipe", "fsdp=8,pp=4,schedule=interleaved,v=2", "fsdp=8,cp=4"} {
		for _, r := range model.PolicyNames() {
			out = append(out, emitCase{"llama3-8b", "v5p-64", tpu, s + ",recompute=" + r})
			out = append(out, emitCase{"llama3-8b", "2xv5p-64", tpu, s + ",recompute=" + r})
		}
		// AQT's int8 matmuls (MaxText's quantization: int8) on TPUs.
		out = append(out, emitCase{"llama3-8b", "v5p-64", tpu, s + ",recompute=minimal,precision=int8"})
	}
	return out
}

// TestEmitAgainstFrameworkTables emits every strategy of the grid for every
// framework and checks what is emitted against the framework's own flags or
// keys and choices (testdata/emit) and its divisibility rules, and that the
// run it describes is the strategy's. A refusal must be an *EmitError; every
// recompute policy, schedule and precision the framework's profile offers
// must be emitted at least once.
func TestEmitAgainstFrameworkTables(t *testing.T) {
	tables := map[string]keyTable{
		Megatron:   readKeyTable(t, "megatron-flags.txt", Megatron),
		TorchTitan: readKeyTable(t, "torchtitan-keys.txt", TorchTitan),
		MaxText:    readKeyTable(t, "maxtext-keys.txt", MaxText),
		DeepSpeed:  readKeyTable(t, "deepspeed-keys.txt", DeepSpeed),
	}
	emitted := map[string]map[string]bool{}
	for _, f := range Frameworks() {
		emitted[f] = map[string]bool{}
	}
	models := map[string]model.Spec{}
	clusters := map[string]profiles.Cluster{}
	for _, tc := range emitGrid() {
		m, ok := models[tc.model]
		if !ok {
			var err error
			if m, err = model.Preset(tc.model); err != nil {
				t.Fatal(err)
			}
			models[tc.model] = m
		}
		c, ok := clusters[tc.cluster]
		if !ok {
			var err error
			if c, err = profiles.Parse(tc.cluster); err != nil {
				t.Fatal(err)
			}
			clusters[tc.cluster] = c
		}
		s, err := space.Parse(tc.strategy)
		if err != nil {
			t.Fatalf("%s: %v", tc.strategy, err)
		}
		if s.Validate(m, c, tc.w) != nil {
			continue // not a strategy of this problem
		}
		if s, err = s.Place(c); err != nil {
			continue
		}
		e := Evaluation{Model: m, Cluster: c, Workload: tc.w, Strategy: s}
		for _, f := range Frameworks() {
			if s.FP8() {
				p, _ := framework.Builtin(f)
				if p.FP8 == nil {
					continue
				}
				e.FP8Recipe = p.FP8.Name
			}
			var b strings.Builder
			err := Emit(&b, f, e)
			if err != nil {
				if !IsEmitError(err) {
					t.Errorf("%s on %s, %s: %v is not an EmitError", tc.strategy, tc.cluster, f, err)
				}
				continue
			}
			for _, bad := range checkEmitted(f, tables[f], e, b.String()) {
				t.Errorf("%s on %s %s, --emit %s: %s\n%s", tc.strategy, tc.model, tc.cluster, f, bad, b.String())
			}
			emitted[f]["recompute="+s.Recompute] = true
			emitted[f]["precision="+s.Precision] = true
			if s.Degree[space.PP] > 1 {
				emitted[f]["schedule="+string(s.Schedule)] = true
			}
			for d := range space.NumDims {
				if s.Degree[d] > 1 {
					emitted[f][space.Dim(d).String()] = true
				}
			}
		}
	}
	for _, f := range Frameworks() {
		p, err := framework.Builtin(f)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range p.Limits.Recomputes {
			want = append(want, "recompute="+r)
		}
		for _, sc := range p.Limits.Schedules {
			want = append(want, "schedule="+string(sc))
		}
		if p.FP8 != nil {
			want = append(want, "precision=fp8")
		}
		if !p.Limits.NoInt8 {
			want = append(want, "precision=int8")
		}
		for d := range space.NumDims {
			if slices.Contains(p.Limits.NoDims, space.Dim(d)) || space.Dim(d) == space.CP && p.Limits.WeightsOverCP {
				continue
			}
			want = append(want, space.Dim(d).String())
		}
		t.Logf("--emit %s: %d emitted kinds", f, len(emitted[f]))
		for _, k := range want {
			if !emitted[f][k] {
				t.Errorf("--emit %s: the grid emitted no strategy with %s, which the %s profile offers", f, k, f)
			}
		}
	}
}

// checkEmitted checks one emitted configuration; it returns what is wrong.
func checkEmitted(f string, tab keyTable, e Evaluation, out string) []string {
	switch f {
	case Megatron:
		return checkMegatron(tab, e, out)
	case TorchTitan:
		return checkTorchTitan(tab, e, out)
	case MaxText:
		return checkMaxText(tab, e, out)
	case DeepSpeed:
		return checkDeepSpeed(tab, e, out)
	}
	return []string{"unknown framework " + f}
}

// checkMegatron holds Megatron-LM's flags to its argparse table and the
// rules of megatron/training/arguments.py's validate_args and the
// micro-batch calculator at the targeted commit.
func checkMegatron(tab keyTable, e Evaluation, out string) []string {
	var bad []string
	flags := map[string]string{}
	for line := range strings.Lines(out) {
		line = strings.TrimSuffix(strings.TrimSpace(line), " \\")
		if !strings.HasPrefix(line, "--") {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		if err := tab.check(k, v); err != nil {
			bad = append(bad, err.Error())
		}
		flags[k] = v
	}
	num := func(k string) int {
		n, err := strconv.Atoi(flags[k])
		if err != nil {
			if _, ok := flags[k]; ok {
				bad = append(bad, fmt.Sprintf("%s %q is not a number", k, flags[k]))
			}
			return 1
		}
		return n
	}
	s := e.Strategy
	world, L := e.Cluster.Chips(), e.Model.Layers
	tp, pp, cp := num("--tensor-model-parallel-size"), num("--pipeline-model-parallel-size"), num("--context-parallel-size")
	if world%(tp*pp*cp) != 0 {
		return append(bad, fmt.Sprintf("world %d not divisible by tp x pp x cp = %d", world, tp*pp*cp))
	}
	dp := world / (tp * pp * cp)
	mb, global := num("--micro-batch-size"), num("--global-batch-size")
	if tp != s.Degree[space.TP] || pp != s.Degree[space.PP] || cp != s.Degree[space.CP] || dp != s.Replicas() || mb != s.MB {
		bad = append(bad, fmt.Sprintf("Megatron runs tp %d, pp %d, cp %d, dp %d, mb %d; the row is %s", tp, pp, cp, dp, mb, s))
	}
	if global%(mb*dp) != 0 || global/(mb*dp) != s.NumMicrobatches(e.Workload) {
		bad = append(bad, fmt.Sprintf("global batch %d over mb %d x dp %d is not the row's %d micro-batches", global, mb, dp, s.NumMicrobatches(e.Workload)))
	}
	if _, ok := flags["--sequence-parallel"]; ok && tp == 1 {
		bad = append(bad, "--sequence-parallel with tp=1")
	}
	if v, ok := flags["--num-layers-per-virtual-pipeline-stage"]; ok {
		n, _ := strconv.Atoi(v)
		if n < 1 || L%(pp*n) != 0 || L/(pp*n) != s.V {
			bad = append(bad, fmt.Sprintf("%d layers per virtual stage over pp %d is not v=%d", n, pp, s.V))
		}
		if m := global / (mb * dp); m < pp {
			bad = append(bad, fmt.Sprintf("interleaved with %d micro-batches, fewer than pp=%d", m, pp))
		}
	} else if first, ok := flags["--decoder-first-pipeline-num-layers"]; ok {
		a, _ := strconv.Atoi(first)
		z, _ := strconv.Atoi(flags["--decoder-last-pipeline-num-layers"])
		if pp < 3 || (L-a-z)%(pp-2) != 0 {
			bad = append(bad, fmt.Sprintf("first %d and last %d layers leave %d for %d middle stages", a, z, L-a-z, pp-2))
		}
	} else if L%pp != 0 {
		bad = append(bad, fmt.Sprintf("%d layers do not divide over pp=%d", L, pp))
	}
	if _, ok := flags["--overlap-param-gather"]; ok {
		_, dist := flags["--use-distributed-optimizer"]
		_, fsdp := flags["--use-megatron-fsdp"]
		_, red := flags["--overlap-grad-reduce"]
		if !dist && !fsdp || !red {
			bad = append(bad, "--overlap-param-gather needs --use-distributed-optimizer or --use-megatron-fsdp, and --overlap-grad-reduce (arguments.py:1024-1029)")
		}
	}
	_, dist := flags["--use-distributed-optimizer"]
	if dist != (s.Zero == 1) || s.Zero > 1 {
		bad = append(bad, fmt.Sprintf("zero=%d emitted as distributed optimizer %t", s.Zero, dist))
	}
	if _, ok := flags["--overlap-grad-reduce"]; !ok && dp > 1 {
		bad = append(bad, "dp > 1 without --overlap-grad-reduce: the row hides the gradient reduction")
	}
	if g := flags["--recompute-granularity"]; g == "full" && flags["--recompute-method"] == "" {
		bad = append(bad, "--recompute-granularity full without --recompute-method")
	}
	if want := map[string]string{space.RecomputeNone: "", space.RecomputeSelective: "selective", space.RecomputeFull: "full"}[s.Recompute]; flags["--recompute-granularity"] != want {
		bad = append(bad, fmt.Sprintf("recompute=%s emitted as --recompute-granularity %q", s.Recompute, flags["--recompute-granularity"]))
	}
	if _, ok := flags["--recompute-modules"]; ok {
		bad = append(bad, "--recompute-modules: its moe_act needs --moe-grouped-gemm and re-runs no dense MLP")
	}
	if ep := num("--expert-model-parallel-size"); ep > 1 {
		etp := tp
		if _, ok := flags["--expert-tensor-parallel-size"]; ok {
			etp = num("--expert-tensor-parallel-size")
		}
		if world%(etp*ep*pp) != 0 {
			bad = append(bad, fmt.Sprintf("world %d not divisible by etp x ep x pp = %d", world, etp*ep*pp))
		}
	}
	if s.FP8() != (flags["--fp8-format"] != "") {
		bad = append(bad, "fp8 flags do not follow precision="+s.Precision)
	}
	// Megatron's RankGenerator lays tp, cp, dp, pp from the innermost rank
	// (megatron/core/parallel_state.py:617); the data-parallel group is
	// the row's dp x fsdp (Megatron-FSDP shards over it).
	got := rankSpread(e.Cluster, []int{tp, cp, dp, pp})
	for i, ds := range [][]space.Dim{{space.TP}, {space.CP}, {space.DP, space.FSDP}, {space.PP}} {
		want := map[string]int{}
		for _, d := range ds {
			for _, sh := range s.Mesh[d] {
				if sh.Size > 1 {
					if want[sh.Axis] == 0 {
						want[sh.Axis] = 1
					}
					want[sh.Axis] *= sh.Size
				}
			}
		}
		if !maps.Equal(got[i], want) {
			bad = append(bad, fmt.Sprintf("Megatron places %s on %v, the row on %v", ds[0], got[i], want))
		}
	}
	return bad
}

// rankSpread returns, for dimensions of the given degrees laid over the
// ranks innermost first (rank = i0 + d0·(i1 + d1·(...))), how many chips
// of each cluster axis (innermost axis first, ranks filling it first) the
// group of rank 0 spans in each: the placement the framework runs.
func rankSpread(c profiles.Cluster, degrees []int) []map[string]int {
	out := make([]map[string]int, len(degrees))
	stride := 1
	for i, d := range degrees {
		out[i] = map[string]int{}
		coords := make([]map[int]bool, len(c.Axes))
		for k := range coords {
			coords[k] = map[int]bool{}
		}
		for j := range d {
			r := j * stride
			for k, a := range c.Axes {
				coords[k][r%a.Size] = true
				r /= a.Size
			}
		}
		for k, a := range c.Axes {
			if n := len(coords[k]); n > 1 {
				out[i][a.Name] = n
			}
		}
		stride *= d
	}
	return out
}

// flatten lists the leaf keys of a decoded TOML, YAML or JSON document as
// dotted paths with their values.
func flatten(prefix string, v any, out map[string]any) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			flatten(prefix+k+".", x, out)
		}
		return
	}
	out[strings.TrimSuffix(prefix, ".")] = v
}

// torchtitanSchedules are the schedule names of
// torch.distributed.pipelining.schedules.get_schedule_class that the
// emitter writes (pytorch/pytorch@00722e648b740f91d0e71494baa17891749fd291:torch/distributed/pipelining/schedules.py).
var torchtitanSchedules = []string{"1F1B", "GPipe", "Interleaved1F1B", "ZBVZeroBubble", "DualPipeV"}

// checkTorchTitan holds torchtitan's TOML to v0.2.2's JobConfig and the
// start-up rules of torchtitan/distributed/parallel_dims.py and
// pipeline_parallel.py.
func checkTorchTitan(tab keyTable, e Evaluation, out string) []string {
	var bad []string
	var doc map[string]any
	if err := toml.Unmarshal([]byte(out), &doc); err != nil {
		return []string{"not TOML: " + err.Error()}
	}
	keys := map[string]any{}
	flatten("", doc, keys)
	for k, v := range keys {
		str, _ := v.(string)
		if err := tab.check(k, str); err != nil {
			bad = append(bad, err.Error())
		}
	}
	n := func(k string) int {
		switch x := keys[k].(type) {
		case int64:
			return int(x)
		case nil:
			return 1
		}
		bad = append(bad, k+" is not an integer")
		return 1
	}
	s := e.Strategy
	world, L := e.Cluster.Chips(), e.Model.Layers
	dpr, dps := n("parallelism.data_parallel_replicate_degree"), n("parallelism.data_parallel_shard_degree")
	tp, cp, pp := n("parallelism.tensor_parallel_degree"), n("parallelism.context_parallel_degree"), n("parallelism.pipeline_parallel_degree")
	if dpr*dps*tp*cp*pp != world {
		bad = append(bad, fmt.Sprintf("degrees multiply to %d, not the world %d", dpr*dps*tp*cp*pp, world))
	}
	if dpr != s.Degree[space.DP] || dps != s.Degree[space.FSDP] || tp != s.Degree[space.TP] || cp != s.Degree[space.CP] || pp != s.Degree[space.PP] {
		bad = append(bad, "degrees differ from the row")
	}
	if cp > 1 && e.Model.MoE != nil {
		// Its fsdp mesh is dp_shard x cp (parallel_dims.py:82-84, 137,
		// 151-152): the row prices a dense model's weights over fsdp x cp
		// (model.ProgramOptions.WeightsOverCP), not the experts'.
		bad = append(bad, fmt.Sprintf("FSDP over dp_shard x cp = %d ranks, the row shards the experts over fsdp=%d", dps*cp, s.Degree[space.FSDP]))
	}
	if dpr > 1 && dps == 1 && cp == 1 && (tp > 1 || pp > 1) {
		bad = append(bad, "DDP next to tp or pp (models/llama3/infra/parallelize.py:151)")
	}
	if ep := n("parallelism.expert_parallel_degree"); ep > 1 {
		etp := n("parallelism.expert_tensor_parallel_degree")
		if (dps*cp*tp)%(etp*ep) != 0 {
			bad = append(bad, fmt.Sprintf("efsdp = %d x %d x %d / (%d x %d) is not whole", dps, cp, tp, etp, ep))
		}
	}
	local, global := n("training.local_batch_size"), n("training.global_batch_size")
	if global%(local*dpr*dps) != 0 {
		bad = append(bad, "global batch not divisible by local x dp degrees")
	}
	if pp > 1 {
		sched, _ := keys["parallelism.pipeline_parallel_schedule"].(string)
		if !slices.Contains(torchtitanSchedules, sched) {
			bad = append(bad, "unknown schedule "+sched)
		}
		if parts, ok := keys["parallelism.module_fqns_per_model_part"].([]any); ok {
			bad = append(bad, checkTitanParts(parts, s, L)...)
		} else {
			lps := n("parallelism.pipeline_parallel_layers_per_stage")
			first, last := n("parallelism.pipeline_parallel_first_stage_less_layers"), n("parallelism.pipeline_parallel_last_stage_less_layers")
			if _, ok := keys["parallelism.pipeline_parallel_first_stage_less_layers"]; !ok {
				first = 1
			}
			if _, ok := keys["parallelism.pipeline_parallel_last_stage_less_layers"]; !ok {
				last = 1
			}
			stages := (L + first + last + lps - 1) / lps
			if stages%pp != 0 || stages/pp != s.VirtualStages() {
				bad = append(bad, fmt.Sprintf("ceil((%d + %d + %d) / %d) = %d stages, not %d per rank over pp=%d", L, first, last, lps, stages, s.VirtualStages(), pp))
			}
			// generate_llm_fqn_per_model_part (pipeline_parallel.py:275-330)
			// gives every stage (L + first + last) / stages layers less the
			// weights on the ends: equal stages need no weights.
			if (first != 0 || last != 0) && !s.Split.Explicit() {
				bad = append(bad, fmt.Sprintf("first/last stage weights %d/%d make the end stages lighter than the row's equal stages", first, last))
			}
			if s.Split.Explicit() && s.Split.MaxStageLayers(L, pp) != s.Split.MinStageLayers(L, pp) {
				bad = append(bad, "the row's stages differ in size but layers_per_stage makes them equal")
			}
		}
		mb := n("parallelism.pipeline_parallel_microbatch_size")
		if local%mb != 0 || local/mb != s.NumMicrobatches(e.Workload) || mb != s.MB {
			bad = append(bad, fmt.Sprintf("local batch %d in micro-batches of %d is not the row's %d of %d", local, mb, s.NumMicrobatches(e.Workload), s.MB))
		}
	} else if local != s.MB || global/(local*dpr*dps) != s.NumMicrobatches(e.Workload) {
		bad = append(bad, fmt.Sprintf("local batch %d is not the row's micro-batch %d with %d accumulation steps", local, s.MB, s.NumMicrobatches(e.Workload)))
	}
	mode, _ := keys["activation_checkpoint.mode"].(string)
	option, _ := keys["activation_checkpoint.selective_ac_option"].(string)
	switch {
	case s.Recompute == model.RecomputeSelectiveOp && (mode != "selective" || option != "op"):
		// Per-op selective AC (torchtitan/config/job_config.py:655 at v0.2.2).
		bad = append(bad, fmt.Sprintf("activation_checkpoint.mode %q, selective_ac_option %q for recompute=%s", mode, option, s.Recompute))
	case s.Recompute != model.RecomputeSelectiveOp && mode != s.Recompute:
		bad = append(bad, fmt.Sprintf("activation_checkpoint.mode %q for recompute=%s", mode, s.Recompute))
	}
	if s.FP8() {
		if c, _ := keys["model.converters"].([]any); len(c) != 1 || c[0] != "quantize.linear.float8" {
			bad = append(bad, fmt.Sprintf("converters %v: v0.2.2 registers quantize.linear.float8", keys["model.converters"]))
		}
	}
	return bad
}

// checkTitanParts checks module_fqns_per_model_part (one list of module
// names per stage, in model order) against the row's split: every module
// once and in order, pp x stages-per-rank stages, and each rank's layers
// those the row costs. A looped rank r runs stages r, r+pp, ... (chunk j
// is space.Split.ChunkLayers's); a V-shaped rank runs stages r and
// 2pp-1-r (pipeline_parallel.py:451-469) and the row costs half of linear
// stages r and pp-1-r on it (space.PlaceV).
func checkTitanParts(parts []any, s space.Strategy, L int) []string {
	var bad []string
	pp, v := s.Degree[space.PP], s.VirtualStages()
	var order []string
	counts := make([]int, len(parts))
	for i, p := range parts {
		mods, _ := p.([]any)
		for _, m := range mods {
			name, _ := m.(string)
			order = append(order, name)
			if strings.HasPrefix(name, "layers.") {
				counts[i]++
			}
		}
	}
	want := []string{"tok_embeddings"}
	for i := range L {
		want = append(want, fmt.Sprintf("layers.%d", i))
	}
	want = append(want, "norm", "output")
	if !slices.Equal(order, want) {
		bad = append(bad, "module_fqns_per_model_part does not hold every module once, in order")
	}
	if len(counts) != pp*v {
		return append(bad, fmt.Sprintf("%d stages, not %d per rank over pp=%d", len(counts), v, pp))
	}
	for r := range pp {
		switch s.Schedule.Rules().Placement() {
		case space.PlaceV:
			_, a := s.Split.StageLayers(L, pp, r)
			_, z := s.Split.StageLayers(L, pp, pp-1-r)
			if got := 2 * (counts[r] + counts[2*pp-1-r]); got < a+z-1 || got > a+z+1 {
				bad = append(bad, fmt.Sprintf("V rank %d runs %d layers, the row half of %d + %d", r, counts[r]+counts[2*pp-1-r], a, z))
			}
		default:
			for j := range v {
				if c := s.Split.ChunkLayers(L, pp, v, r, j); counts[j*pp+r] != c {
					bad = append(bad, fmt.Sprintf("rank %d chunk %d runs %d layers, the row %d", r, j, counts[j*pp+r], c))
				}
			}
		}
	}
	return bad
}

// checkMaxText holds MaxText's keys to base.yml and the rules of
// configs/types.py and max_utils.fill_unspecified_mesh_axes.
func checkMaxText(tab keyTable, e Evaluation, out string) []string {
	var bad []string
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		return []string{"not YAML: " + err.Error()}
	}
	for k, v := range doc {
		str, _ := v.(string)
		if err := tab.check(k, str); err != nil {
			bad = append(bad, err.Error())
		}
	}
	n := func(k string) int {
		if x, ok := doc[k].(int); ok {
			return x
		}
		return 1
	}
	s := e.Strategy
	L := e.Model.Layers
	gpu := !isTPU(e.Cluster)
	if hw, _ := doc["hardware"].(string); gpu && hw != "gpu" {
		bad = append(bad, "GPU cluster without hardware: gpu")
	}
	ici, dcn := 1, 1
	for _, a := range []string{"data", "fsdp", "tensor", "context", "pipeline", "expert"} {
		ici *= n("ici_" + a + "_parallelism")
		dcn *= n("dcn_" + a + "_parallelism")
	}
	if ici*dcn != e.Cluster.Chips() {
		bad = append(bad, fmt.Sprintf("ici %d x dcn %d is not %d chips", ici, dcn, e.Cluster.Chips()))
	}
	if n("ici_tensor_parallelism")*n("dcn_tensor_parallelism") != s.Degree[space.TP] ||
		n("ici_pipeline_parallelism")*n("dcn_pipeline_parallelism") != s.Degree[space.PP] ||
		n("ici_context_parallelism")*n("dcn_context_parallelism") != s.Degree[space.CP] ||
		n("ici_expert_parallelism")*n("dcn_expert_parallelism") != s.Degree[space.EP] {
		bad = append(bad, "mesh degrees differ from the row")
	}
	// base.yml:605-606: every weight's embed dimension over fsdp x context
	// x expert, which must be the row's sharding: fsdp x cp (the maxtext
	// profile's model.ProgramOptions.WeightsOverCP).
	axes := func(a string) int { return n("ici_"+a+"_parallelism") * n("dcn_"+a+"_parallelism") }
	if shards, row := axes("fsdp")*axes("context")*axes("expert"), max(s.Degree[space.FSDP], 1)*max(s.Degree[space.CP], 1); shards != row {
		bad = append(bad, fmt.Sprintf("the embed rule shards the weights over fsdp x context x expert = %d chips, the row over fsdp x cp = %d", shards, row))
	}
	policy, _ := doc["remat_policy"].(string)
	switch {
	case s.Recompute == model.RecomputeOffloadInput:
		if policy != "custom" || doc["decoder_layer_input"] != "offload" {
			bad = append(bad, "offload_layer_input is custom with decoder_layer_input: offload")
		}
	case s.Recompute == model.RecomputeOffloadInputQKV || s.Recompute == model.RecomputeOffloadInputQKVO:
		out := s.Recompute == model.RecomputeOffloadInputQKVO
		if policy != "custom" || doc["decoder_layer_input"] != "offload" || doc["query_proj"] != "offload" ||
			doc["key_proj"] != "offload" || doc["value_proj"] != "offload" || (doc["out_proj"] == "offload") != out {
			bad = append(bad, s.Recompute+" is custom with the layer input and q, k, v (and out for qkvo) offloaded")
		}
	case s.Recompute == model.RecomputeOffloadInputOut:
		if policy != "custom" || doc["decoder_layer_input"] != "offload" || doc["out_proj"] != "offload" || doc["query_proj"] != nil {
			bad = append(bad, "offload_input_out is custom with the layer input and out_proj offloaded")
		}
	case s.Recompute == model.RecomputeOffloadContextWo:
		if policy != "custom" || doc["context"] != "offload" || doc["mlpwo"] != "offload" || doc["decoder_layer_input"] != nil {
			bad = append(bad, "offload_context_mlpwo is custom with context and mlpwo offloaded, the layer input on device")
		}
	case policy != s.Recompute:
		bad = append(bad, fmt.Sprintf("remat_policy %q for recompute=%s", policy, s.Recompute))
	}
	if pp := s.Degree[space.PP]; pp > 1 {
		per := n("num_layers_per_pipeline_stage")
		if L%(pp*per) != 0 || L/(pp*per) != s.VirtualStages() {
			bad = append(bad, fmt.Sprintf("%d layers per stage over pp=%d is not %d repeats", per, pp, s.VirtualStages()))
		}
		if m := n("num_pipeline_microbatches"); m%pp != 0 || m != s.NumMicrobatches(e.Workload) {
			bad = append(bad, fmt.Sprintf("%d pipeline micro-batches over pp=%d, the row has %d", m, pp, s.NumMicrobatches(e.Workload)))
		}
	}
	if s.FP8() != (doc["quantization"] == "fp8") || s.Int8() != (doc["quantization"] == "int8") {
		bad = append(bad, "quantization does not follow precision="+s.Precision)
	}
	return bad
}

// checkDeepSpeed holds the JSON to DeepSpeed's config keys and its batch
// assertion (train = micro x accumulation x world).
func checkDeepSpeed(tab keyTable, e Evaluation, out string) []string {
	var bad []string
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	keys := map[string]any{}
	flatten("", doc, keys)
	for k := range keys {
		if _, ok := tab[k]; !ok {
			if _, top := tab[strings.Split(k, ".")[0]]; !top || !strings.Contains(k, ".") {
				bad = append(bad, k+" is not a DeepSpeed config key")
			}
		}
	}
	f := func(k string) int { x, _ := keys[k].(float64); return int(x) }
	s := e.Strategy
	if f("train_batch_size") != f("train_micro_batch_size_per_gpu")*f("gradient_accumulation_steps")*e.Cluster.Chips() {
		bad = append(bad, "train_batch_size is not micro x accumulation x world")
	}
	if _, ok := doc["activation_checkpointing"]; ok || s.Recompute != space.RecomputeNone {
		// The section only configures deepspeed.checkpointing.checkpoint(),
		// which the model code must call (checkpointing.py:1058, 1162).
		bad = append(bad, fmt.Sprintf("recompute=%s: a DeepSpeed config alone recomputes nothing", s.Recompute))
	}
	if ms := f("zero_optimization.mics_shard_size"); ms > 0 && s.Zero > 0 {
		bad = append(bad, "MiCS with zero over dp: MiCS replicates the states across its groups")
	}
	return bad
}
