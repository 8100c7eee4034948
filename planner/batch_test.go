package planner

import "testing"

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
