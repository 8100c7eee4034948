package planner

import (
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
)

// TestDefaultBatchTokens pins the rule: 2048 tokens per chip, at least
// 4Mi and at most 16Mi.
func TestDefaultBatchTokens(t *testing.T) {
	for _, tt := range []struct{ chips, want int }{
		{0, 4 << 20}, {1, 4 << 20}, {128, 4 << 20}, // the floor
		{2048, 4 << 20},   // 2048 × 2048 = 4Mi exactly
		{3072, 6 << 20},   // Megatron-LM's 1T run: 3,072 sequences of 2,048
		{4096, 8 << 20},   // 2048 × 4096
		{8192, 16 << 20},  // Llama 3 405B on 8,192 H100: 16M tokens
		{16384, 16 << 20}, // and on 16,384: still 16M, the ceiling
		{1 << 20, 16 << 20},
	} {
		if got := DefaultBatchTokens(tt.chips); got != tt.want {
			t.Errorf("DefaultBatchTokens(%d) = %d, want %d", tt.chips, got, tt.want)
		}
	}
}

// TestDefaultBatchSequences pins the default's sequences: the tokens of
// DefaultBatchTokens in whole sequences, then the nearest multiple of the
// chips where there are at least as many sequences as chips.
func TestDefaultBatchSequences(t *testing.T) {
	for _, tt := range []struct{ chips, seq, want int }{
		{64, 8192, 512},     // 4Mi / 8192 = 512, a multiple of 64
		{72, 8192, 504},     // GB200 NVL72: 512 / 72 = 7.1, so 7 × 72
		{24, 8192, 504},     // three 8-GPU nodes: 512 / 24 = 21.3, so 21 × 24
		{100, 8192, 500},    // 512 / 100 = 5.12, so 5 × 100
		{96, 4096, 1056},    // 1024 / 96 = 10.67, so 11 × 96
		{1024, 8192, 512},   // fewer sequences than chips: 512 = 1024/2 already
		{1536, 8192, 768},   // 512 < 1536: 384 = 1536/4 is the share; 384 (3.1M tokens) is below 4Mi, so 768
		{24576, 8192, 1536}, // 16Mi = 2048 < 24576: 1536 = 24576/16; 3072 (25M tokens) is above 16Mi, so 1536
		{72, 131072, 36},    // NVL72 at 128K: 32 < 72, share 18; 36 is nearer than 18
		{96, 131072, 48},    // 32 < 96, share 24; 24 nearer but 3.1M tokens, so 48
		{1025, 8192, 512},   // an odd count above the batch: no share, not rounded
		{3072, 2048, 3072},  // Megatron-LM's 1T run: one 2,048-token sequence a GPU
		{8192, 8192, 2048},  // Llama 3 405B's 16M tokens
		{8, 3000, 1400},     // 4Mi / 3000 = 1398.1: 1398, then 175 × 8
		{1, 1 << 30, 1},     // a sequence longer than the batch: at least one
		{0, 8192, 512},      // no chips: the tokens alone
		{8, 0, 1},           // no sequence length: one sequence
	} {
		if got := DefaultBatchSequences(tt.chips, tt.seq, true); got != tt.want {
			t.Errorf("DefaultBatchSequences(%d, %d, true) = %d, want %d", tt.chips, tt.seq, got, tt.want)
		}
	}
}

// TestDefaultBatchWholeSequences checks the default batch for a framework
// that cannot split a sequence over chips (no tp, cp or pp): at least one
// sequence a chip, then rounded as for any framework.
func TestDefaultBatchWholeSequences(t *testing.T) {
	for _, tt := range []struct{ chips, seq, want int }{
		{64, 8192, 512},    // 8 a chip already: as with splitting
		{72, 8192, 504},    // rounded to the chips as with splitting
		{1024, 8192, 1024}, // 512 < 1024: raised to one a chip, 8Mi tokens
		{1536, 8192, 1536}, // not 768 (a share), which would leave chips without a sequence
		{3072, 8192, 3072}, // 25M tokens, above 16Mi: the least that runs
		{0, 8192, 512},     // no chips: the tokens alone
	} {
		if got := DefaultBatchSequences(tt.chips, tt.seq, false); got != tt.want {
			t.Errorf("DefaultBatchSequences(%d, %d, false) = %d, want %d", tt.chips, tt.seq, got, tt.want)
		}
	}
}

// TestWorkloadDefaultRule checks that the default's rule names the
// rounding to the chips, or the raise to one sequence a chip, only where
// it moved the batch, and that a given batch or token count is neither
// rounded nor raised.
func TestWorkloadDefaultRule(t *testing.T) {
	m := model.Spec{Name: "m", SeqLen: 8192}
	for _, tt := range []struct {
		name                string
		batch, tokens, chip int
		whole               bool // the framework cannot split a sequence
		want                int
		rule                string // a substring of the rule; "" for none
	}{
		{"power of two", 0, 0, 64, false, 512, "defaulted to"},
		{"nvl72", 0, 0, 72, false, 504, "rounded to 504 sequences, a multiple of the 72 chips"},
		{"given batch", 500, 0, 72, false, 500, ""},
		{"given tokens", 0, 4 << 20, 72, false, 512, ""},
		{"share of the chips", 0, 0, 1536, false, 768, "rounded to 768 sequences, a multiple of 384 (the 1536 chips over 4)"},
		{"fewer sequences than chips, power of two", 0, 0, 1024, false, 512, "4Mi-16Mi, as Llama 3 and Megatron-LM ran; set"},
		{"whole sequences", 0, 0, 1024, true, 1024, "raised to 1024 sequences, one a chip"},
		{"whole sequences, enough of them", 0, 0, 64, true, 512, "4Mi-16Mi, as Llama 3 and Megatron-LM ran; set"},
		{"whole sequences, given batch", 512, 0, 1024, true, 512, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, rule, err := Workload(m, 0, tt.batch, tt.tokens, tt.chip, !tt.whole)
			if err != nil {
				t.Fatal(err)
			}
			if w.Batch != tt.want {
				t.Errorf("batch = %d, want %d", w.Batch, tt.want)
			}
			if tt.rule == "" && rule != "" || !strings.Contains(rule, tt.rule) {
				t.Errorf("rule = %q, want it to contain %q", rule, tt.rule)
			}
			if tt.chip == 64 && strings.Contains(rule, "rounded") {
				t.Errorf("rule = %q names a rounding that did not move the batch", rule)
			}
		})
	}
}
