package space

import (
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// TestCheckPlacement holds the placement rules of Limits: GPU-only
// frameworks on TPU clusters, rank orders, expert grids, one-dimensional
// replication, expert carving per tier, and ZeRO next to fsdp.
func TestCheckPlacement(t *testing.T) {
	megatron := Limits{Framework: "megatron", GPUOnly: true, Instead: "--framework maxtext",
		RankOrder: []Dim{TP, CP, DP, PP}, ExpertOrder: []Dim{TP, CP, DP}}
	titan := Limits{Framework: "torchtitan", GPUOnly: true, RankOrder: []Dim{TP, CP, FSDP, DP, PP},
		ExpertOrder: []Dim{TP, CP, FSDP}, ReplicateAlone: true, ExpertsFromShard: true}
	maxtext := Limits{Framework: "maxtext", ExpertsPerTier: true}
	maxtextFSDP := Limits{Framework: "maxtext", ExpertsPerTier: true, ExpertsFromFSDP: true}
	megatronFSDP := Limits{Framework: "megatron", RankOrder: []Dim{TP, CP, FSDP, DP, PP}}
	nvfp4 := megatron
	nvfp4.FP4 = true
	for _, tc := range []struct {
		name     string
		lim      Limits
		cluster  string
		strategy string
		want     string // "" when it runs as placed
	}{
		{"gpu-only on tpu", megatron, "v5p-64", "dp=32", "GPUs only"},
		{"gpu-only names instead", megatron, "v5p-64", "dp=32", "maxtext"},
		{"gpu-only on gpu", megatron, "h100-64", "dp=64", ""},
		{"tp inside dp", megatron, "h100-64", "dp=8,tp=8,mesh=tp:gpu*8;dp:node*8", ""},
		{"cp across nodes with dp inside", megatron, "h100-64", "dp=8,cp=8,mesh=dp:gpu*8;cp:node*8", "cannot place"},
		{"pp and dp on one axis", megatron, "h100-64", "dp=4,tp=8,pp=2,mesh=tp:gpu*8;pp:node*2;dp:node*4", ""},
		{"pp inside dp across axes", megatron, "h100-64", "dp=32,pp=2,mesh=pp:gpu*2;dp:gpu*4.node*8", "cannot place"},
		{"tp across nodes", titan, "h100-64", "fsdp=16,tp=4,mesh=fsdp:gpu*4.node*4;tp:node*4", "cannot place"},
		{"ddp next to tp", titan, "h100-64", "dp=8,tp=8", "one-dimensional"},
		{"ddp alone", titan, "h100-64", "dp=64", ""},
		{"ep inside fsdp", titan, "mixtral-h100-64", "fsdp=16,tp=4,ep=8,etp=4,mesh=tp:gpu*4;fsdp:gpu*2.node*8;ep:gpu*2.node*4", ""},
		{"ep outer", titan, "mixtral-h100-64", "fsdp=16,tp=4,ep=8,etp=4,mesh=tp:gpu*4;fsdp:gpu*2.node*8;ep:node*8", "expert grid"},
		{"ep over dp", titan, "mixtral-h100-64", "dp=2,fsdp=4,tp=8,ep=8,etp=8,mesh=tp:gpu*8;fsdp:node*4;dp:node*2;ep:node*8", "fsdp x cp ranks"},
		{"ep per tier", maxtext, "mixtral-h100-64", "fsdp=16,tp=4,ep=8,etp=4,mesh=tp:gpu*4;fsdp:gpu*2.node*8;ep:gpu*2.node*4", ""},
		{"ep out of data", maxtext, "mixtral-h100-64", "dp=8,fsdp=8,ep=8,mesh=fsdp:gpu*8;dp:node*8;ep:node*8", ""},
		{"ep out of fsdp only", maxtextFSDP, "mixtral-h100-64", "dp=8,fsdp=8,ep=8,mesh=fsdp:gpu*8;dp:node*8;ep:gpu*8", ""},
		{"ep out of data refused", maxtextFSDP, "mixtral-h100-64", "dp=8,fsdp=8,ep=8,mesh=fsdp:gpu*8;dp:node*8;ep:node*8", "fsdp x expert"},
		{"megatron-fsdp inside tp across nodes", megatronFSDP, "h100-64", "fsdp=16,tp=4,mesh=tp:gpu*2.node*2;fsdp:gpu*4.node*4", "cannot place"},
		{"megatron-fsdp across cp inside", megatronFSDP, "h100-64", "fsdp=32,cp=2,mesh=cp:node*2;fsdp:gpu*8.node*4", "cannot place"},
		{"megatron-fsdp outside tp", megatronFSDP, "h100-64", "fsdp=16,tp=4,mesh=tp:gpu*4;fsdp:gpu*2.node*8", ""},
		{"nvfp4 on a chip without fp4", nvfp4, "h100-64", "dp=64,precision=fp8", "peak_fp4_flops is 0"},
		{"nvfp4 on b200", nvfp4, "b200-64", "dp=64,precision=fp8", ""},
		{"nvfp4 recipe, bf16 strategy", nvfp4, "h100-64", "dp=64", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := profiles.Parse(strings.TrimPrefix(tc.cluster, "mixtral-"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(tc.strategy)
			if err != nil {
				t.Fatal(err)
			}
			if s, err = s.Place(c); err != nil {
				if tc.want == "" {
					t.Fatalf("%s: %v", tc.strategy, err)
				}
				return
			}
			err = tc.lim.CheckPlacement(s, c)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s on %s: %v, want it to run as placed", tc.strategy, tc.cluster, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s on %s: %v, want an error naming %q", tc.strategy, tc.cluster, err, tc.want)
			}
		})
	}
}

// TestLimitsStagesAndZero holds EqualStages, NoZeroWithFSDP and
// WeightsOverCP in Check.
func TestLimitsStagesAndZero(t *testing.T) {
	for _, tc := range []struct {
		lim      Limits
		strategy string
		layers   int
		bad      bool
	}{
		{Limits{EqualStages: true}, "dp=8,pp=4", 32, false},
		{Limits{EqualStages: true}, "dp=8,pp=3", 32, true},
		{Limits{EqualStages: true}, "dp=8,pp=4,schedule=zb-v", 32, false},
		{Limits{EqualStages: true}, "dp=8,pp=4,schedule=zb-v", 36, true},
		{Limits{NoZeroWithFSDP: true}, "dp=2,fsdp=4,zero=1", 32, true},
		{Limits{NoZeroWithFSDP: true}, "dp=2,fsdp=4", 32, false},
		{Limits{NoZeroWithFSDP: true}, "dp=8,zero=2", 32, false},
		{Limits{WeightsOverCP: true}, "fsdp=4,cp=2", 32, false},
		{Limits{WeightsOverCP: true}, "fsdp=4,cp=2,ep=4", 32, true},
		{Limits{WeightsOverCP: true}, "fsdp=8", 32, false},
	} {
		s, err := Parse(tc.strategy)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.lim.Check(s, tc.layers); (err != nil) != tc.bad {
			t.Errorf("%s with %d layers: %v, want refused %t", tc.strategy, tc.layers, err, tc.bad)
		}
	}
}

// TestSearchedModuleLists holds which --recompute-modules lists the
// search tries per model: only on a model with experts, and only the
// lists whose every module re-runs something there (mla_up_proj needs
// MLA, mlp a layer without experts, layernorm MLA or experts).
func TestSearchedModuleLists(t *testing.T) {
	lists := []string{"mla_up_proj", "moe_act", "mlp", "mlp+mla_up_proj", "layernorm+moe_act+mla_up_proj",
		"layernorm+moe_act", "layernorm+moe", "core_attn+layernorm+moe_act+moe"}
	on := Limits{RecomputeModules: true, ModuleLists: lists}
	dsv3, err := model.Preset("deepseek-v3") // MLA, 3 dense layers then experts
	if err != nil {
		t.Fatal(err)
	}
	allMoE := mixtral()
	mla := mixtral()
	mla.MLA = dsv3.MLA
	dense := mixtral()
	dense.MoE.FirstDenseLayers = 1
	for _, tc := range []struct {
		name string
		lim  Limits
		m    model.Spec
		want []string
	}{
		{"dense model", on, llama3_8b(), nil},
		{"no module lists", Limits{RecomputeModules: true}, mixtral(), nil},
		{"lists not taken", Limits{ModuleLists: lists}, mixtral(), nil},
		{"experts in every layer", on, allMoE, []string{"moe_act", "layernorm+moe_act", "layernorm+moe", "core_attn+layernorm+moe_act+moe"}},
		{"a dense layer", on, dense, []string{"moe_act", "mlp", "layernorm+moe_act", "layernorm+moe", "core_attn+layernorm+moe_act+moe"}},
		{"mla in every layer", on, mla, []string{"mla_up_proj", "moe_act", "layernorm+moe_act+mla_up_proj", "layernorm+moe_act", "layernorm+moe", "core_attn+layernorm+moe_act+moe"}},
		{"deepseek-v3", on, dsv3, lists},
		{"unknown module skipped", Limits{RecomputeModules: true, ModuleLists: []string{"attn", "moe_act", "moe_act"}}, allMoE, []string{"moe_act"}},
	} {
		if got := tc.lim.SearchedModuleLists(&tc.m); !slices.Equal(got, tc.want) {
			t.Errorf("%s: SearchedModuleLists = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestModuleListsSearched checks that the space of a model with experts
// lists the framework's module lists after its policies, that each
// decodes and encodes back, and that a pinned list keeps it alone.
func TestModuleListsSearched(t *testing.T) {
	w := Workload{Batch: 64, SeqLen: 4096}
	lim := Limits{Recomputes: []string{RecomputeNone, RecomputeSelective, RecomputeFull}, RecomputeModules: true,
		ModuleLists: []string{"mla_up_proj", "moe_act", "layernorm+moe"}}
	sp, err := NewLimited(mixtral(), gpuCluster(16), w, Fix{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{RecomputeNone, RecomputeSelective, RecomputeFull, "moe_act", "layernorm+moe"}
	if !slices.Equal(sp.recomputes, want) {
		t.Fatalf("recompute gene = %v, want %v", sp.recomputes, want)
	}
	s, err := Parse("fsdp=16,ep=8,recompute=layernorm+moe")
	if err != nil {
		t.Fatal(err)
	}
	genes, ok := sp.Encode(s)
	if !ok {
		t.Fatalf("Encode(%s) not in the space", s)
	}
	var got Strategy
	if !sp.Decode(genes, &got) || got.Recompute != "layernorm+moe" || got.A2AOverlap {
		t.Errorf("Decode(Encode(%s)) = %s, want recompute=layernorm+moe without a2a_overlap (moe is recomputed)", s, got)
	}
	// The space runs the overlap wherever it may and it hides: ep over
	// both nodes.
	if s, err = Parse("fsdp=16,ep=8,recompute=moe_act,a2a_overlap=true,mesh=fsdp:gpu*8.node*2;ep:gpu*4.node*2"); err != nil {
		t.Fatal(err)
	}
	if genes, ok = sp.Encode(s); !ok {
		t.Fatalf("Encode(%s) not in the space", s)
	}
	if !sp.Decode(genes, &got) || !got.A2AOverlap {
		t.Errorf("Decode(Encode(%s)) = %s, want a2a_overlap (moe_act allows it)", s, got)
	}
	fix, err := ParseFix("recompute=moe_act")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := NewLimited(mixtral(), gpuCluster(16), w, fix, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pinned.recomputes, []string{"moe_act"}) {
		t.Errorf("pinned recompute gene = %v, want [moe_act]", pinned.recomputes)
	}
	dense, err := NewLimited(llama3_8b(), gpuCluster(16), w, Fix{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dense.recomputes, want[:3]) {
		t.Errorf("dense model's recompute gene = %v, want %v", dense.recomputes, want[:3])
	}
}

// TestModuleListsValidated holds that a framework's module lists must be
// --recompute-modules lists in the planner's module order.
func TestModuleListsValidated(t *testing.T) {
	for _, tc := range []struct {
		list string
		ok   bool
	}{
		{"mlp+mla_up_proj", true},
		{"mla_up_proj+mlp", false},
		{"attn", false},
		{"full", false},
	} {
		err := Limits{RecomputeModules: true, ModuleLists: []string{tc.list}}.validate()
		if (err == nil) != tc.ok {
			t.Errorf("ModuleLists [%s]: validate = %v, want ok %v", tc.list, err, tc.ok)
		}
	}
}

// TestSplitsSequences checks which limits can spread one sequence over
// chips: any of tp, cp and pp open does; none of them (ZeRO alone) does
// not, whatever else is closed.
func TestSplitsSequences(t *testing.T) {
	for _, tt := range []struct {
		name   string
		noDims []Dim
		want   bool
	}{
		{"everything open", nil, true},
		{"pp only", []Dim{TP, CP, EP}, true},
		{"cp only", []Dim{TP, PP}, true},
		{"data parallel only", []Dim{TP, CP, PP, EP}, false},
		{"no tp, cp or pp", []Dim{TP, CP, PP}, false},
	} {
		if got := (Limits{NoDims: tt.noDims}).SplitsSequences(); got != tt.want {
			t.Errorf("%s: SplitsSequences() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
