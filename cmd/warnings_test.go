package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// weirdConfig is a config.json of a model_type the planner does not know:
// it loads as a Llama-like decoder with a warning per assumption.
const weirdConfig = `{"model_type": "weird", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
 "intermediate_size": 4096, "vocab_size": 32000, "max_position_embeddings": 2048}`

// TestWarningsOnEveryLoadPath: the assumptions made reading a config.json of
// an unknown model_type reach stderr whether the model comes from --model,
// a sweep's models or a steps file's model column.
func TestWarningsOnEveryLoadPath(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weird.json")
	sweepCfg := filepath.Join(dir, "sweep.yaml")
	stepsFile := filepath.Join(dir, "steps.csv")
	for name, text := range map[string]string{
		cfg:       weirdConfig,
		sweepCfg:  "models: [" + cfg + "]\nclusters: [h100-8]\nbatches: [16]\nseqs: [2048]\nsearch: {method: auto, seed: 1, top: 1}\n",
		stepsFile: "model,seq,micro_batch,accumulated_micro_batches,recompute,compiled,step_s,peak_allocated_bytes,outcome\nweird.json,2048,1,1,none,1,0.05,10000000000,ran\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := `model_type "weird" is not one the planner knows`
	for _, args := range [][]string{
		{"--model", cfg, "--cluster", "h100-8", "--batch", "16", "--quiet"},
		{"sweep", "--config", sweepCfg, "--out", filepath.Join(dir, "out"), "--quiet"},
		{"validate", "--steps", stepsFile},
	} {
		_, stderr, code := run(t, args...)
		if code != ExitOK {
			t.Errorf("plan %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			continue
		}
		if !strings.Contains(stderr, "plan: warning: ") || !strings.Contains(stderr, want) {
			t.Errorf("plan %s: stderr has no warning about the model_type:\n%s", strings.Join(args, " "), stderr)
		}
	}
}

// TestALiBiNote: a plan or explain of an ALiBi model says on stderr that
// its attention is planned on FlashAttention-2, where that is so.
func TestALiBiNote(t *testing.T) {
	clearEnv(t)
	const want = "mpt-7b has ALiBi, which FlashAttention-3 and PyTorch's SDPA do not take"
	for _, tt := range []struct {
		args []string
		note bool
	}{
		{[]string{"--model", "mpt-7b", "--cluster", "h100-8", "--batch", "16", "--quiet"}, true},
		{[]string{"explain", "--model", "mpt-7b", "--cluster", "h100-8", "--batch", "16", "--strategy", "fsdp=8"}, true},
		{[]string{"--model", "mpt-7b", "--cluster", "h100-8", "--batch", "16", "--quiet", "--framework", "megatron"}, false},
		{[]string{"--model", "mpt-7b", "--cluster", "a100-8", "--batch", "16", "--quiet"}, false},
		{[]string{"--model", "llama3-8b", "--cluster", "h100-8", "--batch", "16", "--quiet"}, false},
	} {
		_, stderr, code := run(t, tt.args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", tt.args, code, stderr)
		}
		if got := strings.Contains(stderr, want); got != tt.note {
			t.Errorf("%v: note %v, want %v; stderr %q", tt.args, got, tt.note, stderr)
		}
	}
}
