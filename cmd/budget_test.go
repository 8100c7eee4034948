package cmd

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// deadlineArgs is the command line of issue 45: Llama 3 405B on the H100
// family, 15T tokens within 90 days at 2.5 per chip-hour.
var deadlineArgs = []string{"--model", "llama3-405b", "--cluster", "h100", "--tokens", "15T", "--deadline", "90d", "--price", "2.5", "--quiet"}

// llama3Args explains Llama 3 405B's published layout (tp=8, cp=1, pp=16,
// dp=128 on 16,384 H100, 2048 sequences of 8192 tokens) with its goodput.
var llama3Args = []string{"explain", "--model", "llama3-405b", "--cluster", "h100-16384", "--batch", "2048", "--seq", "8192",
	"--strategy", "dp=128,zero=2,tp=8,pp=16,schedule=interleaved,v=4", "--tokens", "15T", "--goodput"}

// TestGoldenBudget pins the outputs of --goodput and --deadline: numbers
// within the golden files' tolerance (golden_test.go), words exactly.
func TestGoldenBudget(t *testing.T) {
	with := func(args []string, more ...string) []string { return append(append([]string{}, args...), more...) }
	for _, tc := range []goldenCase{
		{name: "plan-deadline", args: deadlineArgs},
		// --top 2 keeps the chosen size's front, and the golden files, short.
		{name: "plan-deadline-json", args: with(deadlineArgs, "--top", "2", "--format", "json"), json: true},
		{name: "plan-deadline-md", args: with(deadlineArgs, "--top", "2", "--format", "md")},
		{name: "plan-deadline-html", args: with(deadlineArgs, "--top", "2", "--format", "html"), noNumbers: true},
		{name: "plan-deadline-csv", args: with(deadlineArgs, "--format", "csv")},
		{name: "explain-goodput-llama3", args: with(llama3Args, "--price", "2.5", "--energy-price", "0.08")},
		{name: "plan-goodput", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--batch", "64", "--top", "3", "--quiet", "--tokens", "1T", "--price", "2", "--goodput", "--pue", "1.2", "--restart-minutes", "5"}},
		{name: "error-deadline-without-tokens", args: []string{"--model", "llama3-8b", "--cluster", "h100", "--deadline", "30d"}, code: ExitBadInput},
		{name: "error-bad-deadline", args: []string{"--model", "llama3-8b", "--cluster", "h100", "--tokens", "1T", "--deadline", "soon"}, code: ExitBadInput},
		{name: "error-pue-without-goodput", args: []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--tokens", "1T", "--pue", "1.2"}, code: ExitBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc) })
	}
}

// TestLlama3Goodput checks the model against Llama 3 405B's published
// run: 466 interruptions in 54 days on 16,384 H100, more than 90%
// effective training time (Llama Team 2024, §3.3.4). By hand: M = 86400 ·
// 54 / 466 = 10,012 s; the checkpoint is the weights over 128 data-parallel
// replicas and the ZeRO-sharded optimizer state, about 0.35 GB per chip,
// written at 2e12/16384 = 122 MB/s in about 2.9 s; τ = sqrt(2 · 2.9 ·
// 10,012) − 2.9 ≈ 236 s; each interruption costs 600 s of restart, 2.9 s
// of read and ≈ 119 s of lost work, 722 s of 10,012: goodput ≈ (1 −
// 2.9/239) · (1 − 722/10,012) ≈ 0.917.
func TestLlama3Goodput(t *testing.T) {
	clearEnv(t)
	stdout, stderr, code := run(t, append(append([]string{}, llama3Args...), "--format", "json")...)
	if code != ExitOK {
		t.Fatalf("plan %s: exit %d: %s", strings.Join(llama3Args, " "), code, stderr)
	}
	var r struct {
		Goodput struct {
			Fraction                      float64 `json:"fraction"`
			MeanTimeBetweenInterruptionsS float64 `json:"mean_time_between_interruptions_s"`
			CheckpointGBPerChip           float64 `json:"checkpoint_gb_per_chip"`
			CheckpointWriteS              float64 `json:"checkpoint_write_s"`
			CheckpointIntervalS           float64 `json:"checkpoint_interval_s"`
			LostSPerInterruption          float64 `json:"lost_s_per_interruption"`
		} `json:"goodput"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("decoding the explain JSON: %v", err)
	}
	g := r.Goodput
	for _, c := range []struct {
		what      string
		got, want float64
		tolerance float64 // relative
	}{
		{"mean time between interruptions (s)", g.MeanTimeBetweenInterruptionsS, 86400 * 54.0 / 466, 1e-9},
		{"checkpoint per chip (GB)", g.CheckpointGBPerChip, 0.35, 0.1},
		{"checkpoint write (s)", g.CheckpointWriteS, 0.35e9 / (2e12 / 16384), 0.1},
		{"checkpoint interval (s)", g.CheckpointIntervalS, math.Sqrt(2*2.9*10012) - 2.9, 0.1},
		{"lost per interruption (s)", g.LostSPerInterruption, 722, 0.05},
		{"goodput", g.Fraction, 0.917, 0.01},
	} {
		if math.Abs(c.got-c.want) > c.tolerance*c.want {
			t.Errorf("Llama 3 405B %s = %g, want %g within %g", c.what, c.got, c.want, c.tolerance)
		}
	}
	if g.Fraction <= 0.90 {
		t.Errorf("Llama 3 405B goodput = %.3f, want above the published 90%%", g.Fraction)
	}
}

// TestBudgetBadInput checks that every budget flag out of range exits 2
// with one sentence naming the flag.
func TestBudgetBadInput(t *testing.T) {
	base := []string{"--model", "llama3-8b", "--cluster", "v5p-16", "--tokens", "1T", "--goodput", "--quiet"}
	tests := []struct {
		flag, value, want string
		more              []string
	}{
		{"--interruptions-per-chip-day", "-1", "--interruptions-per-chip-day must be a positive number", nil},
		{"--interruptions-per-chip-day", "100", "--interruptions-per-chip-day 100 is more than 10", nil},
		{"--checkpoint-bandwidth", "NaN", "is not a finite number", nil},
		{"--restart-minutes", "1e9", "--restart-minutes 1e+09 is more than 10080", nil},
		{"--chip-watts", "-700", "--chip-watts must be a positive number", nil},
		{"--pue", "0.5", "--pue must be at least 1", nil},
		{"--energy-price", "1000", "--energy-price 1000 is more than 100", nil},
		{"--deadline", "0d", "--deadline: \"0d\" must be a positive wall time", nil},
		{"--deadline", "9e9", "is more than 36500 days", nil},
		{"--deadline", "90 days", "is not a wall time", nil},
		// 10 per chip-day on 8 chips: every 1080 s, less than a 600-minute restart.
		{"--interruptions-per-chip-day", "10", "is zero: an interruption every 18.0 min", []string{"--restart-minutes", "600"}},
	}
	for _, tt := range tests {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			clearEnv(t)
			_, stderr, code := run(t, append(append(append([]string{}, base...), tt.flag, tt.value), tt.more...)...)
			if code != ExitBadInput || !strings.Contains(stderr, tt.want) {
				t.Errorf("%s %s: exit %d, stderr %q; want exit 2 naming %q", tt.flag, tt.value, code, stderr, tt.want)
			}
		})
	}
}

// TestParseDeadline reads wall times in days.
func TestParseDeadline(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"90d", 90}, {"90", 90}, {"2160h", 90}, {"13w", 91}, {" 1.5D ", 1.5}, {"", 0},
	}
	for _, tt := range tests {
		if got, err := parseDeadline(tt.in); err != nil || got != tt.want {
			t.Errorf("parseDeadline(%q) = %g, %v; want %g", tt.in, got, err, tt.want)
		}
	}
}
