package cmd

import (
	"fmt"
	"strings"
	"testing"
)

// TestDefaultBatchSaidEverywhere wants every output of a plan or explain
// whose batch was defaulted to say so and how to set it, and no output
// whose batch was given to say it. The README's example plans 2048
// sequences of 8192 on 16,384 H100, Llama 3 405B's batch.
func TestDefaultBatchSaidEverywhere(t *testing.T) {
	clearEnv(t)
	const said = "set --batch or --batch-tokens"
	base := []string{"--model", "llama3-8b", "--cluster", "h100-64", "--top", "1", "--quiet"}
	explain := []string{"explain", "--model", "llama3-8b", "--cluster", "h100-64", "--strategy", "dp=8,tp=8"}
	for _, f := range []string{"table", "json", "csv", "md", "html"} {
		for _, args := range [][]string{base, explain} {
			args := append(append([]string{}, args...), "--format", f)
			stdout, stderr, code := run(t, args...)
			if code != ExitOK || !strings.Contains(stdout, said) {
				t.Errorf("plan %s: exit %d, %s; the output does not say %q", strings.Join(args, " "), code, stderr, said)
			}
			given := append(append([]string{}, args...), "--batch", "256")
			stdout, _, _ = run(t, given...)
			if strings.Contains(stdout, said) {
				t.Errorf("plan %s: the output says the batch was defaulted", strings.Join(given, " "))
			}
		}
	}
	_, stderr, code := run(t, append(base, "--emit", "torchtitan")...)
	if code != ExitOK || !strings.Contains(stderr, said) {
		t.Errorf("--emit: exit %d, stderr %q does not say %q", code, stderr, said)
	}
	p, _ := runPlanJSON(t, "--model", "llama3-405b", "--cluster", "h100-16384", "--tokens", "15T", "--price", "2.5", "--top", "1")
	if p.Batch.Sequences != 2048 || p.Batch.SeqLen != 8192 {
		t.Errorf("the README's example plans %d sequences of %d, want Llama 3's 2048 of 8192", p.Batch.Sequences, p.Batch.SeqLen)
	}
}

// TestDefaultBatchWholeSequences wants the default batch of a framework
// that cannot split a sequence over chips (deepspeed: no tp, cp or pp) to
// be at least one sequence a chip, so that it plans on 1,024 GPUs at 8K
// tokens (512 sequences would leave it no layout), alone and compared with
// a framework that can split them, which then shares that batch; one that
// can, alone, keeps 512.
func TestDefaultBatchWholeSequences(t *testing.T) {
	clearEnv(t)
	for _, tt := range []struct {
		framework string
		batch     int
	}{
		{"deepspeed", 1024},
		{"deepspeed,megatron", 1024},
		{"megatron", 512},
	} {
		stdout, stderr, code := run(t, "--model", "llama3-8b", "--cluster", "h100-1024", "--framework", tt.framework, "--quiet", "--top", "1")
		if code != ExitOK {
			t.Errorf("--framework %s: exit %d: %s", tt.framework, code, stderr)
			continue
		}
		if want := fmt.Sprintf("batch    %d sequences", tt.batch); !strings.Contains(stdout, want) {
			t.Errorf("--framework %s: the output lacks %q:\n%s", tt.framework, want, stdout)
		}
	}
}
