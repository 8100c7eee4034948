package planner

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestFixFits: a fix pinning experts on a dense model, or virtual stages
// without their schedule, is refused; the others pass.
func TestFixFits(t *testing.T) {
	dense, err := model.Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	moe, err := model.Preset("mixtral-8x7b")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		m       model.Spec
		fix     string
		wantErr string
	}{
		{dense, "tp=2", ""},
		{dense, "etp=1", ""},
		{dense, "etp=2", "--fix etp=2 splits experts, but model llama3-8b has no experts: drop etp"},
		{dense, "ep=2", "--fix ep=2 splits experts, but model llama3-8b has no experts: drop ep"},
		{moe, "etp=2", ""},
		{dense, "v=1", ""},
		{dense, "v=2", "--fix v=2 pins virtual stages without a schedule: add schedule=interleaved (or another schedule with virtual stages), as plan explain --strategy needs"},
		{dense, "schedule=interleaved,v=2", ""},
	}
	for _, tt := range tests {
		fix, err := space.ParseFix(tt.fix)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := fixFits(tt.m, fix); err != nil {
			got = err.Error()
		}
		if got != tt.wantErr {
			t.Errorf("fixFits(%s, %q) = %q, want %q", tt.m.Name, tt.fix, got, tt.wantErr)
		}
	}
}
