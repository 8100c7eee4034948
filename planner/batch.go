package planner

import (
	"fmt"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// The default global batch, used when neither --batch nor --batch-tokens
// is given, follows the batches of the largest published runs:
// DefaultBatchTokensPerChip tokens per chip, but at least
// MinDefaultBatchTokens and at most MaxDefaultBatchTokens.
//
//   - Llama 3 405B trained with 16M tokens per step on 8,192 and on 16,384
//     H100 (Llama Team 2024, "The Llama 3 Herd of Models", Table 4;
//     docs/formulas.md §1.3): 2,048 and 1,024 tokens per GPU. Its batch was
//     4M tokens early in training and 16M at the end (§3.4.1).
//   - Megatron-LM's largest runs took about one 2,048-token sequence per
//     GPU: 3,072 sequences on 3,072 A100 for 1T parameters, 1,536 on 1,536
//     for 175B (Narayanan et al. 2021, Table 1; docs/published-runs.md).
//   - Llama 2 used 4M tokens at every size (Touvron et al. 2023, §2.2), as
//     Llama 3 did at first: the floor.
//
// So 2,048 tokens per chip, kept between 4Mi and 16Mi: up to 2,048 chips
// the batch is 4Mi tokens (512 sequences of 8,192, 1,024 of 4,096), from
// 8,192 chips on it is 16Mi (2,048 sequences of 8,192, Llama 3 405B's),
// and in between it grows with the cluster. The model enters through its
// sequence length, which turns tokens into whole sequences. Where there
// are at least as many sequences as chips, the sequences are rounded to
// the nearest multiple of the chip count, so that every data-parallel
// degree the cluster allows divides the batch: 512 sequences on a GB200
// NVL72's 72 GPUs would leave no pure data-parallel or fully sharded
// layout (72 does not divide 512), 504 do (7 a GPU). Where there are fewer
// sequences than chips, the rest of the chips must split each sequence
// (tp, cp, pp), so the sequences are rounded to a multiple of the largest
// chips/2^k not above them, the one of the two nearest that keeps the
// tokens between 4Mi and 16Mi: on 1,536 GPUs 512 sequences of 8,192
// leave no layout whose sequence-splitting degrees are powers of two (3
// divides 1,536, not 512), 768 (a multiple of 384) do, at 6.3M tokens;
// on a power-of-two cluster the batch does not move. A framework that
// cannot split a sequence at all (no tensor, context or pipeline
// parallelism: space.Limits.SplitsSequences) needs one whole sequence a
// chip, so there the default is at least the chip count (1,024 sequences
// of 8,192 on 1,024 GPUs, 8Mi tokens, under DeepSpeed's ZeRO). The rule says
// nothing about the batch a model trains well at (its critical batch): a
// capacity review should give the training recipe's --batch, and every
// output that used the default says so.
const (
	// DefaultBatchTokensPerChip is the default batch's tokens per chip.
	DefaultBatchTokensPerChip = 2 << 10
	// MinDefaultBatchTokens is the smallest default batch: 4Mi tokens.
	MinDefaultBatchTokens = 4 << 20
	// MaxDefaultBatchTokens is the largest default batch: 16Mi tokens.
	MaxDefaultBatchTokens = 16 << 20
)

// DefaultBatchTokens returns the default global batch in tokens for a
// cluster of chips: DefaultBatchTokensPerChip × chips between
// MinDefaultBatchTokens and MaxDefaultBatchTokens.
func DefaultBatchTokens(chips int) int {
	return min(MaxDefaultBatchTokens, max(MinDefaultBatchTokens, DefaultBatchTokensPerChip*max(chips, 0)))
}

// Workload returns the global batch and sequence length of a problem on a
// cluster of chips: seq tokens, or the model's seq_len when seq is 0;
// batch sequences, or batchTokens, or DefaultBatchTokens(chips) when both
// are 0, rounded to the nearest whole number of sequences, at least one;
// the default's sequences are then rounded to a multiple of chips, or of
// a share of them, and raised to chips where the framework cannot split
// a sequence (split false; DefaultBatchSequences).
// rule is empty when the batch was given, else the default's rule in words
// and how to set the batch, which every output repeats. A model without a
// sequence length and no seq is a *search.InputError.
func Workload(m model.Spec, seq, batch, batchTokens, chips int, split bool) (w space.Workload, rule string, err error) {
	if seq == 0 {
		seq = m.SeqLen
	}
	if seq <= 0 {
		return space.Workload{}, "", &search.InputError{Err: fmt.Errorf("model %s has no seq_len: give --seq", results.Label(m.Name))}
	}
	if batch == 0 {
		if batchTokens > 0 {
			batch = wholeSequences(batchTokens, seq)
		} else {
			batch = DefaultBatchSequences(chips, seq, split)
			rule = DefaultBatchRule(chips, seq, batch, split)
		}
	}
	return space.Workload{Batch: batch, SeqLen: seq}, rule, nil
}

// DefaultBatchSequences returns the default global batch in sequences of
// seq tokens for a cluster of chips under a framework that can split one
// sequence over several chips or not (split, space.Limits.SplitsSequences):
// DefaultBatchTokens(chips) in whole sequences, at least one, and at least
// chips when split is false (one whole sequence a chip), rounded to a
// multiple of batchMultiple(chips, ·). Where that is chips itself, it is
// the nearest multiple (a tie rounds up), so that a data-parallel degree
// of any divisor of chips divides it; where it is a share of the chips
// (fewer sequences than chips), it is the nearer of the two multiples
// around it, unless only the other keeps the tokens between
// MinDefaultBatchTokens and MaxDefaultBatchTokens.
func DefaultBatchSequences(chips, seq int, split bool) int {
	batch := wholeSequences(DefaultBatchTokens(chips), seq)
	if !split {
		batch = max(batch, chips) // one whole sequence a chip
	}
	d := batchMultiple(chips, batch)
	if d <= 1 {
		return batch
	}
	lo := batch / d * d // at least d: d is at most batch
	hi := lo + d
	if d == chips {
		if batch-lo < hi-batch {
			return lo
		}
		return hi
	}
	inRange := func(n int) bool {
		t := n * seq
		return t >= MinDefaultBatchTokens && t <= MaxDefaultBatchTokens
	}
	near, far := lo, hi
	if hi-batch <= batch-lo {
		near, far = hi, lo
	}
	if !inRange(near) && inRange(far) {
		return far
	}
	return near
}

// batchMultiple returns what the default batch of batch sequences on chips
// is rounded to a multiple of: chips where batch is at least chips, else
// the largest chips/2^k not above batch (the chips that split one
// sequence over tp, cp or pp a power of two), 1 where halving chips
// reaches an odd count above batch (or chips is not positive).
func batchMultiple(chips, batch int) int {
	if chips <= 0 {
		return 1
	}
	d := chips
	for d > batch && d%2 == 0 {
		d /= 2
	}
	if d > batch {
		return 1
	}
	return d
}

// DefaultBatchRule says how the default batch, batch sequences of seq
// tokens (DefaultBatchSequences with split), was chosen for chips and how
// to set another; it names the raise to one sequence a chip or the
// rounding to the chips where that moved the batch.
func DefaultBatchRule(chips, seq, batch int, split bool) string {
	tokens := DefaultBatchTokens(chips)
	rounded := ""
	switch whole := wholeSequences(tokens, seq); {
	case batch == whole:
	case !split && whole < chips:
		rounded = fmt.Sprintf(", raised to %d sequences, one a chip, as a framework without tensor, context or pipeline parallelism needs", batch)
	default:
		if d := batchMultiple(chips, whole); d == chips {
			rounded = fmt.Sprintf(", rounded to %d sequences, a multiple of the %d chips", batch, chips)
		} else {
			rounded = fmt.Sprintf(", rounded to %d sequences, a multiple of %d (the %d chips over %d)", batch, d, chips, chips/d)
		}
	}
	return fmt.Sprintf("defaulted to %s tokens for %d chips: %d per chip within 4Mi-16Mi, as Llama 3 and Megatron-LM ran%s; set --batch or --batch-tokens",
		results.Count(float64(tokens)), chips, DefaultBatchTokensPerChip, rounded)
}

// wholeSequences is tokens in the nearest whole number of seq-token
// sequences, at least one (one for a seq of 0).
func wholeSequences(tokens, seq int) int {
	if seq <= 0 {
		return 1
	}
	return max(1, (tokens+seq/2)/seq)
}
