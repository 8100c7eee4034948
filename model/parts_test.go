package model

import (
	"math"
	"strings"
	"testing"
)

// partsSpec is a tiny decoder with every small part on: h = 8, two heads
// of 4, one key/value head, SwiGLU of width 32, vocabulary 10, two layers,
// untied, RMSNorm.
func partsSpec() Spec {
	s := Spec{Layers: 2, Hidden: 8, Heads: 2, KVHeads: 1, FFNHidden: 32, FFN: SwiGLU, Vocab: 10,
		QKVBias: true, OutBias: true, QKNorm: true, PostNorms: true, LogitSoftcap: 30}
	s.Normalize()
	return s
}

// TestSmallPartsCounts pins the small parts' parameters by hand (per
// layer): attention 2·8·8 + 2·8·4 = 192, MLP 3·8·32 = 768, norms 2·8 = 16;
// q, k, v biases 8 + 2·4 = 16 (transformers' Qwen2Attention), the output's
// 8, per-head q/k norms 2·4 = 8 (Qwen3Attention), sandwich norms 2·8 = 16
// (Gemma2DecoderLayer): 1,024 a layer, 2,048 for two; embedding and output
// 80 each; final norm 8: 2,216. The program's weights agree.
func TestSmallPartsCounts(t *testing.T) {
	s := partsSpec()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := s.Counts().Total; got != 2216 {
		t.Errorf("Counts().Total = %d, want 2216", got)
	}
	total := programWeights(MustProgram(s, ProgramOptions{}))
	if math.Abs(total-2216) > 1e-9 {
		t.Errorf("program weights %v, want 2216", total)
	}
}

// TestSmallPartsPasses: each small part is a memory-bound pass of the
// program: the q/k norm over q and k (12 of qkv's 16 columns), a norm on
// each block's output, and the logits' soft cap at the framework's bytes:
// none of its own in a fused loss, 12 forward and 14 backward per bf16
// logit (6 and 7 elements) as three eager kernels.
func TestSmallPartsPasses(t *testing.T) {
	eager := Kernels{}
	eager.Passes[PassSoftcap] = PassCost{FwdBytes: 12, BwdBytes: 14, SavedBytes: 2}
	for _, tt := range []struct {
		name        string
		k           Kernels
		fwd, bwd    float64
		keptSoftcap bool
	}{
		{"fused", Kernels{}, 0, 0, false},
		{"eager", eager, 6, 7, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := MustProgram(partsSpec(), ProgramOptions{Kernels: tt.k})
			ops := map[string]Op{}
			for _, blk := range p.Blocks {
				for _, o := range blk.Fwd {
					ops[o.Name] = o
				}
			}
			for _, name := range []string{"qk_norm", "post_norm1", "post_norm2", "softcap"} {
				if _, ok := ops[name]; !ok {
					t.Errorf("no %s op", name)
				}
			}
			if o := ops["qk_norm"]; o.Group != GroupNorm || math.Abs(o.Bytes-4*12.0/16/2) > 1e-12 {
				t.Errorf("qk_norm: group %v, %v elements per element of qkv; want a norm pass of 4 bytes over 12 of 16 columns", o.Group, o.Bytes)
			}
			sc := ops["softcap"]
			if sc.Bytes != tt.fwd || sc.BwdBytes != tt.bwd {
				t.Errorf("softcap moves %v and %v elements per logit, want %v and %v", sc.Bytes, sc.BwdBytes, tt.fwd, tt.bwd)
			}
			if kept := len(sc.Saves) > 0; kept != tt.keptSoftcap {
				t.Errorf("softcap keeps %v, want a tensor kept: %v", sc.Saves, tt.keptSoftcap)
			}
		})
	}
	// Without the parts the program has none of these ops.
	s := partsSpec()
	s.QKNorm, s.PostNorms, s.LogitSoftcap = false, false, 0
	for _, blk := range MustProgram(s, ProgramOptions{}).Blocks {
		for _, o := range blk.Fwd {
			if strings.Contains(o.Name, "post_norm") || o.Name == "qk_norm" || o.Name == "softcap" {
				t.Errorf("op %s without its part", o.Name)
			}
		}
	}
}

func TestSmallPartsYAML(t *testing.T) {
	s, err := ParseYAML([]byte("layers: 2\nhidden: 8\nheads: 2\nkv_heads: 1\nffn_hidden: 32\nffn: swiglu\nvocab: 10\n" +
		"qkv_bias: true\nout_bias: true\nqk_norm: true\npost_norms: true\nlogit_softcap: 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.QKVBias || !s.OutBias || !s.QKNorm || !s.PostNorms || s.LogitSoftcap != 30 {
		t.Errorf("parsed %+v", s)
	}
	for _, tt := range []struct{ in, want string }{
		{"logit_softcap: -1\n", "logit_softcap is -1; it must be 0 (no cap) or a positive cap"},
		{"qk_norm: sometimes\n", `key "qk_norm" at line 5 is "sometimes"; it must be true or false`},
	} {
		_, err := ParseYAML([]byte("layers: 2\nhidden: 8\nheads: 2\nvocab: 10\n" + tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestGemma2Softcap: Gemma2Config's final_logit_softcapping defaults to 30
// and an explicit null turns the cap off; Gemma 2 and 3 norm each block's
// output, Gemma 3 each head of q and k.
func TestGemma2Softcap(t *testing.T) {
	base := `"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32`
	for _, tt := range []struct {
		name, json   string
		cap          float64
		post, qkNorm bool
	}{
		{"gemma2 default", `{"model_type": "gemma2", ` + base + `}`, 30, true, false},
		{"gemma2 null", `{"model_type": "gemma2", "final_logit_softcapping": null, ` + base + `}`, 0, true, false},
		{"gemma2 50", `{"model_type": "gemma2", "final_logit_softcapping": 50.0, ` + base + `}`, 50, true, false},
		{"gemma3", `{"model_type": "gemma3_text", ` + base + `}`, 0, true, true},
		{"gemma", `{"model_type": "gemma", ` + base + `, "num_key_value_heads": 4}`, 0, false, false},
	} {
		s, err := ParseHF([]byte(tt.json))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if s.LogitSoftcap != tt.cap || s.PostNorms != tt.post || s.QKNorm != tt.qkNorm {
			t.Errorf("%s: softcap %v, post norms %v, q/k norms %v; want %v, %v, %v", tt.name, s.LogitSoftcap, s.PostNorms, s.QKNorm, tt.cap, tt.post, tt.qkNorm)
		}
	}
}
