package calibrate_test

import (
	"fmt"

	"github.com/meshplan/meshplan/validate/calibrate"
	"github.com/meshplan/meshplan/validate/runs"
)

// ExampleLeaveOneSourceOut fits a chip whose runs all come from one
// source: in sample the coefficients are fitted on them, but nothing is
// left to fit without that source, so each run's out-of-source
// prediction is the default one, and the chip's note says so.
func ExampleLeaveOneSourceOut() {
	rs := []runs.Run{
		{ID: "a", Source: "my-lab/runs@1", Model: "llama3-8b", Cluster: "h100-8", GlobalBatchSeqs: 64, SeqLen: 8192,
			Strategy: "fsdp=8,mb=1,recompute=full", MeasuredTokensPerS: 8 * 3000},
		{ID: "b", Source: "my-lab/runs@1", Model: "llama2-7b", Cluster: "h100-8", GlobalBatchSeqs: 64, SeqLen: 4096,
			Strategy: "fsdp=8,mb=2", MeasuredTokensPerS: 8 * 4000},
	}
	rep, err := calibrate.LeaveOneSourceOut(rs, calibrate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range rep.Rows {
		fmt.Println(h.ID, h.Source, h.Chip, "refit:", h.Refit, "out-of-source = default:", h.OutOfSource == h.Default)
	}
	fmt.Println(rep.Chips[0].Note)
	// Output:
	// a my-lab/runs h100 refit: false out-of-source = default: true
	// b my-lab/runs h100 refit: false out-of-source = default: true
	// only one source (my-lab/runs) on h100: no coefficient can be fitted without it, so out-of-source is the default prediction
}
