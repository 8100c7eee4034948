package profiles

import (
	"fmt"
	"math"
)

// Validate checks that c describes a usable cluster: a name; a chip with
// positive peak FLOP/s, HBM and HBM bandwidth; at least one axis, each with
// a unique name, a positive size, a known tier, positive bandwidth,
// non-negative latency and an efficiency in (0, 1]; at most MaxChips chips;
// and efficiency coefficients with MatmulFraction and HBMFraction in (0, 1],
// OverlapFraction in [0, 1] (0 means nothing overlaps), MatmulHalfFLOPs
// >= 0, the attention fractions in (0, 1] and its score times and half
// sequences >= 0. Every number must be finite.
func (c Cluster) Validate() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("profiles: %v", err)
	}
	return nil
}

// check is Validate without the package prefix.
func (c Cluster) check() error {
	if c.Name == "" {
		return fmt.Errorf("cluster has no name")
	}
	if err := c.Chip.validate(); err != nil {
		return fmt.Errorf("cluster %q: %v", c.Name, err)
	}
	if len(c.Axes) == 0 {
		return fmt.Errorf("cluster %q has no axes; list at least one, e.g. {name: gpu, size: 8, tier: nvlink}", c.Name)
	}
	seen := make(map[string]bool, len(c.Axes))
	chips := 1
	for i, a := range c.Axes {
		if err := a.validate(); err != nil {
			return fmt.Errorf("cluster %q: axes[%d]: %v", c.Name, i, err)
		}
		if seen[a.Name] {
			return fmt.Errorf("cluster %q: axis name %q is used twice; axis names must be unique", c.Name, a.Name)
		}
		seen[a.Name] = true
		if a.Size > MaxChips/chips {
			return fmt.Errorf("cluster %q has more than %d chips, which is not a real cluster", c.Name, MaxChips)
		}
		chips *= a.Size
	}
	if err := c.Efficiency.validate(); err != nil {
		return fmt.Errorf("cluster %q: efficiency: %v", c.Name, err)
	}
	return nil
}

func (ch Chip) validate() error {
	switch {
	case ch.Name == "":
		return fmt.Errorf("chip has no name")
	case ch.Family == "":
		return fmt.Errorf("chip %q has no family", ch.Name)
	case !positive(ch.PeakBF16FLOPs):
		return fmt.Errorf("chip %q: peak_bf16_flops must be positive, not %g", ch.Name, ch.PeakBF16FLOPs)
	case !nonNegative(ch.PeakFP8FLOPs):
		return fmt.Errorf("chip %q: peak_fp8_flops must be zero or positive, not %g", ch.Name, ch.PeakFP8FLOPs)
	case !nonNegative(ch.PeakFP4FLOPs):
		return fmt.Errorf("chip %q: peak_fp4_flops must be zero or positive, not %g", ch.Name, ch.PeakFP4FLOPs)
	case !nonNegative(ch.PeakInt8OPs):
		return fmt.Errorf("chip %q: peak_int8_ops must be zero or positive, not %g", ch.Name, ch.PeakInt8OPs)
	case !positive(ch.HBMBytes):
		return fmt.Errorf("chip %q: hbm_bytes must be positive, not %g", ch.Name, ch.HBMBytes)
	case !positive(ch.HBMBandwidthBytesPerS):
		return fmt.Errorf("chip %q: hbm_bandwidth_bytes_per_s must be positive, not %g", ch.Name, ch.HBMBandwidthBytesPerS)
	case ch.TensorCoresPerChip < 0 || ch.TensorCoresPerChip > 64:
		return fmt.Errorf("chip %q: tensor_cores_per_chip must be between 0 (read as 1) and 64, not %d", ch.Name, ch.TensorCoresPerChip)
	case ch.MXUDim < 0 || ch.MXUDim > 4096:
		return fmt.Errorf("chip %q: mxu_dim must be between 0 (no padding, a GPU) and 4096, not %d", ch.Name, ch.MXUDim)
	case !nonNegative(ch.PowerLimitedRate) || ch.PowerLimitedRate > 2:
		return fmt.Errorf("chip %q: power_limited_rate must be between 0 (read as 1) and 2, not %g", ch.Name, ch.PowerLimitedRate)
	case !nonNegative(ch.ScoreRate) || ch.ScoreRate > 4:
		return fmt.Errorf("chip %q: score_rate must be between 0 (read as 1) and 4, not %g", ch.Name, ch.ScoreRate)
	}
	return nil
}

func (a Axis) validate() error {
	switch {
	case a.Name == "":
		return fmt.Errorf("axis has no name")
	case !validAxisName(a.Name):
		return fmt.Errorf("axis name %q must be 1 to 32 letters, digits, '_' or '-'", a.Name)
	case a.Size < 1:
		return fmt.Errorf("axis %q has size %d; sizes must be positive", a.Name, a.Size)
	case !a.Tier.Valid():
		return fmt.Errorf("axis %q has unknown tier %q; use %s", a.Name, a.Tier, tierList())
	case !positive(a.BandwidthBytesPerS):
		return fmt.Errorf("axis %q: bandwidth_bytes_per_s must be positive, not %g", a.Name, a.BandwidthBytesPerS)
	case !nonNegative(a.LatencySeconds):
		return fmt.Errorf("axis %q: latency_s must be zero or positive, not %g", a.Name, a.LatencySeconds)
	case !fraction(a.Efficiency):
		return fmt.Errorf("axis %q: efficiency must be in (0, 1], not %g", a.Name, a.Efficiency)
	}
	return nil
}

func (e Efficiency) validate() error {
	switch {
	case !fraction(e.MatmulFraction):
		return fmt.Errorf("matmul_fraction must be in (0, 1], not %g", e.MatmulFraction)
	case !nonNegative(e.MatmulHalfFLOPs):
		return fmt.Errorf("matmul_half_flops must be zero or positive, not %g", e.MatmulHalfFLOPs)
	case !nonNegative(e.MatmulFP8Fraction) || e.MatmulFP8Fraction > 1:
		return fmt.Errorf("matmul_fp8_fraction must be in (0, 1] (or 0 for the family's default), not %g", e.MatmulFP8Fraction)
	case !nonNegative(e.MatmulFP8HalfFLOPs):
		return fmt.Errorf("matmul_fp8_half_flops must be zero or positive, not %g", e.MatmulFP8HalfFLOPs)
	case !nonNegative(e.MatmulFP4Fraction) || e.MatmulFP4Fraction > 1:
		return fmt.Errorf("matmul_fp4_fraction must be in (0, 1] (or 0 for the family's default), not %g", e.MatmulFP4Fraction)
	case !nonNegative(e.MatmulFP4HalfFLOPs):
		return fmt.Errorf("matmul_fp4_half_flops must be zero or positive, not %g", e.MatmulFP4HalfFLOPs)
	case !fraction(e.HBMFraction):
		return fmt.Errorf("hbm_fraction must be in (0, 1], not %g", e.HBMFraction)
	case !nonNegative(e.OverlapFraction) || e.OverlapFraction > 1:
		return fmt.Errorf("overlap_fraction must be in [0, 1], not %g", e.OverlapFraction)
	case !fraction(e.AttentionFwdFraction):
		return fmt.Errorf("attention_fwd_fraction must be in (0, 1], not %g", e.AttentionFwdFraction)
	case !fraction(e.AttentionBwdFraction):
		return fmt.Errorf("attention_bwd_fraction must be in (0, 1], not %g", e.AttentionBwdFraction)
	case !nonNegative(e.AttentionFwdScoreSeconds) || e.AttentionFwdScoreSeconds > 1e-9:
		return fmt.Errorf("attention_fwd_score_s must be between 0 and 1e-9 seconds, not %g", e.AttentionFwdScoreSeconds)
	case !nonNegative(e.AttentionBwdScoreSeconds) || e.AttentionBwdScoreSeconds > 1e-9:
		return fmt.Errorf("attention_bwd_score_s must be between 0 and 1e-9 seconds, not %g", e.AttentionBwdScoreSeconds)
	case !nonNegative(e.AttentionFwdHalfSeq) || e.AttentionFwdHalfSeq > 1e7:
		return fmt.Errorf("attention_fwd_half_seq must be between 0 and 1e7 tokens, not %g", e.AttentionFwdHalfSeq)
	case !nonNegative(e.SustainedFraction) || e.SustainedFraction > 1:
		return fmt.Errorf("sustained_fraction must be in (0, 1] (or 0 for 1), not %g", e.SustainedFraction)
	case !nonNegative(e.FlashAttention2Fraction) || e.FlashAttention2Fraction > 1:
		return fmt.Errorf("flash_attention2_fraction must be in (0, 1] (or 0 for 1), not %g", e.FlashAttention2Fraction)
	case !nonNegative(e.AttentionBwdHalfSeq) || e.AttentionBwdHalfSeq > 1e7:
		return fmt.Errorf("attention_bwd_half_seq must be between 0 and 1e7 tokens, not %g", e.AttentionBwdHalfSeq)
	}
	return nil
}

// validAxisName keeps axis names usable in strategy strings such as "tp:z;fsdp:x.y".
func validAxisName(name string) bool {
	if len(name) > 32 {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

func finite(x float64) bool      { return !math.IsNaN(x) && !math.IsInf(x, 0) }
func positive(x float64) bool    { return finite(x) && x > 0 }
func nonNegative(x float64) bool { return finite(x) && x >= 0 }
func fraction(x float64) bool    { return finite(x) && x > 0 && x <= 1 }
