package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedLayerKinds: a config of layers the planner does not model is
// refused by the name of the layer kind, never planned as something else:
// the published configs, and the same with model_type unknown or absent
// (the fields then signal the kind), and Jamba without its expert fields.
func TestRefusedLayerKinds(t *testing.T) {
	tests := []struct {
		name, file string
		edit       func(m string) string
		want       string
	}{
		{"bert", "bert-base-uncased.config.json", nil, `model_type "bert" has bidirectional encoder layers (an encoder-only model, not a causal decoder)`},
		{"nemotron_h renamed", "nemotron-h-8b.config.json", rename("nemotron_h", "nemotron_x"),
			`model_type "nemotron_x" is not one the planner knows, and its field "hybrid_override_pattern" signals state-space (Mamba) layers mixed with attention layers`},
		{"jamba renamed, experts removed", "jamba-v0.1.config.json", func(m string) string {
			m = rename("jamba", "jamba2")(m)
			return strings.NewReplacer(`"num_experts": 16,`, "", `"num_experts_per_tok": 2,`, "", `"expert_layer_offset": 1,`, "", `"expert_layer_period": 2,`, "").Replace(m)
		}, `model_type "jamba2" is not one the planner knows, and its field "attn_layer_offset" signals state-space (Mamba) layers mixed with attention layers`},
		{"bert without model_type", "bert-base-uncased.config.json", rename(`"model_type": "bert",`, ""),
			`the config has no model_type, and its field "type_vocab_size" signals bidirectional encoder layers`},
		{"mamba fields", "", func(string) string {
			return `{"model_type":"newssm","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"ssm_state_size":16}`
		}, `its field "ssm_state_size" signals state-space (Mamba) layers`},
		{"linear attention fields", "", func(string) string {
			return `{"model_type":"newlin","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"linear_num_key_heads":16}`
		}, `its field "linear_num_key_heads" signals linear-attention (gated DeltaNet, lightning) layers`},
		{"encoder-decoder flag", "", func(string) string {
			return `{"model_type":"newt5","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"is_encoder_decoder":true}`
		}, `its field "is_encoder_decoder" signals encoder and decoder layers with cross-attention`},
		{"t5", "", func(string) string { return `{"model_type":"t5"}` }, `model_type "t5" has encoder and decoder layers with cross-attention`},
		{"mamba2", "", func(string) string { return `{"model_type":"mamba2"}` }, `model_type "mamba2" has state-space (Mamba) layers, which`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := ""
			if tt.file != "" {
				b, err := os.ReadFile(filepath.Join("testdata", tt.file))
				if err != nil {
					t.Fatal(err)
				}
				data = string(b)
			}
			if tt.edit != nil {
				data = tt.edit(data)
			}
			_, err := ParseHF([]byte(data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseHF: %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("several problems, want the one: %v", err)
			}
		})
	}
}

// rename replaces old by new in a config's text.
func rename(old, new string) func(string) string {
	return func(m string) string { return strings.Replace(m, old, new, 1) }
}

// TestLoadRefusedFiles: Load names the layer kind for the files.
func TestLoadRefusedFiles(t *testing.T) {
	for file, kind := range map[string]string{
		"bert-base-uncased.config.json": "bidirectional encoder layers",
	} {
		_, err := Load(filepath.Join("testdata", file))
		if err == nil || !strings.Contains(err.Error(), kind) {
			t.Errorf("Load(%s): %v, want %q named", file, err, kind)
		}
	}
}

// TestParseHFNewMoE reads GLM-4.5-Air, OLMoE and Kimi K2, totals by hand
// (Counts().Total leaves the multi-token-prediction modules apart):
//
// GLM-4.5-Air: embeddings and output 2·151552·4096 = 1,241,513,984, final
// norm 4096; each of 46 layers attention q 4096·12288 + k, v 2·4096·1024 +
// o 12288·4096 = 109,051,904, q, k, v biases 12288 + 2·1024 = 14,336, two
// norms 8192: 109,074,432; the dense layer's MLP 3·4096·10944 =
// 134,479,872; each of 45 expert layers 129 experts 129·3·4096·1408 =
// 2,231,894,016 and the router 4096·128 = 524,288. Total 1,241,518,080 +
// 46·109,074,432 + 134,479,872 + 45·2,232,418,304 = 106,852,245,504.
//
// OLMoE-1B-7B: embeddings and output 2·50304·2048 = 206,045,184, final norm
// 2048; each of 16 layers attention 4·2048² = 16,777,216, q/k norms 2·128,
// two norms 4096, 64 experts 64·3·2048·1024 = 402,653,184, router 2048·64 =
// 131,072: 419,565,824. Total 16·419,565,824 + 206,047,232 =
// 6,919,100,416.
func TestParseHFNewMoE(t *testing.T) {
	tests := []struct {
		file  string
		total int64
	}{
		{"glm-4.5-air.config.json", 106_852_245_504},
		{"olmoe-1b-7b.config.json", 6_919_100_416},
	}
	for _, tt := range tests {
		s, warnings, err := LoadWarnings(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if len(warnings) > 0 {
			t.Errorf("%s: warnings %q, want none", tt.file, warnings)
		}
		if got := s.Counts().Total; got != tt.total {
			t.Errorf("%s: total %d, want %d", tt.file, got, tt.total)
		}
	}
	// Kimi K2 is DeepSeek-V3's shape: read as deepseek_v3 reads it.
	data, err := os.ReadFile(filepath.Join("testdata", "kimi-k2.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	kimi, err := ParseHF(data)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ParseHF([]byte(strings.Replace(string(data), `"kimi_k2"`, `"deepseek_v3"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if kimi.Counts().Total != ds.Counts().Total || kimi.Counts().Total < 1.0e12 || kimi.Counts().Total > 1.05e12 {
		t.Errorf("Kimi K2 total %d, want deepseek_v3's %d, about 1.03T", kimi.Counts().Total, ds.Counts().Total)
	}
}

// TestUnknownTypeNamesIgnoredFields: an unknown model_type with Llama-like
// fields is read, with a warning naming the model_type and every field not
// read.
func TestUnknownTypeNamesIgnoredFields(t *testing.T) {
	_, warnings, err := ParseHFWarnings([]byte(`{"model_type":"newarch","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"rope_theta":10000,"qk_layernorm":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `ignored: 2 fields that a Llama-like decoder does not have or that change no count, not read for model_type "newarch": "qk_layernorm", "rope_theta"`
	if !strings.Contains(strings.Join(warnings, "\n"), want) {
		t.Errorf("warnings %q lack %q", warnings, want)
	}
}

// TestUnknownTypeWarningsBounded: the warnings of an unknown model_type
// stay short however long its name and its fields' names are.
func TestUnknownTypeWarningsBounded(t *testing.T) {
	long := strings.Repeat("k", 100_000)
	var b strings.Builder
	b.WriteString(`{"model_type":"` + long + `","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100`)
	for i := range 1000 {
		fmt.Fprintf(&b, `,"%s%d":1`, long[:1000], i)
	}
	b.WriteString("}")
	_, warnings, err := ParseHFWarnings([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, w := range warnings {
		total += len(w)
	}
	if total > 10_000 {
		t.Errorf("%d bytes of warnings", total)
	}
}
