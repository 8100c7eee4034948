package runs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/meshplan/meshplan/model"
)

// Convention names a FLOP count per token that a source divides by when it
// reports MFU or TFLOP/s (docs/published-runs.md §2, docs/formulas.md §1.2).
type Convention string

// The FLOP conventions of the published sources.
const (
	// ConventionContract is the contract's model FLOPs, model.ModelFLOPsPerToken:
	// 6*(active non-embedding params) + 12*L*q*s + 6*h*V.
	ConventionContract Convention = "contract"
	// ConventionMegatronHFU is Narayanan et al. 2021 §5.1:
	// F = 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) per iteration, which counts
	// the full-recompute forward (HFU-like). Used by Narayanan 2021, MT-NLG,
	// BLOOM ("hardware TFLOPs") and, probably, GPT-NeoX.
	ConventionMegatronHFU Convention = "megatron-hfu"
	// ConventionMegatronMFU is Korthikanti et al. 2022:
	// 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)) per iteration, model FLOPs only.
	ConventionMegatronMFU Convention = "megatron-mfu"
	// Convention6NAttention is MosaicML llm-foundry's and torchtitan's
	// 6*N + 12*L*d*s per token, N the total parameter count (embeddings
	// included) and attention without causal halving.
	Convention6NAttention Convention = "6n-attention"
	// ConventionMaxText2024 is MaxText's calculate_tflops_training_per_device
	// before PR #1988: 6 FLOPs per token per matmul weight of the layers and
	// the logits (norms and the embedding lookup excluded) plus
	// 12*L*q*s for the attention scores without causal halving.
	ConventionMaxText2024 Convention = "maxtext-2024"
	// ConventionCausal is model FLOPs with the causal attention counted at
	// half: the contract's count with its attention-score term halved
	// (Megatron-Bridge's performance summaries, MaxText after PR #1988;
	// docs/published-runs-2.md: 51.5 GFLOP/token for Llama3-8B at 8K, against
	// 57.9 un-halved).
	ConventionCausal Convention = "causal"
	// ConventionUnknown marks a source whose FLOP count is not stated (OPT);
	// its MFU and TFLOP/s figures cannot be converted.
	ConventionUnknown Convention = "unknown"
)

// parseConvention reads a flops_convention cell.
func parseConvention(v string) (Convention, error) {
	c := Convention(strings.ToLower(strings.TrimSpace(v)))
	switch c {
	case ConventionContract, ConventionMegatronHFU, ConventionMegatronMFU, Convention6NAttention,
		ConventionMaxText2024, ConventionCausal, ConventionUnknown:
		return c, nil
	}
	return "", fmt.Errorf("%q is not a FLOP convention (known: %s, %s, %s, %s, %s, %s)", v,
		ConventionContract, ConventionMegatronHFU, ConventionMegatronMFU, Convention6NAttention, ConventionMaxText2024, ConventionCausal)
}

// FLOPsPerToken returns the convention's FLOPs per trained token for model
// m at sequence length seqLen.
func (c Convention) FLOPsPerToken(m model.Spec, seqLen int) (float64, error) {
	l, h, s, v := float64(m.Layers), float64(m.Hidden), float64(seqLen), float64(m.Vocab)
	switch c {
	case ConventionContract:
		return m.ModelFLOPsPerToken(seqLen), nil
	case ConventionCausal:
		// The attention-score term is what grows with the sequence
		// (ModelFLOPsPerToken at 0 tokens has none); halve it.
		noAttention := m.ModelFLOPsPerToken(0)
		return noAttention + (m.ModelFLOPsPerToken(seqLen)-noAttention)/2, nil
	case ConventionMegatronHFU:
		// Narayanan 2021 §5.1, divided by B*s tokens.
		return 96 * l * h * h * (1 + s/(6*h) + v/(16*l*h)), nil
	case ConventionMegatronMFU:
		// Korthikanti 2022 §6 (model FLOPs), divided by B*s tokens.
		return 72 * l * h * h * (1 + s/(6*h) + v/(12*l*h)), nil
	case Convention6NAttention:
		// llm-foundry benchmarking README; torchtitan get_num_flop_per_token.
		return 6*float64(m.Counts().Total) + 12*l*h*s, nil
	case ConventionMaxText2024:
		// MaxText calculate_tflops_training_per_device (2024): the learnable
		// weight FLOPs are 3 passes x 2 FLOPs per multiply of the layers'
		// projections and MLP plus the logits; attention 3 x 4*s*q per layer.
		mlp := mlpMatrices(m) * h * float64(m.FFNHidden)
		if m.MoE != nil {
			mlp = mlpMatrices(m) * h * float64(m.MoE.TopK) * float64(m.MoE.ExpertFFNHidden)
		}
		perLayer := 2*h*float64(m.QDim()) + 2*h*float64(m.KVDim()) + mlp
		return 6*(l*perLayer+h*v) + 12*l*float64(m.QDim())*s, nil
	case ConventionUnknown:
		return 0, errors.New("runs: the source does not state the FLOP convention of its TFLOP/s or MFU figure")
	}
	return 0, fmt.Errorf("runs: unknown FLOP convention %q", c)
}

// mlpMatrices is 3 for a gated MLP and 2 for a plain one.
func mlpMatrices(m model.Spec) float64 {
	if m.FFN == model.SwiGLU {
		return 3
	}
	return 2
}

// convention returns the FLOP convention of the row's MFU and TFLOP/s
// figures: the flops_convention column, else its source's, else the contract's.
func (r Run) convention() Convention {
	if r.FLOPsConvention != "" {
		return r.FLOPsConvention
	}
	if c, ok := conventionOfBasis(r.FLOPsBasis); ok {
		return c
	}
	if s, ok := r.sourceOf(); ok {
		return s.convention
	}
	return ConventionContract
}

// Measurement is a row's measured throughput in the planner's unit.
type Measurement struct {
	// TokensPerSPerChip is the whole job's tokens per second divided by its chips.
	TokensPerSPerChip float64
	// From says which published figure it comes from and how it was converted.
	From string
}

// Measured returns the row's throughput in tokens/s per chip for model m,
// chips chips and sequence length seqLen, from the first figure the row
// gives of: measured_tokens_per_s (whole job) / chips; batch*seq /
// measured_step_s / chips; measured_mfu * peak / FLOPs per token; and
// measured_tflops_per_chip / FLOPs per token, the last two with the row's
// own FLOP convention and the peak its source divides by
// (docs/published-runs.md §2). batchSeqs is the global batch in sequences.
func (r Run) Measured(m model.Spec, chips, batchSeqs, seqLen int) (Measurement, error) {
	if chips <= 0 {
		return Measurement{}, errors.New("runs: the chip count is not given")
	}
	n := float64(chips)
	switch {
	case r.MeasuredTokensPerSPerChip > 0:
		return Measurement{r.MeasuredTokensPerSPerChip, "measured_tokens_per_s_per_chip"}, nil
	case r.MeasuredTokensPerS > 0:
		return Measurement{r.MeasuredTokensPerS / n, "measured_tokens_per_s / chips"}, nil
	case r.MeasuredStepS > 0:
		if batchSeqs <= 0 || seqLen <= 0 {
			return Measurement{}, errors.New("runs: a step time needs the batch and sequence length")
		}
		return Measurement{float64(batchSeqs) * float64(seqLen) / r.MeasuredStepS / n, "batch*seq / measured_step_s / chips"}, nil
	case r.MeasuredMFU > 0 || r.MeasuredTFLOPsPerChip > 0:
		conv := r.convention()
		fpt, err := conv.FLOPsPerToken(m, seqLen)
		if err != nil {
			return Measurement{}, err
		}
		if fpt <= 0 {
			return Measurement{}, errors.New("runs: the model has no FLOPs per token")
		}
		if r.MeasuredMFU > 0 {
			peak, err := r.sourcePeak()
			if err != nil {
				return Measurement{}, err
			}
			return Measurement{r.MeasuredMFU * peak / fpt,
				fmt.Sprintf("measured_mfu * %.0f TFLOP/s / %s FLOPs per token", peak/1e12, conv)}, nil
		}
		return Measurement{r.MeasuredTFLOPsPerChip * 1e12 / fpt,
			fmt.Sprintf("measured_tflops_per_chip / %s FLOPs per token", conv)}, nil
	}
	return Measurement{}, errors.New("runs: no measured figure")
}

// sourcePeak is the per-chip peak FLOP/s the row's source divides by.
func (r Run) sourcePeak() (float64, error) {
	if r.Chip != "" {
		_, peak, err := lookupChip(r.Chip)
		return peak, err
	}
	c, err := r.ClusterOf(nil)
	if err != nil {
		return 0, err
	}
	return c.Chip.PeakBF16FLOPs, nil
}
