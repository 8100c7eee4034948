package cmd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelsContract pins the parameter counts of `plan models --format json`
// to the published figures (model cards and papers; docs/contract.md).
func TestModelsContract(t *testing.T) {
	clearEnv(t)
	type want struct {
		params, active float64 // 0 active: same as params
		tol            float64
	}
	wants := map[string]want{
		"llama3-405b":  {params: 405.8e9, tol: 0.01},                // Llama 3 model card
		"llama3-70b":   {params: 70.6e9, tol: 0.01},                 // Llama 3 model card
		"llama3-8b":    {params: 8.03e9, tol: 0.01},                 // Llama 3 model card
		"llama2-70b":   {params: 69.0e9, tol: 0.01},                 // Llama 2 paper
		"llama2-7b":    {params: 6.74e9, tol: 0.01},                 // Llama 2 paper
		"gpt3-175b":    {params: 174.6e9, tol: 0.01},                // GPT-3 paper, Table 2.1
		"mixtral-8x7b": {params: 46.7e9, active: 12.9e9, tol: 0.01}, // Mixtral paper
		"deepseek-v3":  {params: 671e9, active: 37e9, tol: 0.03},    // DeepSeek-V3 report
	}
	args := []string{"models", "--format", "json", "llama3-405b", "llama3-70b", "llama3-8b", "llama2-70b", "llama2-7b", "gpt3-175b", "mixtral-8x7b", "deepseek-v3"}
	stdout, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("plan %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var got []struct {
		Name         string          `json:"name"`
		Params       int64           `json:"params"`
		ActiveParams int64           `json:"active_params"`
		Layers       int             `json:"layers"`
		MoE          json.RawMessage `json:"moe"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, stdout)
	}
	if len(got) != len(wants) {
		t.Fatalf("got %d models, want %d", len(got), len(wants))
	}
	for i, m := range got {
		if m.Name != args[3+i] {
			t.Errorf("model %d is %q, want %q", i, m.Name, args[3+i])
		}
		w, ok := wants[m.Name]
		if !ok {
			continue
		}
		if rel := math.Abs(float64(m.Params)/w.params - 1); rel > w.tol {
			t.Errorf("%s: params = %d, want %.4g within %.0f%%", m.Name, m.Params, w.params, 100*w.tol)
		}
		active := w.active
		if active == 0 {
			active = w.params
		}
		if rel := math.Abs(float64(m.ActiveParams)/active - 1); rel > w.tol {
			t.Errorf("%s: active_params = %d, want %.4g within %.0f%%", m.Name, m.ActiveParams, active, 100*w.tol)
		}
		if (w.active != 0) != (len(m.MoE) > 0) {
			t.Errorf("%s: moe present = %v, want %v", m.Name, len(m.MoE) > 0, w.active != 0)
		}
	}
}

// TestClustersContract checks chip counts and that the axes multiply to them.
func TestClustersContract(t *testing.T) {
	clearEnv(t)
	args := []string{"clusters", "--format", "json", "v5p-256", "v5e-256", "v4-8", "h100-1024", "2xv5p-256"}
	want := []int{128, 256, 4, 1024, 256}
	stdout, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("plan %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var got []struct {
		Name          string  `json:"name"`
		Chip          string  `json:"chip"`
		Chips         int     `json:"chips"`
		PeakBF16FLOPs float64 `json:"peak_bf16_flops"`
		HBMBytes      float64 `json:"hbm_bytes"`
		Axes          []struct {
			Name       string   `json:"name"`
			Size       int      `json:"size"`
			Tier       string   `json:"tier"`
			Wraparound *bool    `json:"wraparound"`
			Bandwidth  *float64 `json:"bandwidth_bytes_per_s"`
		} `json:"axes"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, stdout)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d clusters, want %d", len(got), len(want))
	}
	tiers := map[string]bool{"ici": true, "nvlink": true, "infiniband": true, "ethernet": true, "dcn": true}
	for i, c := range got {
		if c.Chips != want[i] {
			t.Errorf("%s: chips = %d, want %d", args[3+i], c.Chips, want[i])
		}
		if c.Chip == "" || c.PeakBF16FLOPs <= 0 || c.HBMBytes <= 0 {
			t.Errorf("%s: chip %q, peak %g, hbm %g; want all set", c.Name, c.Chip, c.PeakBF16FLOPs, c.HBMBytes)
		}
		prod := 1
		for _, a := range c.Axes {
			prod *= a.Size
			if !tiers[a.Tier] || a.Wraparound == nil || a.Bandwidth == nil || *a.Bandwidth <= 0 || a.Name == "" {
				t.Errorf("%s: axis %+v lacks a contract field", c.Name, a)
			}
		}
		if prod != c.Chips {
			t.Errorf("%s: axes multiply to %d, want chips = %d", c.Name, prod, c.Chips)
		}
	}
}

// TestOutFile checks that --out writes the same bytes as stdout and leaves
// no temporary file behind.
func TestOutFile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "models.json")
	want, _, _ := run(t, "models", "--format", "json", "llama3-8b")
	stdout, stderr, code := run(t, "models", "--format", "json", "--out", path, "llama3-8b")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and nothing on stdout", code, stdout, stderr)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("--out wrote %q, want %q", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after --out, want 1", len(entries))
	}
	if _, _, code := run(t, "models", "--out", filepath.Join(dir, "no", "such", "dir", "x")); code != ExitBadInput {
		t.Errorf("--out into a missing directory: exit %d, want %d", code, ExitBadInput)
	}
}

// TestConfigSources checks the precedence flag > env > file > default and
// that an unknown key in the file is bad input.
func TestConfigSources(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(file, []byte("format: json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	isJSON := func(s string) bool { return strings.HasPrefix(s, "[") }

	out, _, code := run(t, "models", "llama3-8b", "--config", file)
	if code != 0 || !isJSON(out) {
		t.Errorf("format from --config: exit %d, output %q; want JSON", code, out)
	}
	out, _, _ = run(t, "models", "llama3-8b", "--config", file, "--format", "table")
	if isJSON(out) {
		t.Errorf("--format table did not win over the file: %q", out)
	}
	t.Setenv("PLAN_FORMAT", "table")
	out, _, _ = run(t, "models", "llama3-8b", "--config", file)
	if isJSON(out) {
		t.Errorf("PLAN_FORMAT=table did not win over the file: %q", out)
	}
	t.Setenv("PLAN_FORMAT", "json")
	out, _, _ = run(t, "models", "llama3-8b")
	if !isJSON(out) {
		t.Errorf("PLAN_FORMAT=json was ignored: %q", out)
	}
	t.Setenv("PLAN_FORMAT", "")

	if err := os.WriteFile(file, []byte("format: json\nmodle: llama3-8b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "models", "--config", file)
	if code != ExitBadInput || !strings.Contains(stderr, `"modle"`) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("unknown key in --config: exit %d, stderr %q; want %d and one line naming modle", code, stderr, ExitBadInput)
	}
	_, _, code = run(t, "models", "--config", filepath.Join(dir, "missing.yaml"))
	if code != ExitBadInput {
		t.Errorf("missing --config file: exit %d, want %d", code, ExitBadInput)
	}
}
