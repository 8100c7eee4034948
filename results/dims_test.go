package results

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// emitsDim says how one framework's emitter carries a parallel dimension:
// the key (flag or config key) whose line changes with the dimension's
// degree, or that the framework derives the degree from the others
// (implied), or that it refuses any degree above 1 naming the dimension.
type emitsDim struct {
	key     string
	implied bool
	refused bool
}

// dimEmission is, per framework and per parallel dimension, how its
// emitter carries the dimension. A new dimension (a row of space's
// dimension table) fails TestEveryDimensionShownAndEmitted until each
// framework has its entry here and its emitter honours it.
var dimEmission = map[string]map[space.Dim]emitsDim{
	Megatron: {
		space.DP:   {implied: true}, // world size / (tp·pp·cp)
		space.FSDP: {key: "--use-megatron-fsdp"},
		space.TP:   {key: "--tensor-model-parallel-size"},
		space.CP:   {key: "--context-parallel-size"},
		space.PP:   {key: "--pipeline-model-parallel-size"},
		space.EP:   {key: "--expert-model-parallel-size"},
	},
	MaxText: {
		space.DP:   {key: "data_parallelism"},
		space.FSDP: {key: "fsdp_parallelism"},
		space.TP:   {key: "tensor_parallelism"},
		space.CP:   {refused: true}, // its embed rule shards the weights over context too
		space.PP:   {key: "pipeline_parallelism"},
		space.EP:   {key: "expert_parallelism"},
	},
	TorchTitan: {
		space.DP:   {key: "data_parallel_replicate_degree"},
		space.FSDP: {key: "data_parallel_shard_degree"},
		space.TP:   {key: "tensor_parallel_degree"},
		space.CP:   {refused: true}, // its fsdp mesh is dp_shard x cp
		space.PP:   {key: "pipeline_parallel_degree"},
		space.EP:   {key: "expert_parallel_degree"},
	},
	DeepSpeed: {
		space.DP:   {implied: true}, // the world size over ZeRO's partitions
		space.FSDP: {key: "stage"},
		space.TP:   {refused: true},
		space.CP:   {refused: true},
		space.PP:   {refused: true},
		space.EP:   {refused: true},
	},
}

// TestEveryDimensionShownAndEmitted holds every parallel dimension to the
// outputs: a JSON field and a CSV column named as its strategy key, and,
// for every framework, an emitter that either writes the degree (the line
// of its key changes with it), derives it, or refuses it naming it.
func TestEveryDimensionShownAndEmitted(t *testing.T) {
	m, err := model.Preset("mixtral-8x7b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 64, SeqLen: 4096}
	// with has the dimension above 1, without the same chips as plain or
	// sharded data parallelism.
	cases := map[space.Dim]struct{ with, without string }{
		space.DP:   {"dp=64", "fsdp=64"},
		space.FSDP: {"fsdp=64", "dp=64"},
		space.TP:   {"dp=32,tp=2", "dp=64"},
		space.CP:   {"dp=32,cp=2", "dp=64"},
		space.PP:   {"dp=32,pp=2", "dp=64"},
		space.EP:   {"dp=64,ep=8", "dp=64"},
	}
	jsonTags := map[string]bool{}
	st := reflect.TypeOf(Strategy{})
	for i := range st.NumField() {
		jsonTags[strings.Split(st.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	emit := func(spec, framework string) (string, error) {
		switch {
		case framework == MaxText:
			spec += ",recompute=minimal" // MaxText's "none" recomputes the whole layer
			if strings.Contains(spec, "pp=") {
				spec += ",schedule=gpipe" // MaxText runs no 1F1B
			}
			if strings.Contains(spec, "ep=") {
				spec = strings.Replace(spec, "dp=", "fsdp=", 1) // its expert axis comes out of fsdp
			}
		case framework == Megatron && spec == "dp=32,pp=2":
			spec += ",mesh=dp:gpu*8.node*4;pp:node*2" // Megatron lays dp inside pp
		case framework == TorchTitan && strings.HasPrefix(spec, "dp=") && strings.Contains(spec, ","):
			spec = "fs" + spec // torchtitan's pure replication (DDP) is one-dimensional
		}
		s, err := space.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(m, c, w); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if s, err = s.Place(c); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		err = Emit(&b, framework, Evaluation{Model: m, Cluster: c, Workload: w, Strategy: s})
		return b.String(), err
	}
	for d := space.Dim(0); d < space.NumDims; d++ {
		name := d.String()
		if !slices.Contains(CSVColumns, name) {
			t.Errorf("dimension %s has no CSV column", name)
		}
		if !jsonTags[name] {
			t.Errorf("dimension %s has no JSON field in results.Strategy", name)
		}
		tc, ok := cases[d]
		if !ok {
			t.Errorf("dimension %s has no case in this test: add a strategy with it above 1", name)
			continue
		}
		for _, f := range Frameworks() {
			e, ok := dimEmission[f][d]
			if !ok {
				t.Errorf("dimension %s has no emit mapping or refusal for %s in dimEmission", name, f)
				continue
			}
			out, err := emit(tc.with, f)
			switch {
			case e.refused:
				if err == nil || !IsEmitError(err) || !strings.Contains(err.Error(), name+"=") {
					t.Errorf("%s, %s: error %v, want a refusal naming %s=", f, tc.with, err, name)
				}
			case err != nil:
				t.Errorf("%s, %s: %v", f, tc.with, err)
			case e.implied:
			default:
				base, err := emit(tc.without, f)
				if err != nil {
					t.Errorf("%s, %s: %v", f, tc.without, err)
					continue
				}
				if keyLines(out, e.key) == keyLines(base, e.key) {
					t.Errorf("%s: the lines of %s do not change between %s and %s:\n%s", f, e.key, tc.with, tc.without, keyLines(out, e.key))
				}
			}
		}
	}
}

// keyLines returns the lines of out that hold key.
func keyLines(out, key string) string {
	var b strings.Builder
	for l := range strings.Lines(out) {
		if strings.Contains(l, key) {
			b.WriteString(l)
		}
	}
	return b.String()
}
