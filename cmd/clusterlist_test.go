package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClusterListKeepsGoing wants a cluster list to give a cluster on which
// no layout suits the model, or nothing fits, a row saying so rather than
// abort the list; only when no cluster has a plan does it fail: exit 1 when
// any cluster had a layout (nothing fits), 2 when none had (bad input).
// The batch is given: the default would be rounded to a share of the
// largest cluster's chips (planner.DefaultBatchSequences), which gives
// h100-520 and h100-1048 a layout.
func TestClusterListKeepsGoing(t *testing.T) {
	clearEnv(t)
	for _, c := range []struct {
		name     string
		args     []string
		code     int
		want     []string // in stdout (exit 0) or stderr
		noLayout []string // clusters the JSON marks no_layout
	}{
		{"one without a layout", []string{"--model", "llama3-8b", "--cluster", "h100-64,h100-264", "--batch", "512"}, ExitOK,
			[]string{"h100-264  264", "no layout", "h100-264: cannot search llama3-8b on h100-264: space: no layout"}, []string{"h100-264"}},
		{"none with a layout", []string{"--model", "llama3-8b", "--cluster", "h100-264,h100-520", "--batch", "512"}, ExitBadInput,
			[]string{"plan: no layout suits the model on any of h100-264, h100-520"}, nil},
		{"no fit and no layout", []string{"--model", "llama3-405b", "--cluster", "h100-8,h100-1048", "--batch", "512"}, ExitNoFit,
			[]string{"plan: nothing fits on any of h100-8, h100-1048"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := run(t, append(c.args, "--quiet")...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			got := stderr
			if code == ExitOK {
				got = stdout
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if code != ExitOK {
				if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
					t.Errorf("the error is %d lines, want one:\n%s", n+1, stderr)
				}
				return
			}
			out, _, _ := run(t, append(c.args, "--quiet", "--format", "json")...)
			var p struct {
				Clusters []struct {
					Cluster  struct{ Name string }
					Error    string
					NoLayout bool `json:"no_layout"`
				}
			}
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatal(err)
			}
			var marked []string
			for _, o := range p.Clusters {
				if o.NoLayout {
					marked = append(marked, o.Cluster.Name)
					if o.Error == "" {
						t.Errorf("%s: no_layout without an error", o.Cluster.Name)
					}
				}
			}
			if strings.Join(marked, ",") != strings.Join(c.noLayout, ",") {
				t.Errorf("no_layout on %v, want %v", marked, c.noLayout)
			}
		})
	}
}
