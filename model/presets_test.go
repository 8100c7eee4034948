package model

import (
	"sort"
	"strings"
	"testing"
)

func TestPresetsValid(t *testing.T) {
	names := Names()
	if !sort.StringsAreSorted(names) {
		t.Errorf("Names() not sorted: %v", names)
	}
	ps := Presets()
	if len(ps) != len(names) {
		t.Fatalf("Presets() has %d specs, Names() %d", len(ps), len(names))
	}
	seen := map[string]string{} // punctuation-free name -> name
	for i, p := range ps {
		if p.Name != names[i] {
			t.Errorf("Presets()[%d] is %q, Names()[%d] is %q", i, p.Name, i, names[i])
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.SeqLen == 0 || p.Description == "" || p.KVHeads == 0 || p.HeadDim == 0 {
			t.Errorf("%s: seq_len %d, kv_heads %d, head_dim %d, description %q: want all set", p.Name, p.SeqLen, p.KVHeads, p.HeadDim, p.Description)
		}
		if p.Name != strings.ToLower(p.Name) {
			t.Errorf("%s: preset names are lowercase", p.Name)
		}
		if other, dup := seen[alnum(p.Name)]; dup {
			t.Errorf("%s and %s are the same without punctuation", p.Name, other)
		}
		seen[alnum(p.Name)] = p.Name
	}
	for alias, target := range aliases() {
		if _, err := Preset(target); err != nil || contains(names, alias) {
			t.Errorf("alias %q -> %q: target missing or alias is also a canonical name", alias, target)
		}
	}
	want := []string{"gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b",
		"mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "gpt-1.7b", "gpt-3.6b", "gpt-7.5b", "gpt-18b", "gpt-39b",
		"gpt-76b", "gpt-145b", "gpt-310b", "gpt-530b", "gpt-1t", "gpt-175b", "gpt-22b", "mpt-7b", "mpt-13b",
		"mpt-30b", "mpt-70b", "gpt-neox-20b", "llama-65b", "bloom-176b", "opt-175b", "maxtext-16b", "maxtext-32b",
		"maxtext-64b", "maxtext-128b"}
	for _, n := range want {
		if !contains(names, n) {
			t.Errorf("preset %q missing", n)
		}
	}
}

func TestPresetLookup(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"llama3-8b", "llama3-8b"},
		{"LLAMA3-8B", "llama3-8b"},
		{" llama3-8b ", "llama3-8b"},
		{"Llama-3-8B", "llama3-8b"},
		{"llama_3_8b", "llama3-8b"},
		{"llama70b", "llama2-70b"},
		{"Llama70B", "llama2-70b"},
		{"mt-nlg-530b", "gpt-530b"},
		{"MTNLG530B", "gpt-530b"},
		{"gpt-3-175b", "gpt3-175b"},
		{"gpt-1.7B", "gpt-1.7b"},
		{"deepseek-v3", "deepseek-v3"},
		{"DeepSeek-V3", "deepseek-v3"},
	}
	for _, tt := range tests {
		s, err := Preset(tt.arg)
		if err != nil {
			t.Errorf("Preset(%q): %v", tt.arg, err)
			continue
		}
		if s.Name != tt.want {
			t.Errorf("Preset(%q) = %q, want %q", tt.arg, s.Name, tt.want)
		}
	}
}

func TestPresetUnknown(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"llama-70", `model: unknown preset "llama-70" (nearest: llama70b, llama2-70b, llama3-70b; see plan models)`},
		{"mixtral", `model: unknown preset "mixtral" (nearest: mixtral-8x7b, mixtral-8x22b,`},
		{"", `model: unknown preset "" (nearest:`},
		{"-", `model: unknown preset "-" (nearest:`},
	}
	for _, tt := range tests {
		_, err := Preset(tt.arg)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Preset(%q) error %v, want prefix %q", tt.arg, err, tt.want)
		}
	}
}

// TestPresetsFresh checks that a caller cannot change a preset for others.
func TestPresetsFresh(t *testing.T) {
	a, _ := Preset("mixtral-8x7b")
	a.MoE.Experts = 1
	a.Layers = 1
	b, _ := Preset("mixtral-8x7b")
	if b.MoE.Experts != 8 || b.Layers != 32 {
		t.Errorf("changing one Preset result changed the next: %+v %+v", b, *b.MoE)
	}
}

func TestNearest(t *testing.T) {
	got := nearest("hiden", yamlKeys(), 1)
	if got[0] != "hidden" {
		t.Errorf("nearest(hiden) = %v", got)
	}
	if n := lcsLen("llama70", "llama270b"); n != 7 {
		t.Errorf("lcsLen = %d, want 7", n)
	}
}
