package model

import (
	"strings"
	"testing"
)

// TestParseHFALiBi reads the ALiBi configs: MPT-7B's and BLOOM-560m's
// published config.json fields and Falcon-RW-1B's alibi flag.
func TestParseHFALiBi(t *testing.T) {
	tests := []struct {
		name, in string
		total    int64 // parameters, checked by hand below
		kvHeads  int
		alibi    bool
		desc     string
	}{
		// mosaicml/mpt-7b: 32 layers of 4·4096² + 2·4096·16384 = 201,326,592
		// (6,442,450,944), the tied 50432x4096 embedding 206,569,472 and 65
		// LayerNorms of 2·4096 (weight and bias; MPT's have no bias, so
		// Hugging Face's 6,649,286,656 is 266,240 fewer): 6,649,552,896.
		{"mpt-7b", `{"model_type":"mpt","d_model":4096,"n_heads":32,"n_layers":32,"expansion_ratio":4,"max_seq_len":2048,"vocab_size":50432,"no_bias":true,"attn_config":{"alibi":true,"attn_impl":"torch"}}`,
			6649552896, 32, true, "ALiBi"},
		// An MPT without ALiBi (learned positions, not counted) and with
		// grouped-query attention: kv_n_heads 8.
		{"mpt without alibi", `{"model_type":"mpt","d_model":64,"n_heads":4,"n_layers":2,"attn_config":{"alibi":false,"kv_n_heads":2}}`,
			0, 2, false, "tied;"},
		// bigscience/bloom-560m: Hugging Face's 559,214,592 less the
		// embedding LayerNorm (2·1024) the planner does not count.
		{"bloom-560m", `{"model_type":"bloom","hidden_size":1024,"n_layer":24,"n_head":16,"vocab_size":250880}`,
			559212544, 16, true, "ALiBi"},
		{"falcon-rw-1b", `{"model_type":"falcon","hidden_size":2048,"num_hidden_layers":24,"num_attention_heads":32,"alibi":true,"multi_query":false,"bias":true,"vocab_size":50304}`,
			0, 32, true, "32 key/value heads, ALiBi"},
	}
	for _, tt := range tests {
		s, err := ParseHF([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if s.ALiBi != tt.alibi || s.KVHeads != tt.kvHeads || !strings.Contains(s.Description, tt.desc) {
			t.Errorf("%s: alibi %v, kv heads %d, description %q; want %v, %d and %q", tt.name, s.ALiBi, s.KVHeads, s.Description, tt.alibi, tt.kvHeads, tt.desc)
		}
		if tt.total > 0 && s.Counts().Total != tt.total {
			t.Errorf("%s: %d parameters, want %d", tt.name, s.Counts().Total, tt.total)
		}
	}
}

// TestALiBiPresets checks that the ALiBi presets say so and that ALiBi
// cannot join a rotary setting.
func TestALiBiPresets(t *testing.T) {
	for _, name := range []string{"mpt-7b", "mpt-13b", "mpt-30b", "mpt-70b", "bloom-176b"} {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if !s.ALiBi {
			t.Errorf("%s: ALiBi false, want true", name)
		}
	}
	s, err := Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	if s.ALiBi {
		t.Error("llama3-8b: ALiBi true, want false")
	}
	s.ALiBi, s.YaRN = true, true
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "alibi is true with yarn") {
		t.Errorf("alibi with yarn: %v, want an error naming both", err)
	}
	y, err := ParseYAML([]byte("name: t\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\nffn: gelu\nalibi: true\n"))
	if err != nil || !y.ALiBi {
		t.Errorf("YAML alibi: %v, ALiBi %v; want true", err, y.ALiBi)
	}
}

// TestALiBiRotaryPass checks that an ALiBi model's rotary pass moves no
// bytes while a rotary model's does.
func TestALiBiRotaryPass(t *testing.T) {
	for _, tt := range []struct {
		preset string
		moves  bool
	}{{"mpt-7b", false}, {"llama2-7b", true}} {
		s, err := Preset(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewProgram(s, ProgramOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, b := range p.Blocks {
			for _, o := range b.Fwd {
				if o.Name != "rope" {
					continue
				}
				found = true
				if got := o.Bytes > 0 || o.BwdBytes > 0; got != tt.moves {
					t.Errorf("%s: rope moves bytes %v (%g, %g), want %v", tt.preset, got, o.Bytes, o.BwdBytes, tt.moves)
				}
			}
		}
		if !found {
			t.Errorf("%s: no rope op", tt.preset)
		}
	}
}
