package cmd

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/timeline"
)

// maxTraceBytes is the largest trace a README example may write.
const maxTraceBytes = 5 << 20

// explainCommands returns the `plan explain` command lines of the README's
// sh blocks (continuation lines joined), as arguments without "plan".
func explainCommands(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	for _, block := range readmeBlocks(t, "sh") {
		text := strings.ReplaceAll(block, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "plan explain ") {
				continue
			}
			out = append(out, shellWords(strings.TrimPrefix(line, "plan ")))
		}
	}
	if len(out) == 0 {
		t.Fatal("the README has no plan explain command")
	}
	return out
}

// shellWords splits a command line into words, honouring single quotes.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// withFormat returns args with --format set to f (no --emit, and to stdout).
func withFormat(args []string, f string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--format" || args[i] == "--emit" || args[i] == "--out" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return append(out, "--format", f)
}

// checkTraceTotals runs args as a trace and as JSON and checks the trace
// against the trace-event format, its size, and its totals against
// explain's breakdown; it returns the trace's events and otherData.
func checkTraceTotals(t *testing.T, args []string) ([]map[string]any, timeline.TraceMeta) {
	t.Helper()
	trace, stderr, code := run(t, withFormat(args, "trace")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(trace) > maxTraceBytes {
		t.Errorf("trace of %d bytes, want under %d", len(trace), maxTraceBytes)
	}
	meta, err := timeline.CheckTrace([]byte(trace))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, withFormat(args, "json")...)
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, stderr)
	}
	var r struct {
		StepTimeS float64 `json:"step_time_s"`
		Time      struct {
			ComputeS     float64 `json:"compute_s"`
			ExposedCommS float64 `json:"exposed_comm_s"`
			ExposedA2AS  float64 `json:"exposed_a2a_s"`
			BubbleS      float64 `json:"bubble_s"`
		} `json:"time"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"step", meta.StepSeconds, r.StepTimeS},
		{"compute", meta.ComputeSeconds, r.Time.ComputeS},
		{"exposed communication", meta.ExposedCommSeconds, r.Time.ExposedCommS},
		{"exposed all-to-all", meta.ExposedA2ASeconds, r.Time.ExposedA2AS},
		{"bubble", meta.BubbleSeconds, r.Time.BubbleS},
	} {
		if math.Abs(c.got-c.want) > 1e-9*max(1, math.Abs(c.want)) {
			t.Errorf("the trace's %s %g s, explain's %g s", c.what, c.got, c.want)
		}
	}
	var f struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal([]byte(trace), &f); err != nil {
		t.Fatal(err)
	}
	return f.TraceEvents, meta
}

// TestExplainTraceREADME: the trace of every `plan explain` example of the
// README is valid trace-event JSON under 5 MB whose totals are explain's.
func TestExplainTraceREADME(t *testing.T) {
	clearEnv(t)
	for _, args := range explainCommands(t) {
		t.Run(strings.Join(args[1:5], " "), func(t *testing.T) { _, _ = checkTraceTotals(t, args) })
	}
}

// TestExplainTraceSchedules: every schedule's trace holds explain's totals;
// DeepSeek-V3's published layout shows DualPipe's overlapped all-to-all
// and its bubble.
func TestExplainTraceSchedules(t *testing.T) {
	clearEnv(t)
	small := []string{"explain", "--model", "llama3-8b", "--cluster", "h100-64", "--batch", "64", "--strategy"}
	for _, tc := range []struct {
		name string
		args []string
		// overlappedA2A wants an ep event that hides under compute.
		overlappedA2A bool
		// folded wants ranks sampled or steps folded.
		folded bool
	}{
		{"1f1b", append(small, "tp=8,dp=2,pp=4,schedule=1f1b"), false, false},
		{"gpipe", append(small, "tp=8,dp=2,pp=4,schedule=gpipe"), false, false},
		{"interleaved", append(small, "tp=8,dp=2,pp=4,schedule=interleaved,v=2"), false, false},
		{"zb-h1", append(small, "tp=8,dp=2,pp=4,schedule=zb-h1"), false, false},
		{"zb-v", append(small, "tp=8,dp=2,pp=4,schedule=zb-v"), false, false},
		{"dualpipe", append(small, "tp=8,dp=2,pp=4,schedule=dualpipe"), false, false},
		{"dualpipev", append(small, "tp=8,dp=2,pp=4,schedule=dualpipev"), false, false},
		{"fsdp", append(small, "tp=8,fsdp=8,recompute=full"), false, false},
		{"llama3-70b interleaved", []string{"explain", "--model", "llama3-70b", "--cluster", "h100-1024", "--batch", "1024",
			"--strategy", "tp=8,pp=4,dp=32,schedule=interleaved,v=5"}, false, false},
		{"llama3-70b zb-h1", []string{"explain", "--model", "llama3-70b", "--cluster", "h100-1024", "--batch", "1024",
			"--strategy", "tp=8,pp=8,dp=16,schedule=zb-h1,recompute=selective"}, false, false},
		{"deepseek-v3 dualpipe", []string{"explain", "--model", "deepseek-v3", "--cluster", "h800-2048", "--batch", "15360", "--seq", "4096",
			"--strategy", "dp=128,zero=1,pp=16,ep=64,schedule=dualpipe,recompute=deepseek,precision=fp8,mesh=ep:gpu*8.node*8;pp:node*16;dp:gpu*8.node*16"}, true, true},
		// 16,384 chips, pp=16, 2,048 micro-batches of 4 chunks.
		{"llama3-405b 16k chips", []string{"explain", "--model", "llama3-405b", "--cluster", "h100-16384", "--batch", "262144",
			"--strategy", "tp=8,pp=16,dp=128,schedule=interleaved,v=4"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, meta := checkTraceTotals(t, tc.args)
			if folded := meta.Folding != ""; folded != tc.folded {
				t.Errorf("folding %q, want folded %v", meta.Folding, tc.folded)
			}
			var cats []string
			overlapped := false
			for _, e := range events {
				if c, ok := e["cat"].(string); ok && !slices.Contains(cats, c) {
					cats = append(cats, c)
				}
				if a, ok := e["args"].(map[string]any); ok && e["tid"] == float64(timeline.StreamEP) && a["exposed"] == false {
					overlapped = true
				}
			}
			if strings.Contains(tc.name, "zb") || strings.Contains(tc.name, "dualpipe") {
				if !slices.Contains(cats, timeline.CatWeightGrad) {
					t.Errorf("no weight-gradient events in a schedule that splits them (%v)", cats)
				}
			}
			if !strings.Contains(tc.name, "fsdp") && !slices.Contains(cats, timeline.CatBubble) {
				t.Errorf("no bubble events (%v)", cats)
			}
			if overlapped != tc.overlappedA2A {
				t.Errorf("an overlapped all-to-all event: %v, want %v", overlapped, tc.overlappedA2A)
			}
		})
	}
}

// TestTraceOnlyForExplain: plan itself has no trace.
func TestTraceOnlyForExplain(t *testing.T) {
	clearEnv(t)
	_, stderr, code := run(t, "--model", "llama3-8b", "--cluster", "v5p-16", "--format", "trace")
	if code != 2 || !strings.Contains(stderr, "--format trace is for plan explain only") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
