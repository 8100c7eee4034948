package results

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/meshplan/meshplan/model"
)

// Model is the JSON form of one model in `plan models --format json`:
// the contract's fields plus a few derived counts.
type Model struct {
	Name               string `json:"name"`
	Params             int64  `json:"params"`
	ActiveParams       int64  `json:"active_params"`
	EmbeddingParams    int64  `json:"embedding_params"`
	NonEmbeddingParams int64  `json:"non_embedding_params"`
	Layers             int    `json:"layers"`
	Hidden             int    `json:"hidden"`
	Heads              int    `json:"heads"`
	KVHeads            int    `json:"kv_heads"`
	HeadDim            int    `json:"head_dim"`
	FFNHidden          int    `json:"ffn_hidden"`
	FFN                string `json:"ffn"`
	Vocab              int    `json:"vocab"`
	SeqLen             int    `json:"seq_len"`
	TiedEmbeddings     bool   `json:"tied_embeddings"`
	Norm               string `json:"norm,omitempty"`
	Bias               bool   `json:"bias,omitempty"`
	MoE                *MoE   `json:"moe,omitempty"`
	MLA                *MLA   `json:"mla,omitempty"`
	MTPLayers          int    `json:"mtp_layers,omitempty"`
	MTPParams          int64  `json:"mtp_params,omitempty"`
	Description        string `json:"description,omitempty"`
	// Window, Chunk and Pattern are the model's layer pattern
	// (model.Spec.Pattern); Stack says it in words (model.Spec.PatternText)
	// when the layers are not all alike.
	Window  int      `json:"window,omitempty"`
	Chunk   int      `json:"chunk,omitempty"`
	Pattern []string `json:"pattern,omitempty"`
	Stack   string   `json:"stack,omitempty"`
	// SSM sizes the state-space or linear-attention mixer of a hybrid
	// pattern (model.Spec.SSM); AttnGate is Qwen3-Next's attention output
	// gate (model.Spec.AttnGate).
	SSM      *model.SSM `json:"ssm,omitempty"`
	AttnGate bool       `json:"attn_gate,omitempty"`
	// Shared describes Zamba2's shared transformer blocks (model.Spec.Shared).
	Shared *model.SharedBlocks `json:"shared,omitempty"`
}

// MLA is the JSON form of a model's multi-head latent attention.
type MLA struct {
	QLoRARank     int `json:"q_lora_rank"`
	KVLoRARank    int `json:"kv_lora_rank"`
	QKNopeHeadDim int `json:"qk_nope_head_dim"`
	QKRopeHeadDim int `json:"qk_rope_head_dim"`
	VHeadDim      int `json:"v_head_dim"`
}

// MoE is the JSON form of a model's mixture-of-experts layers.
type MoE struct {
	Experts          int     `json:"experts"`
	TopK             int     `json:"top_k"`
	ExpertFFNHidden  int     `json:"expert_ffn_hidden"`
	SharedExperts    int     `json:"shared_experts"`
	SharedFFNHidden  int     `json:"shared_ffn_hidden,omitempty"`
	FirstDenseLayers int     `json:"first_dense_layers"`
	CapacityFactor   float64 `json:"capacity_factor,omitempty"`
}

// NewModel converts a model spec to its JSON form, with parameter counts
// from [model.Spec.Counts] (embeddings included; the multi-token-prediction
// modules' own parameters apart, in mtp_params).
func NewModel(m model.Spec) Model {
	c := m.Counts()
	out := Model{
		Window:             m.Window,
		Chunk:              m.Chunk,
		Pattern:            m.Pattern,
		Stack:              stackText(m),
		SSM:                m.SSM,
		AttnGate:           m.AttnGate,
		Shared:             m.Shared,
		Name:               m.Name,
		Params:             c.Total,
		ActiveParams:       c.Active,
		EmbeddingParams:    c.Embedding,
		NonEmbeddingParams: c.NonEmbedding,
		Layers:             m.Layers,
		Hidden:             m.Hidden,
		Heads:              m.Heads,
		KVHeads:            m.KVHeads,
		HeadDim:            m.HeadDim,
		FFNHidden:          m.FFNHidden,
		FFN:                m.FFN,
		Vocab:              m.Vocab,
		SeqLen:             m.SeqLen,
		TiedEmbeddings:     m.TiedEmbeddings,
		Norm:               m.Norm,
		Bias:               m.Bias,
		MTPLayers:          m.MTPLayers,
		MTPParams:          c.MTP,
		Description:        m.Description,
	}
	if a := m.MLA; a != nil {
		out.MLA = &MLA{QLoRARank: a.QLoRARank, KVLoRARank: a.KVLoRARank, QKNopeHeadDim: a.QKNopeHeadDim,
			QKRopeHeadDim: a.QKRopeHeadDim, VHeadDim: a.VHeadDim}
	}
	if e := m.MoE; e != nil {
		out.MoE = &MoE{
			Experts:          e.Experts,
			TopK:             e.TopK,
			ExpertFFNHidden:  e.ExpertFFNHidden,
			SharedExperts:    e.SharedExperts,
			SharedFFNHidden:  e.SharedFFNHidden,
			FirstDenseLayers: e.FirstDenseLayers,
			CapacityFactor:   e.CapacityFactor,
		}
	}
	return out
}

// WriteModelsJSON writes the models as one indented JSON array.
func WriteModelsJSON(w io.Writer, ms []model.Spec) error {
	out := make([]Model, len(ms))
	for i, m := range ms {
		out[i] = NewModel(m)
	}
	return writeJSON(w, out)
}

// WriteModelsTable writes one aligned row per model: sizes in human units,
// shapes as integers and the MoE layout as experts/top-k.
func WriteModelsTable(w io.Writer, ms []model.Spec) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tPARAMS\tACTIVE\tLAYERS\tHIDDEN\tHEADS\tKV\tHEAD_DIM\tFFN_HIDDEN\tFFN\tVOCAB\tSEQ\tMOE")
	for _, m := range ms {
		c := m.Counts()
		moe := "-"
		if e := m.MoE; e != nil {
			moe = fmt.Sprintf("%d experts, top %d", e.Experts, e.TopK)
			if e.SharedExperts > 0 {
				moe += fmt.Sprintf(", %d shared", e.SharedExperts)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%s\n",
			Label(m.Name), Count(float64(c.Total)), Count(float64(c.Active)), m.Layers, m.Hidden,
			m.Heads, m.KVHeads, m.HeadDim, m.FFNHidden, m.FFN, m.Vocab, m.SeqLen, moe)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The stacks whose layers are not all alike, one line each.
	for _, m := range ms {
		if t := stackText(m); t != "" {
			if _, err := fmt.Fprintf(w, "%s: %s\n", Label(m.Name), t); err != nil {
				return err
			}
		}
	}
	return nil
}

// stackText is m's layer pattern in words when its layers are not all
// alike (a pattern, or dense layers before the experts), else "".
func stackText(m model.Spec) string {
	if len(m.Pattern) == 0 && (m.MoE == nil || m.MoE.FirstDenseLayers == 0) {
		return ""
	}
	return m.PatternText()
}

// newTable returns the tabwriter every table uses: two spaces between
// columns, left-aligned cells.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("results: writing JSON: %w", err)
	}
	return nil
}
