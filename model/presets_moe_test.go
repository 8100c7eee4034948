package model

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestConfigPresets checks that each mixture-of-experts preset is the model
// its published config.json reads as (ParseHF), name and description
// aside, so `--model qwen3-30b-a3b` plans what `--model config.json` does;
// the configs' counts are held to the published ones by
// TestPublishedParamCounts and TestHFArchitectures.
func TestConfigPresets(t *testing.T) {
	for _, tc := range []struct{ preset, config string }{
		{"qwen3-30b-a3b", "qwen3-30b-a3b.config.json"},
		{"qwen3-235b-a22b", "qwen3-235b-a22b.config.json"},
		{"gpt-oss-20b", "gpt-oss-20b.config.json"},
		{"gpt-oss-120b", "gpt-oss-120b.config.json"},
		{"llama4-scout", "llama-4-scout.config.json"},
		{"llama4-maverick", "llama-4-maverick.config.json"},
	} {
		p, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join("testdata", tc.config))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseHF(data)
		if err != nil {
			t.Fatalf("%s: %v", tc.config, err)
		}
		p.Name, p.Description, c.Name, c.Description = "", "", "", ""
		if !reflect.DeepEqual(p, c) {
			t.Errorf("%s: preset %+v (moe %+v), its config reads %+v (moe %+v)", tc.preset, p, p.MoE, c, c.MoE)
		}
	}
}

// TestPresetAliases checks the names the public runs use for the presets.
func TestPresetAliases(t *testing.T) {
	for arg, want := range map[string]string{
		"Llama-3.1-8B": "llama3-8b", "llama3.1-405b": "llama3-405b", "Llama-3.3-70B": "llama3-70b",
		"Qwen3-30B-A3B": "qwen3-30b-a3b", "qwen3-235b": "qwen3-235b-a22b", "GPT-OSS-120B": "gpt-oss-120b",
		"Llama-4-Scout": "llama4-scout",
	} {
		p, err := Preset(arg)
		if err != nil || p.Name != want {
			t.Errorf("Preset(%q) = %q, %v; want %q", arg, p.Name, err, want)
		}
	}
}
