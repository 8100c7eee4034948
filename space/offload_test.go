package space

import (
	"strings"
	"testing"
)

// TestOffloadKeys checks the offload and offload_fraction keys: their
// values, their round trip, the layouts Validate refuses and the
// frameworks' limits.
func TestOffloadKeys(t *testing.T) {
	for _, tt := range []struct {
		in, out string
		frac    float64
		err     string
	}{
		{"fsdp=8,offload=params+optimizer", "fsdp=8,offload=params+optimizer", 1, ""},
		{"dp=8,zero=1,offload=optimizer,offload_fraction=0.5", "dp=8,zero=1,offload=optimizer,offload_fraction=0.5", 0.5, ""},
		{"dp=8,offload=optimizer,offload_fraction=1", "dp=8,offload=optimizer", 1, ""},
		{"dp=8,offload=none", "dp=8", 0, ""},
		{"offload=gpu", "", 0, "offload"},
		{"offload=optimizer,offload_fraction=0", "", 0, "offload_fraction=0"},
		{"offload=optimizer,offload_fraction=1.5", "", 0, "offload_fraction=1.5"},
	} {
		s, err := Parse(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) = %v, want an error naming %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if got := s.String(); got != tt.out {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.out)
		}
		if got := s.HostOptimizerFraction(); got != tt.frac {
			t.Errorf("%q: host optimizer fraction %v, want %v", tt.in, got, tt.frac)
		}
	}

	var msgs []string
	add := func(format string, args ...any) { msgs = append(msgs, format) }
	s, _ := Parse("dp=8,offload=params+optimizer")
	s.validateOffload(add)
	s, _ = Parse("dp=8,offload_fraction=0.5")
	s.validateOffload(add)
	if len(msgs) != 2 {
		t.Errorf("validateOffload refused %d layouts, want 2 (params from replicas; a fraction without offload=optimizer): %q", len(msgs), msgs)
	}

	megatron := Limits{Framework: "megatron", Offloads: []string{OffloadOptimizer}, OffloadFraction: true}
	torch := Limits{Framework: "pytorch", Offloads: []string{OffloadParamsOptimizer}}
	none := Limits{Framework: "x", Offloads: []string{}}
	for _, tt := range []struct {
		l   Limits
		s   string
		err string
	}{
		{megatron, "dp=8,zero=1,offload=optimizer,offload_fraction=0.25", ""},
		{megatron, "fsdp=8,offload=params+optimizer", "megatron cannot express offload=params+optimizer: it offloads optimizer only"},
		{torch, "fsdp=8,offload=optimizer", "pytorch cannot express offload=optimizer: it offloads params+optimizer only"},
		{torch, "fsdp=8,offload=optimizer,offload_fraction=0.5", "pytorch cannot express offload=optimizer"},
		{none, "fsdp=8,offload=params+optimizer", "x cannot express offload=params+optimizer: it keeps every model state in HBM"},
		{Limits{}, "fsdp=8,offload=params+optimizer", ""},
	} {
		s, err := Parse(tt.s)
		if err != nil {
			t.Fatal(err)
		}
		err = tt.l.checkOffload(s)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: %v, want %q", tt.l.Framework, tt.s, err, tt.err)
		}
	}
}
