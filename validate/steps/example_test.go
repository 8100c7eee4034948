package steps_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/meshplan/meshplan/validate/steps"
)

// A steps file names one measured step per row; Read parses it and
// Options.FrameworkOf says which framework profile predicts each row.
func ExampleRead() {
	csv := `model,seq,micro_batch,accumulated_micro_batches,recompute,compiled,step_s,peak_allocated_bytes,outcome
llama32-1b,2048,2,4,none,1,0.36,2.8e10,ran
llama32-1b,8192,2,1,none,0,,,out of memory
`
	rows, err := steps.Read(strings.NewReader(csv))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("line %d: %s, batch %d, %s\n", r.Line, r.ID(), r.Batch(), steps.Options{}.FrameworkOf(r))
	}
	// Output:
	// line 2: llama32-1b s2048 mb2 k4 none compiled, batch 8, torchtitan
	// line 3: llama32-1b s8192 mb2 k1 none eager, batch 2, pytorch
}

// ValidateFile predicts every row of a steps file as plan explain would
// and summarises the errors per framework profile.
func ExampleValidateFile() {
	rep, err := steps.ValidateFile("testdata/measured-h100/train-steps.csv", steps.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range rep.Frameworks {
		fmt.Printf("%s: %d rows, %d ran, %d wrong fit verdicts, step-time MAPE under 8%%: %v\n",
			s.Framework, s.Rows, s.Ran, s.WrongVerdicts, s.StepMAPE < 0.08)
	}
	// Output:
	// pytorch: 40 rows, 33 ran, 0 wrong fit verdicts, step-time MAPE under 8%: true
	// torchtitan: 12 rows, 12 ran, 0 wrong fit verdicts, step-time MAPE under 8%: true
}
