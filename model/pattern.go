package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Attention is the attention variant of a layer: which keys a query sees.
type Attention uint8

// Attention variants of Spec.Pattern.
const (
	// AttnFull is causal attention over every earlier token.
	AttnFull Attention = iota
	// AttnSliding is causal attention over the Spec.Window latest tokens,
	// the query's own included (Mistral 7B arXiv:2310.06825 §2; Gemma 2
	// arXiv:2408.00118 §2; gpt-oss).
	AttnSliding
	// AttnChunked is causal attention within the query's own chunk of
	// Spec.Chunk tokens (Llama 4's attention_chunk_size).
	AttnChunked
	numAttention
)

// Names of the attention variants in a Spec.Pattern entry.
const (
	FullAttention    = "full"
	SlidingAttention = "sliding"
	ChunkedAttention = "chunked"
)

// String returns the variant's name in a pattern entry.
func (a Attention) String() string {
	switch a {
	case AttnSliding:
		return SlidingAttention
	case AttnChunked:
		return ChunkedAttention
	}
	return FullAttention
}

// Mixer is a layer's sequence mixer: attention (of the layer's Attention
// variant), a state-space or linear-attention layer, or none.
type Mixer uint8

// Mixers of Spec.Pattern.
const (
	// MixAttention is softmax attention of the layer's Attention variant.
	MixAttention Mixer = iota
	// MixMamba2 is a Mamba-2 (SSD) layer (arXiv:2405.21060), sized by Spec.SSM.
	MixMamba2
	// MixGDN is a Gated DeltaNet layer (arXiv:2412.06464), sized by Spec.SSM.
	MixGDN
	// MixNone is no sequence mixer: the layer is its MLP alone
	// (Nemotron-H's "-" layers).
	MixNone
	// MixParallel is full attention and a Mamba-2 mixer side by side on
	// the same normed input, their outputs summed (Falcon-H1's hybrid
	// layers, transformers FalconH1DecoderLayer).
	MixParallel
	// MixMamba1 is a Mamba (selective scan, S6) layer (Gu & Dao 2023,
	// arXiv:2312.00752), as Jamba's, sized by Spec.SSM.
	MixMamba1
	// MixShared is a Mamba-2 layer that first invokes one of the model's
	// shared transformer blocks (Spec.Shared) and adds its projected
	// output to the mixer's input (Zamba2's hybrid layers, transformers
	// Zamba2HybridLayer).
	MixShared
)

// Names of the mixers and of the missing MLP in a Spec.Pattern entry.
const (
	Mamba2Mixer = "mamba2"
	GDNMixer    = "gdn"
	NoMixer     = "nomixer"
	NoMLP       = "nomlp"
	// ParallelMixer is attention and Mamba-2 in parallel (MixParallel).
	ParallelMixer = "full+mamba2"
	// Mamba1Mixer is a Mamba (selective-scan) layer (MixMamba1).
	Mamba1Mixer = "mamba1"
	// SharedMixer is a shared transformer block, then Mamba-2 (MixShared).
	SharedMixer = "shared+mamba2"
)

// LayerType is what one layer of the stack runs: its sequence mixer and
// attention variant, and its MLP (dense, a mixture of experts, or none).
type LayerType struct {
	// Attention is the layer's attention variant (with MixAttention).
	Attention Attention
	// MoE says the layer's MLP is the model's mixture of experts.
	MoE bool
	// Mixer is the layer's sequence mixer; the zero value is attention.
	Mixer Mixer
	// NoMLP says the layer has no MLP (Nemotron-H's "M" and "*" layers).
	NoMLP bool
	// SharedBlock is, with MixShared, the index of the shared block the
	// layer invokes: its invocation's number mod Spec.Shared.Blocks.
	SharedBlock int
}

// parseLayerEntry reads one Spec.Pattern entry: an attention variant
// ("full", "sliding", "chunked"), an MLP ("dense", "moe"), or both joined by
// "/" ("sliding/dense"). A missing attention is full; a missing MLP is the
// model's (moe when it has experts). ok is false for anything else.
func parseLayerEntry(entry string, hasMoE bool) (t LayerType, ok bool) {
	t.MoE = hasMoE
	parts := strings.Split(strings.ToLower(strings.TrimSpace(entry)), "/")
	if len(parts) > 2 {
		return t, false
	}
	seenAttn, seenMLP := false, false
	for _, p := range parts {
		switch strings.TrimSpace(p) {
		case FullAttention, "global":
			t.Attention, ok = AttnFull, !seenAttn
			seenAttn = true
		case SlidingAttention, "local":
			t.Attention, ok = AttnSliding, !seenAttn
			seenAttn = true
		case ChunkedAttention:
			t.Attention, ok = AttnChunked, !seenAttn
			seenAttn = true
		case Mamba2Mixer, "mamba":
			t.Mixer, ok = MixMamba2, !seenAttn
			seenAttn = true
		case GDNMixer, "linear_attention":
			t.Mixer, ok = MixGDN, !seenAttn
			seenAttn = true
		case NoMixer:
			t.Mixer, ok = MixNone, !seenAttn
			seenAttn = true
		case ParallelMixer:
			t.Mixer, ok = MixParallel, !seenAttn
			seenAttn = true
		case Mamba1Mixer:
			t.Mixer, ok = MixMamba1, !seenAttn
			seenAttn = true
		case SharedMixer:
			t.Mixer, ok = MixShared, !seenAttn
			seenAttn = true
		case NoMLP:
			t.MoE, t.NoMLP, ok = false, true, !seenMLP
			seenMLP = true
		case "dense":
			t.MoE, ok = false, !seenMLP
			seenMLP = true
		case "moe":
			t.MoE, ok = true, !seenMLP
			seenMLP = true
		default:
			return t, false
		}
		if !ok {
			return t, false
		}
	}
	return t, true
}

// LayerTypeAt returns the type of layer i (0-based) of the stack: Pattern's
// entry i mod len(Pattern) (every layer full attention when Pattern is
// empty), with a dense MLP on the first MoE.FirstDenseLayers layers and in a
// model without experts. An entry that does not parse reads as full
// attention (Validate reports it).
func (s Spec) LayerTypeAt(i int) LayerType {
	hasMoE := s.MoE != nil
	t := LayerType{MoE: hasMoE}
	if len(s.Pattern) > 0 {
		t, _ = parseLayerEntry(s.Pattern[i%len(s.Pattern)], hasMoE)
	}
	if !hasMoE || i < s.MoE.FirstDenseLayers || t.NoMLP {
		t.MoE = false
	}
	if t.Mixer == MixShared && s.Shared != nil && s.Shared.Blocks > 0 {
		// Round-robin over the blocks (transformers Zamba2Model.__init__
		// cycles them over the hybrid layers).
		t.SharedBlock = s.sharedInvocationsBefore(i) % s.Shared.Blocks
	}
	return t
}

// sharedInvocationsBefore is the number of shared+mamba2 layers among
// layers [0, i).
func (s Spec) sharedInvocationsBefore(i int) int {
	period := len(s.Pattern)
	perPeriod, within := 0, 0
	for j, e := range s.Pattern {
		if t, ok := parseLayerEntry(e, false); ok && t.Mixer == MixShared {
			perPeriod++
			if j < i%period {
				within++
			}
		}
	}
	return i/period*perPeriod + within
}

// Hybrid reports whether the pattern has layers other than attention
// followed by an MLP: state-space, linear-attention, mixer-only or
// MLP-only layers.
func (s Spec) Hybrid() bool {
	for _, e := range s.Pattern {
		if t, ok := parseLayerEntry(e, s.MoE != nil); ok && (t.Mixer != MixAttention || t.NoMLP) {
			return true
		}
	}
	return false
}

// hybridText describes a hybrid stack by its blocks: "52 layers: 24
// mamba2 + 24 mlp + 4 attention".
func (s Spec) hybridText() string {
	var mamba, mamba1, gdn, attn, mlp, moe, local, par, shared int
	for i := 0; i < s.Layers; i++ {
		t := s.LayerTypeAt(i)
		switch t.Mixer {
		case MixMamba2:
			mamba++
		case MixGDN:
			gdn++
		case MixParallel:
			par++
		case MixMamba1:
			mamba1++
		case MixShared:
			mamba++
			shared++
		case MixAttention:
			attn++
			if t.Attention != AttnFull {
				local++
			}
		}
		if t.MoE {
			moe++
		} else if !t.NoMLP {
			mlp++
		}
	}
	var parts []string
	for _, c := range []struct {
		n    int
		name string
	}{{par, "attention+mamba2"}, {mamba1, "mamba"}, {mamba, Mamba2Mixer}, {gdn, "gated deltanet"}, {mlp, "mlp"}, {moe, "moe"}, {attn, "attention"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	if shared > 0 && s.Shared != nil {
		// Zamba2: "54 layers: 54 mamba2 + 9 shared attention+mlp (2 blocks)".
		parts = append(parts, fmt.Sprintf("%d shared attention+mlp (%d blocks)", shared, min(s.Shared.Blocks, shared)))
	}
	text := fmt.Sprintf("%d layers: %s", s.Layers, strings.Join(parts, " + "))
	if local > 0 {
		text += fmt.Sprintf(" (%d local)", local)
	}
	if m := s.MoE; m != nil {
		text += fmt.Sprintf(", MoE %dx top-%d", m.Experts, m.TopK)
		if m.SharedExperts > 0 {
			text += fmt.Sprintf(" + %d shared", m.SharedExperts)
		}
	}
	return text
}

// LayerTypes returns the type of every layer of the stack, in order.
func (s Spec) LayerTypes() []LayerType {
	out := make([]LayerType, max(s.Layers, 0))
	for i := range out {
		out[i] = s.LayerTypeAt(i)
	}
	return out
}

// Span returns the keys a query of variant a may see, in tokens: the
// window, the chunk, or 0 for full attention (all earlier tokens).
func (s Spec) Span(a Attention) int {
	switch a {
	case AttnSliding:
		return s.Window
	case AttnChunked:
		return s.Chunk
	}
	return 0
}

// LocalWork is the share of the seq x seq score square that causal
// attention of variant a with span tokens computes, the Work of a flash
// kernel that skips the masked blocks: 1/2 for full attention or a span of
// at least seq ([FA2]); for a sliding window of w < seq tokens, the band
// w·seq - w²/2 over seq² (each query sees its w latest keys, the first w
// fewer; Longformer arXiv:2004.05150 §3.1 counts the band as O(n·w)); for
// chunks of c < seq tokens, c²/2 per whole chunk and r²/2 for the remainder
// r over seq².
func LocalWork(a Attention, span, seq float64) float64 {
	if a == AttnFull || span <= 0 || seq <= 0 || span >= seq {
		return 0.5
	}
	if a == AttnSliding {
		return (span*seq - span*span/2) / (seq * seq)
	}
	whole := float64(int64(seq / span))
	rem := seq - whole*span
	return (whole*span*span/2 + rem*rem/2) / (seq * seq)
}

// LocalKeys is the keys per query that the model-FLOP convention counts for
// a layer of variant a with span tokens: seq for full attention (the full
// square, PaLM arXiv:2204.02311 App. B), min(span, seq) for a sliding window
// or chunk (the same convention over the keys a query may see).
func LocalKeys(a Attention, span, seq float64) float64 {
	if a == AttnFull || span <= 0 {
		return seq
	}
	return min(span, seq)
}

// CPShare is the share of a context-parallel all-gather of the keys and
// values that a layer of variant a with span tokens needs when seq tokens
// are split over cp chips: 1 for full attention; for a window, the w keys
// before a shard of the (cp-1)/cp·seq others, at most all of them (ring
// attention with a window only passes the neighbour's last w keys; Brandon
// et al. arXiv:2311.09431 §3 for the striped causal case); for chunks, the
// part of a chunk that lies in earlier shards, none when each shard holds
// whole chunks.
func CPShare(a Attention, span, seq, cp float64) float64 {
	if a == AttnFull || span <= 0 || cp <= 1 || seq <= 0 {
		return 1
	}
	shard := seq / cp
	others := seq - shard
	if a == AttnSliding {
		return min(1, span/others)
	}
	if span <= shard {
		return 0
	}
	return min(1, (span-shard)/others)
}

// PatternText describes the stack for `plan models`: the layers of each
// attention variant with their span, and the mixture of experts, e.g.
// "24 layers: 12 sliding(128) + 12 full, MoE 32x top-4" or "48 layers:
// 36 chunked(8192) + 12 full, MoE 24 of 48, 128x top-1 + 1 shared".
func (s Spec) PatternText() string {
	if s.Hybrid() {
		return s.hybridText()
	}
	var n [numAttention]int
	moe := 0
	for i := 0; i < s.Layers; i++ {
		t := s.LayerTypeAt(i)
		n[t.Attention]++
		if t.MoE {
			moe++
		}
	}
	var parts []string
	for _, a := range []Attention{AttnSliding, AttnChunked, AttnFull} {
		if n[a] == 0 {
			continue
		}
		p := strconv.Itoa(n[a]) + " " + a.String()
		if span := s.Span(a); a != AttnFull {
			p += "(" + strconv.Itoa(span) + ")"
		}
		parts = append(parts, p)
	}
	text := fmt.Sprintf("%d layers", s.Layers)
	if len(parts) > 1 || n[AttnFull] != s.Layers {
		text += ": " + strings.Join(parts, " + ")
	}
	if m := s.MoE; m != nil {
		text += ", MoE "
		if moe != s.Layers {
			text += fmt.Sprintf("%d of %d, ", moe, s.Layers)
		}
		text += fmt.Sprintf("%dx top-%d", m.Experts, m.TopK)
		if m.SharedExperts > 0 {
			text += fmt.Sprintf(" + %d shared", m.SharedExperts)
		}
	}
	return text
}

// compactPattern returns the shortest prefix of per-layer entries that
// repeats to give them all (the period of the sequence).
func compactPattern(entries []string) []string {
	for p := 1; p < len(entries); p++ {
		ok := true
		for i := p; i < len(entries) && ok; i++ {
			ok = entries[i] == entries[i%p]
		}
		if ok {
			return entries[:p]
		}
	}
	return entries
}

// patternProblems lists the rules the pattern, window and chunk of s
// (normalised) break.
func (s Spec) patternProblems(add func(format string, args ...any)) {
	if s.Window < 0 || s.Window > MaxSeqLen {
		add("window is %d; it must be between 1 and %d tokens (leave it out without sliding-window layers)", s.Window, MaxSeqLen)
	}
	if s.Chunk < 0 || s.Chunk > MaxSeqLen {
		add("chunk is %d; it must be between 1 and %d tokens (leave it out without chunked-attention layers)", s.Chunk, MaxSeqLen)
	}
	if len(s.Pattern) > max(s.Layers, 1) {
		add("pattern has %d entries, more than the %d layers; give one period of the repeating pattern or one entry per layer", len(s.Pattern), s.Layers)
		return
	}
	hasMoE := s.MoE != nil
	sliding, chunked, moe, ssm, shared := false, false, false, false, false
	for i, e := range s.Pattern {
		t, ok := parseLayerEntry(e, hasMoE)
		if !ok {
			add("pattern[%d] is %q; an entry is a mixer (full, sliding, chunked, mamba2, gdn, mamba1, full+mamba2, shared+mamba2 or nomixer), an MLP (dense, moe or nomlp), or both joined by / (sliding/dense, mamba2/nomlp)", i, e)
			continue
		}
		if t.MoE && !hasMoE {
			add("pattern[%d] is %q, but the model has no moe section; describe the experts under moe or write dense", i, e)
		}
		if t.Mixer == MixAttention {
			sliding = sliding || t.Attention == AttnSliding
			chunked = chunked || t.Attention == AttnChunked
		}
		ssm = ssm || t.Mixer == MixMamba2 || t.Mixer == MixGDN || t.Mixer == MixParallel || t.Mixer == MixMamba1 || t.Mixer == MixShared
		shared = shared || t.Mixer == MixShared
		moe = moe || t.MoE
	}
	if ssm && (s.SSM == nil || s.SSM.ValueHeads <= 0 || s.SSM.ValueHeadDim <= 0 || s.SSM.KeyHeads <= 0 || s.SSM.KeyDim <= 0 || s.SSM.ConvKernel <= 0) {
		add("pattern has mamba2 or gdn layers but ssm is not complete; give ssm's value_heads, value_head_dim, key_heads, key_dim and conv_kernel")
	}
	if m := s.SSM; ssm && m != nil && m.KeyHeads > 0 && m.ValueHeads%m.KeyHeads != 0 {
		add("ssm value_heads %d is not a multiple of key_heads %d", m.ValueHeads, m.KeyHeads)
	}
	if s.SSM != nil && !ssm {
		add("ssm is set, but no layer of pattern is mamba2 or gdn, so it would be ignored")
	}
	if shared && (s.Shared == nil || s.Shared.Blocks <= 0 || s.Shared.AdapterRank < 0) {
		add("pattern has shared+mamba2 layers but shared is not complete; give shared's blocks (at least 1) and adapter_rank")
	}
	if s.Shared != nil && !shared {
		add("shared is set, but no layer of pattern is shared+mamba2, so it would be ignored")
	}
	if sliding && s.Window == 0 {
		add("pattern has sliding layers but window is not set; give window, the sliding window in tokens")
	}
	if chunked && s.Chunk == 0 {
		add("pattern has chunked layers but chunk is not set; give chunk, the attention chunk in tokens")
	}
	// A window or chunk that no layer uses would be ignored: refuse it.
	if s.Window > 0 && !sliding {
		add("window is %d, but no layer of pattern is sliding, so it would be ignored; add pattern: [sliding] for a window in every layer (or the repeating period, e.g. [sliding, full]), or remove window", s.Window)
	}
	if s.Chunk > 0 && !chunked {
		add("chunk is %d, but no layer of pattern is chunked, so it would be ignored; add pattern: [chunked] for chunks in every layer (or the repeating period, e.g. [chunked, full]), or remove chunk", s.Chunk)
	}
	if hasMoE && len(s.Pattern) > 0 && s.Layers > 0 && s.MoELayers() == 0 {
		add("pattern leaves no layer with experts, but the model has a moe section; mark some entries moe or remove the moe section")
	}
}
