package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// emitOut runs a command line with --emit and returns its stdout.
func emitOut(t *testing.T, args ...string) string {
	t.Helper()
	clearEnv(t)
	stdout, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("plan %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// megatronFlags parses Megatron-LM flags printed one per line with shell
// continuations: flag -> value ("" for a switch).
func megatronFlags(t *testing.T, out string) map[string]string {
	t.Helper()
	flags := map[string]string{}
	for line := range strings.SplitSeq(out, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), `\`))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if !strings.HasPrefix(f[0], "--") {
			t.Fatalf("not a flag line: %q", line)
		}
		if _, dup := flags[f[0]]; dup {
			t.Errorf("flag %s repeated", f[0])
		}
		flags[f[0]] = strings.Join(f[1:], " ") // a list flag: --recompute-modules layernorm moe_act
	}
	return flags
}

func TestEmitMegatron(t *testing.T) {
	out := emitOut(t, "explain", "--model", "llama3-70b", "--cluster", "h100-512", "--batch", "512",
		"--strategy", "dp=8,zero=1,tp=8,cp=2,pp=4,mb=2,schedule=interleaved,v=2,recompute=full", "--emit", "megatron")
	flags := megatronFlags(t, out)
	for k, want := range map[string]string{
		"--tensor-model-parallel-size":            "8",
		"--pipeline-model-parallel-size":          "4",
		"--num-layers-per-virtual-pipeline-stage": "10", // 80 layers / (pp 4 x v 2)
		"--context-parallel-size":                 "2",
		"--micro-batch-size":                      "2",
		"--global-batch-size":                     "512",
		"--seq-length":                            "8192",
		"--recompute-granularity":                 "full",
		"--recompute-method":                      "uniform",
		"--sequence-parallel":                     "",
		"--use-distributed-optimizer":             "",
		"--bf16":                                  "",
	} {
		if got, ok := flags[k]; !ok || got != want {
			t.Errorf("%s = %q (present %t), want %q", k, got, ok, want)
		}
	}
	// Megatron derives dp = world / (tp x pp x cp) = 512 / 64 = 8.
	tp, _ := strconv.Atoi(flags["--tensor-model-parallel-size"])
	pp, _ := strconv.Atoi(flags["--pipeline-model-parallel-size"])
	cp, _ := strconv.Atoi(flags["--context-parallel-size"])
	if dp := 512 / (tp * pp * cp); dp != 8 {
		t.Errorf("derived data-parallel size %d, want 8", dp)
	}

	// Layers that do not divide over the stages: the split the cost model
	// read, 30 middle stages of 4 and 3 on each end.
	flags = megatronFlags(t, emitOut(t, "explain", "--model", "llama3-405b", "--cluster", "h100-2048", "--batch", "512",
		"--strategy", "dp=8,tp=8,pp=32,recompute=full", "--emit", "megatron"))
	if flags["--decoder-first-pipeline-num-layers"] != "3" || flags["--decoder-last-pipeline-num-layers"] != "3" {
		t.Errorf("126 layers over 32 stages: first %q, last %q; want 3 and 3 (30 middle stages of 4)",
			flags["--decoder-first-pipeline-num-layers"], flags["--decoder-last-pipeline-num-layers"])
	}
	// An explicit split, v=8 with uneven chunks: the layout. Rank 7's 14
	// layers run in chunks 2, 2, 2, 2, 2, 2, 1, 1: stages 55 and 63 (chunk
	// j of rank r is stage 8j+r) hold one layer, the last with the loss.
	flags = megatronFlags(t, emitOut(t, "explain", "--model", "llama3-405b", "--cluster", "h100-1024", "--batch", "1536", "--seq", "8192",
		"--strategy", "dp=16,zero=1,tp=8,pp=8,first=16,last=14,schedule=interleaved,v=8,recompute=full", "--emit", "megatron"))
	if got, want := flags["--pipeline-model-parallel-layout"], "'Et*2|(t*2|)*54t|(t*2|)*7tL'"; got != want {
		t.Errorf("first=16,last=14 at v=8: layout %q, want %q", got, want)
	}
}

func TestEmitMaxText(t *testing.T) {
	out := emitOut(t, "explain", "--model", "llama3-8b", "--cluster", "2xv5p-64", "--batch", "128",
		"--strategy", "dp=2,fsdp=8,tp=4,mb=2,recompute=minimal", "--emit", "maxtext")
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatalf("maxtext output is not YAML: %v\n%s", err, out)
	}
	for k, want := range map[string]any{
		"ici_fsdp_parallelism":        8,
		"ici_tensor_parallelism":      4,
		"ici_data_parallelism":        1,
		"dcn_data_parallelism":        2,
		"dcn_fsdp_parallelism":        1,
		"gradient_accumulation_steps": 4,   // 128 / (16 replicas x mb 2) micro-batches
		"per_device_batch_size":       0.5, // 128 / 64 chips / 4 accumulation steps
		"max_target_length":           8192,
		"remat_policy":                "minimal",
	} {
		got := cfg[k]
		if f, ok := want.(float64); ok {
			if g, ok := got.(float64); !ok || g != f {
				if gi, ok := got.(int); !ok || float64(gi) != f {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
			continue
		}
		if got != want {
			t.Errorf("%s = %v (%T), want %v", k, got, got, want)
		}
	}
	ici, dcn := 1, 1
	for k, v := range cfg {
		if n, ok := v.(int); ok && strings.HasPrefix(k, "ici_") {
			ici *= n
		} else if ok && strings.HasPrefix(k, "dcn_") {
			dcn *= n
		}
	}
	if ici != 32 || dcn != 2 {
		t.Errorf("ici degrees multiply to %d and dcn to %d, want 32 chips per slice and 2 slices", ici, dcn)
	}
}

func TestEmitTorchTitan(t *testing.T) {
	out := emitOut(t, "explain", "--model", "llama3-70b", "--cluster", "h100-256", "--batch", "256",
		"--strategy", "dp=2,fsdp=4,tp=8,pp=4,mb=2,schedule=interleaved,v=2,recompute=full", "--emit", "torchtitan")
	var cfg struct {
		Parallelism struct {
			Replicate     int    `toml:"data_parallel_replicate_degree"`
			Shard         int    `toml:"data_parallel_shard_degree"`
			TP            int    `toml:"tensor_parallel_degree"`
			CP            int    `toml:"context_parallel_degree"`
			PP            int    `toml:"pipeline_parallel_degree"`
			Schedule      string `toml:"pipeline_parallel_schedule"`
			Microbatch    int    `toml:"pipeline_parallel_microbatch_size"`
			LayersByStage int    `toml:"pipeline_parallel_layers_per_stage"`
			FirstLess     *int   `toml:"pipeline_parallel_first_stage_less_layers"`
			LastLess      *int   `toml:"pipeline_parallel_last_stage_less_layers"`
		} `toml:"parallelism"`
		Training struct {
			Local  int `toml:"local_batch_size"`
			Global int `toml:"global_batch_size"`
			Seq    int `toml:"seq_len"`
		} `toml:"training"`
		AC struct {
			Mode string `toml:"mode"`
		} `toml:"activation_checkpoint"`
	}
	if err := toml.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatalf("torchtitan output is not TOML: %v\n%s", err, out)
	}
	p := cfg.Parallelism
	if p.Replicate != 2 || p.Shard != 4 || p.TP != 8 || p.CP != 1 || p.PP != 4 || p.Schedule != "Interleaved1F1B" || p.Microbatch != 2 || p.LayersByStage != 10 {
		t.Errorf("[parallelism] = %+v, want dp 2, fsdp 4, tp 8, cp 1, pp 4, Interleaved1F1B, microbatch 2, 10 layers per stage", p)
	}
	// torchtitan makes ceil((layers + first + last) / layers per stage)
	// stages: the weights must be 0 for 80 / 10 = 8 = pp x v.
	if p.FirstLess == nil || *p.FirstLess != 0 || p.LastLess == nil || *p.LastLess != 0 {
		t.Errorf("[parallelism] first and last stage weights %v, %v; want both 0", p.FirstLess, p.LastLess)
	}
	if cfg.Training.Local != 32 || cfg.Training.Global != 256 || cfg.Training.Seq != 8192 || cfg.AC.Mode != "full" {
		t.Errorf("[training] %+v, [activation_checkpoint] %+v; want local 32 (256 / 8 replicas), global 256, seq 8192, full", cfg.Training, cfg.AC)
	}
}

func TestEmitDeepSpeed(t *testing.T) {
	for _, tc := range []struct {
		strategy           string
		stage, mics, accum int
		checkpointing      bool
	}{
		{"fsdp=8,mb=2", 3, 0, 2, false},
		{"dp=8,zero=2", 2, 0, 4, false},
		{"dp=2,fsdp=4", 3, 4, 4, false},
	} {
		out := emitOut(t, "explain", "--model", "llama3-8b", "--cluster", "h100-8", "--batch", "32", "--strategy", tc.strategy, "--emit", "deepspeed")
		var cfg struct {
			TrainBatch int `json:"train_batch_size"`
			Micro      int `json:"train_micro_batch_size_per_gpu"`
			Accum      int `json:"gradient_accumulation_steps"`
			BF16       struct {
				Enabled bool `json:"enabled"`
			} `json:"bf16"`
			Zero struct {
				Stage int `json:"stage"`
				MiCS  int `json:"mics_shard_size"`
			} `json:"zero_optimization"`
			AC *json.RawMessage `json:"activation_checkpointing"`
		}
		if err := json.Unmarshal([]byte(out), &cfg); err != nil {
			t.Fatalf("%s: deepspeed output is not JSON: %v\n%s", tc.strategy, err, out)
		}
		if cfg.Zero.Stage != tc.stage || cfg.Zero.MiCS != tc.mics || cfg.Accum != tc.accum || cfg.TrainBatch != 32 || !cfg.BF16.Enabled || (cfg.AC != nil) != tc.checkpointing {
			t.Errorf("%s: %+v; want stage %d, mics %d, accumulation %d, batch 32, checkpointing %t", tc.strategy, cfg, tc.stage, tc.mics, tc.accum, tc.checkpointing)
		}
		// DeepSpeed checks train_batch_size = micro x accumulation x data-parallel GPUs.
		if cfg.Micro*cfg.Accum*8 != cfg.TrainBatch {
			t.Errorf("%s: %d x %d x 8 GPUs != train_batch_size %d", tc.strategy, cfg.Micro, cfg.Accum, cfg.TrainBatch)
		}
	}
	// activation_checkpointing alone recomputes nothing (the model code
	// must call deepspeed.checkpointing.checkpoint): recompute=full is not
	// a DeepSpeed config's.
	_, stderr, code := run(t, "explain", "--model", "llama3-8b", "--cluster", "h100-8", "--batch", "32", "--strategy", "dp=8,zero=2,recompute=full", "--emit", "deepspeed")
	if code != ExitBadInput || !strings.Contains(stderr, "recompute=full") {
		t.Errorf("--emit deepspeed with recompute=full: exit %d, %q; want exit 2 naming recompute=full", code, stderr)
	}
}

// TestEmitInexpressible checks that a strategy a framework cannot express
// is bad input whose message names the part.
func TestEmitInexpressible(t *testing.T) {
	clearEnv(t)
	for _, tc := range []struct {
		framework, strategy, part string
	}{
		{"megatron", "dp=2,fsdp=4,tp=8", "fsdp=4"},
		{"megatron", "tp=8,pp=8,schedule=gpipe", "schedule=gpipe"},
		{"maxtext", "dp=8,zero=1,tp=8", "zero=1"},
		{"maxtext", "tp=8,pp=8", "schedule=1f1b"},
		{"maxtext", "dp=8,tp=8,sp=false", "sp=false"},
		{"torchtitan", "dp=8,zero=1,tp=8", "zero=1"},
		{"torchtitan", "dp=8,tp=8,sp=false", "sp=false"},
		{"deepspeed", "tp=8,pp=8", "tp=8"},
		{"deepspeed", "fsdp=64,recompute=selective", "recompute=selective"},
		{"megatron", "tp=8,pp=8,schedule=zb-h1", "schedule=zb-h1"},
		{"megatron", "tp=8,pp=8,schedule=dualpipe", "schedule=dualpipe"},
		{"maxtext", "tp=8,pp=8,schedule=zb-v", "schedule=zb-v"},
		{"torchtitan", "tp=8,pp=8,schedule=zbh1", "schedule=zb-h1"},
		{"torchtitan", "tp=8,pp=8,schedule=dualpipe", "schedule=dualpipe"},
	} {
		args := []string{"explain", "--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--strategy", tc.strategy, "--emit", tc.framework}
		stdout, stderr, code := run(t, args...)
		if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, tc.part) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("plan %s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", strings.Join(args, " "), code, stdout, stderr, tc.part)
		}
	}
}

// TestPlanEmit checks that plan --emit prints the recommended strategy of
// the front.
func TestPlanEmit(t *testing.T) {
	clearEnv(t)
	args := []string{"--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--fix", "fsdp=1,sp=true,schedule=1f1b"}
	// --emit megatron plans under Megatron's profile: so does the plan it is compared with.
	p, _ := runPlanJSON(t, append(args, "--framework", "megatron")...)
	s := p.Pareto[p.Recommended]["strategy"].(map[string]any)
	flags := megatronFlags(t, emitOut(t, append(args, "--emit", "megatron", "--quiet")...))
	for flag, key := range map[string]string{"--tensor-model-parallel-size": "tp", "--pipeline-model-parallel-size": "pp", "--context-parallel-size": "cp", "--micro-batch-size": "mb"} {
		if want := strconv.Itoa(int(s[key].(float64))); flags[flag] != want {
			t.Errorf("%s = %q, want the recommended row's %s = %s", flag, flags[flag], key, want)
		}
	}
}

// TestEmitFP8 checks precision=fp8 in each framework's launch settings:
// Megatron-LM's Transformer Engine flags with the profile's recipe,
// torchtitan's float8 converter, MaxText's quantization key; DeepSpeed has
// none and the search refuses it.
func TestEmitFP8(t *testing.T) {
	const args = "explain --model llama3-8b --cluster h100-64 --batch 64 --seq 8192"
	mg := megatronFlags(t, emitOut(t, append(strings.Fields(args), "--strategy", "dp=8,zero=1,tp=8,precision=fp8", "--emit", "megatron")...))
	if mg["--fp8-format"] != "hybrid" || mg["--fp8-recipe"] != "delayed" {
		t.Errorf("megatron fp8 flags: format %q, recipe %q", mg["--fp8-format"], mg["--fp8-recipe"])
	}
	tt := emitOut(t, append(strings.Fields(args), "--strategy", "fsdp=8,tp=8,precision=fp8", "--emit", "torchtitan")...)
	var cfg map[string]any
	if err := toml.Unmarshal([]byte(tt), &cfg); err != nil {
		t.Fatalf("torchtitan output is not TOML: %v\n%s", err, tt)
	}
	// torchtitan v0.2.2's converter registry name and config section
	// (torchtitan/components/quantization/float8.py:238).
	conv, _ := tomlPath(cfg, "model", "converters").([]any)
	rec, _ := tomlPath(cfg, "quantize", "linear", "float8", "recipe_name").(string)
	if len(conv) != 1 || conv[0] != "quantize.linear.float8" || rec != "tensorwise" {
		t.Errorf("torchtitan fp8: converters %v, recipe %q", conv, rec)
	}
	mt := emitOut(t, append(strings.Fields(args), "--strategy", "fsdp=8,tp=8,precision=fp8,recompute=minimal", "--emit", "maxtext")...)
	if !strings.Contains(mt, "\nquantization: fp8\n") {
		t.Errorf("maxtext fp8: no quantization key in\n%s", mt)
	}
	stdout, stderr, code := run(t, append(strings.Fields(args), "--strategy", "fsdp=64,precision=fp8", "--emit", "deepspeed")...)
	if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, "precision=fp8") {
		t.Errorf("deepspeed fp8: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// tomlPath returns the value at the keys' path in a decoded TOML table, or
// nil.
func tomlPath(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestEmitExpertTensor checks that the experts' split over tp or whole
// (etp) reaches Megatron-Core and torchtitan, whose defaults differ, and
// that a split over part of tp is refused.
func TestEmitExpertTensor(t *testing.T) {
	const args = "explain --model mixtral-8x7b --cluster h100-64 --batch 256 --seq 4096"
	mg := megatronFlags(t, emitOut(t, append(strings.Fields(args), "--strategy", "dp=16,tp=4,ep=8,etp=4", "--emit", "megatron")...))
	if mg["--expert-model-parallel-size"] != "8" || mg["--expert-tensor-parallel-size"] != "4" {
		t.Errorf("megatron: ep %q, etp %q", mg["--expert-model-parallel-size"], mg["--expert-tensor-parallel-size"])
	}
	tt := emitOut(t, append(strings.Fields(args), "--strategy", "fsdp=16,tp=4,ep=8,etp=4", "--emit", "torchtitan")...)
	if !strings.Contains(tt, "\nexpert_tensor_parallel_degree = 4\n") {
		t.Errorf("torchtitan: no expert_tensor_parallel_degree = 4 in\n%s", tt)
	}
	// Whole experts (etp=1) lie over the tp ranks first in both
	// frameworks' expert grids, where the planner carves ep out of tp's
	// ranks and then dp's (or fsdp's): emitted as etp=1.
	mg = megatronFlags(t, emitOut(t, append(strings.Fields(args), "--strategy", "dp=16,tp=4,ep=8,etp=1", "--emit", "megatron")...))
	if mg["--expert-model-parallel-size"] != "8" || mg["--expert-tensor-parallel-size"] != "1" {
		t.Errorf("megatron etp=1: ep %q, etp %q", mg["--expert-model-parallel-size"], mg["--expert-tensor-parallel-size"])
	}
	tt = emitOut(t, append(strings.Fields(args), "--strategy", "fsdp=16,tp=4,ep=8,etp=1", "--emit", "torchtitan")...)
	if !strings.Contains(tt, "\nexpert_parallel_degree = 8\n") || !strings.Contains(tt, "\nexpert_tensor_parallel_degree = 1\n") {
		t.Errorf("torchtitan etp=1: no expert_parallel_degree = 8 and expert_tensor_parallel_degree = 1 in\n%s", tt)
	}
	// An ep placed off the grid (on the nodes, beside whole experts on the
	// gpus' tp ranks) is refused as placed rather than run on another mesh.
	_, stderr, code := run(t, append(strings.Fields(args), "--strategy", "dp=16,tp=4,ep=8,etp=1,mesh=tp:gpu*4;dp:gpu*2.node*8;ep:node*8", "--emit", "megatron")...)
	if code != ExitBadInput || !strings.Contains(stderr, "expert grid") {
		t.Errorf("megatron etp=1 off the grid: exit %d, stderr %q; want a refusal naming the expert grid", code, stderr)
	}
	_, stderr, code = run(t, append(strings.Fields(args), "--strategy", "dp=16,tp=4,ep=8,etp=2")...)
	if code != ExitBadInput || !strings.Contains(stderr, "etp=2 with tp=4") {
		t.Errorf("etp=2 with tp=4: exit %d, stderr %q", code, stderr)
	}
}

// TestPlanEmitRecommendedRowEmits checks that after a successful search
// with --emit F the recommended row is one F runs: the search holds F's
// limits and placement rules, so the emitter never refuses it (no exit 2
// after a search), and a GPU-only framework refuses a TPU cluster before
// searching, naming what would run there.
func TestPlanEmitRecommendedRowEmits(t *testing.T) {
	clearEnv(t)
	plans := []string{
		"--model llama3-8b --cluster h100-64 --batch 256 --seq 8192",
		"--model llama3-8b --cluster h100-64 --seq 131072 --batch 32",
		"--model llama3-70b --cluster h100-256 --batch 256",
		"--model llama3-70b --cluster h100-256 --batch 256 --fix pp=4,schedule=interleaved",
		"--model llama3-70b --cluster h100-256 --batch 256 --fix recompute=full,pp=8",
		"--model mixtral-8x7b --cluster h100-64 --batch 256 --seq 4096",
		"--model llama3-8b --cluster h100-64 --batch 256 --seq 8192 --fix zero=0",
		"--model llama3-8b --cluster v5p-64",
		"--model llama3-70b --cluster 2xv5p-64 --batch 128",
	}
	for _, p := range plans {
		for _, f := range []string{"megatron", "torchtitan", "maxtext", "deepspeed"} {
			args := append(strings.Fields(p), "--quiet", "--emit", f)
			stdout, stderr, code := run(t, args...)
			switch {
			case code == 0:
				if stdout == "" {
					t.Errorf("plan %s: exit 0 with nothing emitted", strings.Join(args, " "))
				}
			case code == ExitBadInput && strings.Contains(stderr, "GPUs only"):
				if !strings.Contains(p, "v5p") || !strings.Contains(stderr, "maxtext") {
					t.Errorf("plan %s: %q; want a GPU-only refusal on TPU clusters only, naming maxtext", strings.Join(args, " "), stderr)
				}
			case code == ExitBadInput && strings.HasPrefix(stderr, "plan: cannot search"):
				// The problem itself has no strategy for f (e.g. a batch
				// smaller than the GPUs for plain ZeRO): no search ran.
			case code == ExitNoFit && strings.HasPrefix(stderr, "plan: search:"):
				// The search found no row that f runs and that fits (a
				// DeepSpeed config recomputes nothing): no row to emit.
			default:
				t.Errorf("plan %s: exit %d, stderr %q; want the recommended row emitted", strings.Join(args, " "), code, stderr)
			}
		}
	}
}

// TestEmitMegatronRecomputeModules checks that a --recompute-modules
// policy reaches Megatron-LM as the list it names, with grouped GEMM for
// moe_act, and that what TransformerConfig refuses is refused: an expert
// module on a dense model, moe_act under fp8 delayed scaling.
func TestEmitMegatronRecomputeModules(t *testing.T) {
	tests := []struct {
		model, strategy string
		want            map[string]string // flag -> value ("" for a switch)
		refused         string
	}{
		{"llama3-70b", "dp=2,zero=1,tp=4,pp=8,recompute=core_attn+mlp", map[string]string{"--recompute-granularity": "selective", "--recompute-modules": "core_attn mlp"}, ""},
		{"mixtral-8x7b", "dp=32,zero=1,tp=2,ep=8,recompute=moe_act", map[string]string{"--recompute-modules": "moe_act", "--moe-grouped-gemm": ""}, ""},
		{"llama3-70b", "dp=2,zero=1,tp=4,pp=8,recompute=moe", nil, "expert layers, which llama3-70b does not have"},
		{"mixtral-8x7b", "dp=32,zero=1,tp=2,ep=8,recompute=moe_act,precision=fp8", nil, "delayed scaling"},
	}
	for _, tt := range tests {
		args := []string{"explain", "--model", tt.model, "--cluster", "h100-64", "--batch", "64", "--seq", "4096", "--framework", "megatron", "--strategy", tt.strategy, "--emit", "megatron"}
		if tt.refused != "" {
			_, stderr, code := run(t, args...)
			if code != ExitBadInput || !strings.Contains(stderr, tt.refused) {
				t.Errorf("%s: exit %d, stderr %q; want a refusal naming %q", tt.strategy, code, stderr, tt.refused)
			}
			continue
		}
		flags := megatronFlags(t, emitOut(t, args...))
		for k, v := range tt.want {
			if got, ok := flags[k]; !ok || got != v {
				t.Errorf("%s: %s = %q (set %v), want %q", tt.strategy, k, got, ok, v)
			}
		}
	}
}

// TestEmitNVFP4Profile: --emit megatron takes a profile file whose base is
// megatron (its limits are Megatron's), so an NVFP4 plan emits Megatron's
// fp4 flags; a profile of another base, or another built-in framework, is
// refused in one sentence that names the way out.
func TestEmitNVFP4Profile(t *testing.T) {
	dir := t.TempDir()
	nv := filepath.Join(dir, "nvfp4.yaml")
	titan := filepath.Join(dir, "titan.yaml")
	for f, text := range map[string]string{nv: "base: megatron\nfp8_recipe: nvfp4\n", titan: "base: torchtitan\n"} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"explain", "--model", "llama3-70b", "--cluster", "gb200-64", "--batch", "512", "--seq", "8192", "--strategy", "dp=8,zero=1,tp=2,pp=4,precision=fp8", "--emit", "megatron"}
	mg := megatronFlags(t, emitOut(t, append(args, "--framework", nv)...))
	if mg["--fp4-format"] != "e2m1" || mg["--fp4-recipe"] != "nvfp4" {
		t.Errorf("megatron nvfp4 flags: format %q, recipe %q", mg["--fp4-format"], mg["--fp4-recipe"])
	}
	for _, fw := range []string{titan, "torchtitan"} {
		stdout, stderr, code := run(t, append(args, "--framework", fw)...)
		if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, "base: megatron") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("--framework %s --emit megatron: exit %d, stdout %q, stderr %q", fw, code, stdout, stderr)
		}
	}
	// An H100 has no fp4 matmuls: the recipe is refused there.
	h100 := append([]string{}, args...)
	h100[4] = "h100-64"
	stdout, stderr, code := run(t, append(h100, "--framework", nv)...)
	if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, "peak_fp4_flops is 0") {
		t.Errorf("nvfp4 on h100: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
