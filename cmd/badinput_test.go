package cmd

import (
	"os"
	"strings"
	"testing"
)

// badInputFiles are the files the bad-input cases read, written into the
// test's temporary directory.
var badInputFiles = map[string]string{
	"header-only.csv":      "id,model,cluster,batch,seq,strategy,measured_step_s\n",
	"window-only.yaml":     "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nwindow: 8\n",
	"two-docs.yaml":        "layers: 2\nhidden: 64\nheads: 4\n---\nvocab: 100\n",
	"dup/config.json":      `{"model_type":"llama","hidden_size":64,"hidden_size":128,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
	"batch-fraction.yaml":  "model: llama3-8b\ncluster: h100-8\nbatch: 8.7\n",
	"wrong-types.yaml":     "model: llama3-8b\ncluster: h100-8\nquiet: 1\ntop: [1]\nprice: yes\n",
	"suffixes.yaml":        "model: llama3-8b\ncluster: h100-8\nbatch_tokens: 4Mi\nseq: 8Ki\ntop: 1\nquiet: true\n",
	"sweep-fraction.yaml":  "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [16.5]\n",
	"sweep-cells.yaml":     "cells: [{model: llama3-8b, cluster: h100-8, batch: 8.5, bogus: 1}]\nsearch: {seed: 1.5}\n",
	"sweep-ok.yaml":        "models: [llama3-8b]\nclusters: [h100-8]\nbatches: [16]\n",
	"objective-cost.yaml":  "model: llama3-8b\ncluster: h100-8\nobjective: cost\n",
	"seq-zero.yaml":        "name: tiny\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 0\n",
	"kv-zero/config.json":  `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":0,"intermediate_size":128,"vocab_size":100}`,
	"half-moe/config.json": `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"n_routed_experts":8,"num_experts_per_tok":2}`,
}

// badInputCases are input that was once silently changed or answered in
// the parser's words: each must exit 2 with the one sentence given, naming
// the field, what was given and what is allowed.
var badInputCases = []struct {
	name string
	env  map[string]string
	args []string
	want string
}{
	{"config batch fraction", nil, []string{"--config", "batch-fraction.yaml", "--quiet"},
		"plan: --config batch-fraction.yaml: batch: 8.7 is not a whole number\n"},
	{"env batch fraction", map[string]string{"PLAN_BATCH": "8.7"}, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--quiet"},
		"plan: PLAN_BATCH: \"8.7\" is not a whole number\n"},
	{"config wrong types", nil, []string{"--config", "wrong-types.yaml"},
		"plan: --config wrong-types.yaml: price: \"yes\" is not a number (e.g. 2.5 or 1e3)\n" +
			"  --config wrong-types.yaml: quiet: 1 is not true or false\n" +
			"  --config wrong-types.yaml: top: a list is not a whole number\n"},
	{"flag batch fraction", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--batch", "16.5"},
		"plan: --batch: \"16.5\" is not a whole number\n"},
	{"flag batch not a number", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--batch", "4Q"},
		"plan: --batch: \"4Q\" is not a whole number; write digits with an optional suffix K, M, B, T (10^3 to 10^12) or Ki, Mi, Gi, Ti (2^10 to 2^40), e.g. 512, 4M, 4Mi or 2e12\n"},
	{"flag batch huge", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--batch", "1e18"},
		"plan: --batch 1000000000000000000 is more than 10000000 sequences\n"},
	{"flag seed fraction", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--seed", "1.5"},
		"plan: --seed: \"1.5\" is not a whole number\n"},
	{"flag bool", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--quiet=maybe"},
		"plan: --quiet: \"maybe\" is not true or false\n"},
	{"flag price not a number", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--tokens", "1T", "--price", "abc"},
		"plan: --price: \"abc\" is not a number (e.g. 2.5 or 1e3)\n"},
	{"flag price absurd", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--tokens", "1T", "--price", "1e308"},
		"plan: --price 1e+308 is more than 1000000 per chip-hour: give the price of one chip for one hour\n"},
	{"flag price 0", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--tokens", "1T", "--price", "0"},
		"plan: --price must be a positive price per chip-hour, got 0 (leave it out for no cost)\n"},
	{"flag price tiny", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--tokens", "1T", "--price", "1e-300"},
		"plan: --price 1e-300 is less than 1e-06 per chip-hour: give the price of one chip for one hour\n"},
	{"model twice", nil, []string{"--model", "llama3-8b", "--model", "llama3-70b", "--cluster", "h100-8"},
		"plan: --model: given twice (\"llama3-8b\", then \"llama3-70b\"); give it once\n"},
	{"fix twice", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--fix", "tp=2", "--fix", "tp=4"},
		"plan: --fix: given twice (\"tp=2\", then \"tp=4\"); give it once\n"},
	{"cluster twice", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--cluster", "h100-16"},
		"plan: --cluster: given twice (\"h100-8\", then \"h100-16\"); give it once\n"},
	{"framework twice in a list", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--framework", "megatron,Megatron"},
		"plan: --framework names megatron twice; name each framework once\n"},
	{"searched with steps", nil, []string{"validate", "--steps", "steps.csv", "--searched"},
		"plan: --searched does not apply to --steps: single-chip steps have no degrees to search; use it with --runs\n"},
	{"runs header only", nil, []string{"validate", "--runs", "header-only.csv"},
		"plan: --runs header-only.csv: no runs: the file has a header but no rows; add one row per measured run\n"},
	{"model window without pattern", nil, []string{"models", "window-only.yaml"},
		"plan: model: window-only.yaml: window is 8, but no layer of pattern is sliding, so it would be ignored; add pattern: [sliding] for a window in every layer (or the repeating period, e.g. [sliding, full]), or remove window\n"},
	{"model two documents", nil, []string{"models", "two-docs.yaml"},
		"plan: model: two-docs.yaml: the file holds more than one YAML document (the second begins at line 4); keep one document, without ---\n"},
	{"config.json repeated field", nil, []string{"models", "dup/config.json"},
		"plan: model: dup/config.json: field \"hidden_size\" is given 2 times; give it once (encoding/json would keep the last silently)\n"},
	{"flag tokens fraction", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--tokens", "1.5"},
		"plan: --tokens: \"1.5\" is not a whole number\n"},
	{"model seq_len 0", nil, []string{"models", "seq-zero.yaml"},
		"plan: model: seq-zero.yaml: key \"seq_len\" at line 6 is 0; it must be at least 1 (leave it out for the default, 2048)\n"},
	{"hf kv heads 0", nil, []string{"models", "kv-zero/config.json"},
		"plan: model: kv-zero/config.json: field \"num_key_value_heads\" is 0; it must be at least 1 (leave it out for the default, num_attention_heads, multi-head attention)\n"},
	{"hf llama with half the expert fields", nil, []string{"models", "half-moe/config.json"},
		"plan: model: half-moe/config.json: field \"n_routed_experts\" is 8, but model_type llama has no experts (transformers ignores the field); set model_type to mixtral, qwen2_moe, qwen3_moe or deepseek_v3 for a mixture of experts, or remove the field\n" +
			"  model: half-moe/config.json: field \"num_experts_per_tok\" is 2, but model_type llama has no experts (transformers ignores the field); set model_type to mixtral, qwen2_moe, qwen3_moe or deepseek_v3 for a mixture of experts, or remove the field\n"},
	{"sweep batch fraction", nil, []string{"sweep", "--config", "sweep-fraction.yaml", "--out", "sweep-out"},
		"plan: batches[0]: 16.5 is not a whole number\n"},
	{"sweep cells", nil, []string{"sweep", "--config", "sweep-cells.yaml", "--out", "sweep-out"},
		"plan: cells[0]: unknown key \"bogus\"\n  cells[0].batch: 8.5 is not a whole number\n  search.seed: 1.5 is not a whole number\n"},
	{"sweep env list", map[string]string{"PLAN_BATCHES": "16,x"}, []string{"sweep", "--config", "sweep-ok.yaml", "--out", "sweep-out"},
		"plan: PLAN_BATCHES: \"x\" is not a whole number; write digits with an optional suffix K, M, B, T (10^3 to 10^12) or Ki, Mi, Gi, Ti (2^10 to 2^40), e.g. 512, 4M, 4Mi or 2e12\n"},
	{"sweep format", nil, []string{"sweep", "--config", "sweep-ok.yaml", "--out", "sweep-out", "--format", "bogus"},
		"plan: --format bogus does not apply to plan sweep: it writes JSON lines (cells-I-of-N.jsonl) and a summary CSV; drop --format\n"},
	{"sweep jobs fraction", nil, []string{"sweep", "--config", "sweep-ok.yaml", "--out", "sweep-out", "--jobs", "1.5"},
		"plan: --jobs: \"1.5\" is not a whole number\n"},
	{"sweep jobs absurd", nil, []string{"sweep", "--config", "sweep-ok.yaml", "--out", "sweep-out", "--jobs", "1e18"},
		"plan: --jobs must be between 0 (one per core) and 65536, got 1000000000000000000\n"},
	{"merge format", nil, []string{"merge", "sweep-out", "--format", "json"},
		"plan: --format json does not apply to plan merge: it writes JSON lines and, with --summary, a CSV; drop --format\n"},
	{"objective cost without a price", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--objective", "cost"},
		"plan: --objective cost needs --price (and --tokens): the cost is the chip-hours to train times the price of one\n"},
	{"objective cost from the config file", nil, []string{"--config", "objective-cost.yaml"},
		"plan: --objective cost needs --price (and --tokens): the cost is the chip-hours to train times the price of one\n"},
	{"unknown objective", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--objective", "fastest"},
		"plan: --objective must be balanced, time, memory or cost, got \"fastest\"\n"},
	{"calibrate format", nil, []string{"calibrate", "--cluster", "a100-16", "--format", "csv"},
		"plan: --format must be table or json for plan calibrate, got \"csv\"\n"},
}

// TestBadInput runs every bad-input case: exit 2, the one message, no
// output, and nothing of the parsers' own wording.
func TestBadInput(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	for name, data := range badInputFiles {
		if i := strings.LastIndex(name, "/"); i >= 0 {
			if err := os.MkdirAll(name[:i], 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range badInputCases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			stdout, stderr, code := run(t, tc.args...)
			if code != ExitBadInput || stdout != "" || stderr != tc.want {
				t.Errorf("plan %s: exit %d, stdout %q\nstderr %q\nwant exit 2 and %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
			}
			for _, leak := range []string{"strconv", "decoding failed", "mapstructure", "cannot parse value", "invalid syntax", "; ;"} {
				if strings.Contains(stderr, leak) {
					t.Errorf("plan %s: %q leaks %q", strings.Join(tc.args, " "), stderr, leak)
				}
			}
		})
	}
}

// TestSameSuffixesEverywhere: the suffixes --tokens takes work for
// --batch-tokens and --seq, in flags, the --config file and the
// environment, with the same result.
func TestSameSuffixesEverywhere(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	if err := os.WriteFile("suffixes.yaml", []byte(badInputFiles["suffixes.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "batch    512 sequences x 8192 tokens = 4.19M tokens per step\n"
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flags", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--batch-tokens", "4Mi", "--seq", "8Ki", "--top", "1", "--quiet"}},
		{"config", nil, []string{"--config", "suffixes.yaml"}},
		{"environment", map[string]string{"PLAN_BATCH_TOKENS": "4Mi", "PLAN_SEQ": "8Ki"}, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--top", "1", "--quiet"}},
		{"decimal", nil, []string{"--model", "llama3-8b", "--cluster", "h100-8", "--batch", "0.512K", "--seq", "8192", "--top", "1", "--quiet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			stdout, stderr, code := run(t, tc.args...)
			if code != ExitOK || !strings.Contains(stdout, want) {
				t.Errorf("plan %s: exit %d, stderr %q\n%s\nwant a line %q", strings.Join(tc.args, " "), code, stderr, stdout, want)
			}
		})
	}
}
