package model

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestYAMLRoundTrip marshals every preset with the Spec's yaml tags and
// parses it back.
func TestYAMLRoundTrip(t *testing.T) {
	for _, p := range Presets() {
		data, err := yaml.Marshal(p)
		if err != nil {
			t.Fatalf("%s: marshal: %v", p.Name, err)
		}
		got, err := ParseYAML(data)
		if err != nil {
			t.Errorf("%s: ParseYAML of its own YAML: %v\n%s", p.Name, err, data)
			continue
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("%s: round trip changed the spec:\n got %+v\nwant %+v", p.Name, got, p)
		}
	}
}

func TestParseYAMLContractExample(t *testing.T) {
	data, err := os.ReadFile("testdata/gpt-1t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Preset("gpt-1t")
	// The contract's example has the preset's shape but untied embeddings,
	// no biases and the default RMSNorm, so compare the shape only.
	if s.Name != "gpt-1t" || s.Layers != p.Layers || s.Hidden != p.Hidden || s.Heads != p.Heads ||
		s.KVHeads != 160 || s.HeadDim != 160 || s.FFNHidden != p.FFNHidden || s.FFN != GELU || s.Vocab != 51200 ||
		s.SeqLen != 2048 || s.TiedEmbeddings || s.MoE != nil || s.Norm != RMSNorm {
		t.Errorf("contract example parsed as %+v", s)
	}
}

func TestParseYAMLDefaults(t *testing.T) {
	s, err := ParseYAML([]byte("layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nffn: SwiGLU\nnorm: LayerNorm\nmoe:\n  experts: 4\n  top_k: 1\n  expert_ffn_hidden: 1e2\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{Layers: 2, Hidden: 64, Heads: 4, KVHeads: 4, HeadDim: 16, FFNHidden: 256, FFN: SwiGLU, Vocab: 100,
		SeqLen: DefaultSeqLen, Norm: LayerNorm, MoE: &MoE{Experts: 4, TopK: 1, ExpertFFNHidden: 100, SharedFFNHidden: 100, CapacityFactor: 1, Imbalance: 1}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v %+v\nwant %+v %+v", s, *s.MoE, want, *want.MoE)
	}
}

func TestParseYAMLErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"unknown key", "name: x\nlayers: 2\nhiden: 64\nheads: 4\nvocab: 100\n",
			[]string{`model: unknown key "hiden" at line 3 (did you mean "hidden"?)`}},
		{"unknown moe key", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nmoe:\n  expert: 4\n  top_k: 1\n  expert_ffn_hidden: 8\n",
			[]string{`unknown key "moe.expert" at line 6 (did you mean "moe.experts"?)`}},
		{"far unknown key", "layers: 2\nzzzzzzzzzzzz: 1\n", []string{`unknown key "zzzzzzzzzzzz" at line 2 (known keys: name, description, layers`}},
		{"capitalised key", "Layers: 2\n", []string{`unknown key "Layers" at line 1 (did you mean "layers"?)`}},
		{"not an integer", "layers: two\nhidden: 64\nheads: 4\nvocab: 100\n", []string{`key "layers" at line 1 is "two"; it must be an integer`}},
		{"fraction", "layers: 2.5\nhidden: 64\nheads: 4\nvocab: 100\n", []string{`key "layers" at line 1 is "2.5"; it must be an integer`}},
		{"not a bool", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nbias: maybe\n", []string{`key "bias" at line 5 is "maybe"; it must be true or false`}},
		{"list value", "layers: [1, 2]\nhidden: 64\nheads: 4\nvocab: 100\n", []string{`key "layers" at line 1 is a list; it must be an integer`}},
		{"moe scalar", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nmoe: 8\n", []string{`key "moe" at line 5 is a scalar "8"; it must be a mapping`}},
		{"duplicate", "layers: 2\nlayers: 3\n", []string{`line 1: key "layers" is given 2 times (lines 1, 2); give it once`}},
		{"two documents", "layers: 2\n---\nlayers: 3\n", []string{"the file holds more than one YAML document (the second begins at line 2); keep one document, without ---"}},
		{"not a mapping", "- 1\n- 2\n", []string{"is a list; it must be a mapping"}},
		{"empty", "", []string{"the YAML model file is empty"}},
		{"comment only", "# nothing\n", []string{"the YAML model file is empty"}},
		{"malformed", "layers: [\n", []string{"model: malformed YAML:"}},
		{"invalid numbers", "layers: 0\nhidden: 64\nheads: 4\nvocab: 100\nmoe:\n  experts: 2\n  top_k: 3\n  expert_ffn_hidden: 8\n",
			[]string{"model: layers is 0", "model: moe.top_k is 3; it must be between 1 and 2"}},
		{"missing required", "name: x\n", []string{"layers is 0", "hidden is 0", "heads is 0", "vocab is 0"}},
		{"zero seq_len", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 0\n",
			[]string{`key "seq_len" at line 5 is 0; it must be at least 1 (leave it out for the default, 2048)`}},
		{"zero kv_heads", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nkv_heads: 0\n",
			[]string{`key "kv_heads" at line 5 is 0; it must be at least 1 (leave it out for the default, heads)`}},
		{"zero ffn_hidden", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nffn_hidden: 0\n",
			[]string{`key "ffn_hidden" at line 5 is 0; it must be at least 1`}},
		{"fractional seq_len is one error", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 1.5\n",
			[]string{`key "seq_len" at line 5 is "1.5"; it must be an integer`}},
	}
	for _, tt := range tests {
		_, err := ParseYAML([]byte(tt.in))
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") && len(tt.want) == 1 {
			t.Errorf("%s: several errors %q, want one", tt.name, err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	llama, err := os.ReadFile("testdata/llama3-8b.config.json")
	if err != nil {
		t.Fatal(err)
	}
	noName := strings.Replace(string(llama), `"_name_or_path": "meta-llama/Meta-Llama-3-8B",`, "", 1)
	tests := []struct {
		arg, name string
	}{
		{"llama3-8b", "llama3-8b"},
		{"LLAMA70B", "llama2-70b"},
		{write("tiny.yaml", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\n"), "tiny"},
		{write("named.yml", "name: mine\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\n"), "mine"},
		{write("Meta-Llama-3-8B/config.json", noName), "Meta-Llama-3-8B"},
		{write("llama.json", string(llama)), "meta-llama/Meta-Llama-3-8B"},
		{write("model.txt", noName), "model"},                                      // detected as JSON by content
		{write("model", "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\n"), "model"}, // YAML by default
		{"testdata/gpt-1t.yaml", "gpt-1t"},
		{"testdata/moe.yaml", "small-moe"},
	}
	for _, tt := range tests {
		s, err := Load(tt.arg)
		if err != nil {
			t.Errorf("Load(%q): %v", tt.arg, err)
			continue
		}
		if s.Name != tt.name {
			t.Errorf("Load(%q) name %q, want %q", tt.arg, s.Name, tt.name)
		}
		if s.KVHeads == 0 || s.SeqLen == 0 {
			t.Errorf("Load(%q) not normalised: %+v", tt.arg, s)
		}
	}

	// testdata/moe.yaml is Mixtral 8x7B's shape written in the YAML form.
	moe, err := Load("testdata/moe.yaml")
	mixtral, _ := Preset("mixtral-8x7b")
	if err != nil || moe.Counts() != mixtral.Counts() {
		t.Errorf("testdata/moe.yaml: counts %+v (err %v), want mixtral-8x7b's %+v", moe.Counts(), err, mixtral.Counts())
	}

	bad := []struct{ arg, want string }{
		{"llama-70", `model: unknown preset "llama-70" (nearest: llama70b, llama2-70b, llama3-70b; see plan models)`},
		{filepath.Join(dir, "missing.yaml"), "model: cannot read model file"},
		{dir + "/", "is a directory"},
		{write("bad.yaml", "layers: 2\nhiden: 64\n"), `bad.yaml: unknown key "hiden" at line 2 (did you mean "hidden"?)`},
		{write("bad.json", `{"model_type": "llama", "num_hidden_layers": 2}`), `bad.json: missing required field "hidden_size"`},
	}
	for _, tt := range bad {
		_, err := Load(tt.arg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%q) error %v, want it to contain %q", tt.arg, err, tt.want)
		}
	}
}
