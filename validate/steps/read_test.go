package steps

import (
	"os"
	"strings"
	"testing"
)

// header is the reference file's header.
const header = "model,params,seq,micro_batch,accumulated_micro_batches,recompute,compiled,step_s,tokens_per_s,optimizer_step_s,peak_allocated_bytes,peak_reserved_bytes,outcome\n"

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name string
		csv  string
		// want are substrings of the error.
		want []string
	}{
		{"empty file", "", []string{"steps: the file is empty", "header"}},
		{"header only", header, []string{"steps: the file has a header but no rows"}},
		{"unknown column", "model,seq,micro_batchs,recompute,outcome\nx,2048,2,none,out of memory\n",
			[]string{"steps: line 1", `unknown column "micro_batchs"`, `did you mean "micro_batch"?`}},
		{"missing required column", "model,seq,recompute,outcome\nx,2048,none,out of memory\n",
			[]string{"steps: line 1", `missing required column "micro_batch"`}},
		{"repeated column", "model,seq,seq,micro_batch,recompute,outcome\nx,2048,2048,1,none,ran\n",
			[]string{"steps: line 1", `column "seq" appears twice`}},
		{"nameless column", "model,,seq\n", []string{"steps: line 1", "header column 2 has no name"}},
		{"bad number", header + "llama32-1b,1235814400,2048,2,1,none,0,fast,33263.9,,33543327232,33592180736,ran\n",
			[]string{"steps: line 2", `column "step_s"`, `"fast" is not a number`}},
		{"bad count", header + "llama32-1b,1235814400,2k,2,1,none,0,0.1,1,,1,1,ran\n",
			[]string{"steps: line 2", `column "seq"`, `"2k" is not a whole number`}},
		{"negative micro_batch", header + "llama32-1b,1235814400,2048,-2,1,none,0,0.1231,33263.9,,33543327232,33592180736,ran\n",
			[]string{"steps: line 2", `column "micro_batch"`, `"-2" is negative`}},
		{"zero accumulation", header + "llama32-1b,1235814400,2048,2,0,none,0,0.1231,33263.9,,33543327232,33592180736,ran\n",
			[]string{"steps: line 2", `column "accumulated_micro_batches"`, "zero"}},
		{"fractional micro_batch", header + "llama32-1b,1235814400,2048,1.5,1,none,0,0.1231,33263.9,,33543327232,33592180736,ran\n",
			[]string{"steps: line 2", `column "micro_batch"`, "not a whole number"}},
		{"negative step time", header + "llama32-1b,1235814400,2048,2,1,none,0,-0.1,33263.9,,33543327232,33592180736,ran\n",
			[]string{"steps: line 2", `column "step_s"`, "negative"}},
		{"blank required cell", header + "llama32-1b,1235814400,,2,1,none,0,0.1231,33263.9,,33543327232,33592180736,ran\n",
			[]string{"steps: line 2", `column "seq" is blank`}},
		{"ran without step time", header + "llama32-1b,1235814400,2048,2,1,none,0,,33263.9,,33543327232,33592180736,ran\n",
			[]string{"steps: line 2", `column "step_s" is blank`}},
		{"ran with zero memory", header + "llama32-1b,1235814400,2048,2,1,none,0,0.1,33263.9,,0,33592180736,ran\n",
			[]string{"steps: line 2", `column "peak_allocated_bytes"`, "not positive"}},
		{"ran without a memory column", "model,seq,micro_batch,recompute,outcome,step_s\nx,2048,2,none,ran,0.1\n",
			[]string{"steps: line 2", `needs a "peak_allocated_bytes" column`}},
		{"unknown outcome", header + "llama32-1b,1235814400,2048,2,1,none,0,,,,,,crashed\n",
			[]string{"steps: line 2", `column "outcome"`, `"crashed" is not "ran" or "out of memory"`}},
		{"compiled not 0 or 1", header + "llama32-1b,1235814400,2048,2,1,none,yes,,,,,,out of memory\n",
			[]string{"steps: line 2", `column "compiled"`, `"yes" is not 0`}},
		{"recompute injects a strategy", header + "llama32-1b,1235814400,2048,2,1,\"none,tp=8\",0,,,,,,out of memory\n",
			[]string{"steps: line 2", `column "recompute"`, "not a recompute policy"}},
		{"batch too large", header + "llama32-1b,1235814400,2048,100000,1000,none,0,,,,,,out of memory\n",
			[]string{"steps: line 2", "more than 10000000 sequences"}},
		{"seq too long", header + "llama32-1b,1235814400,20000000,1,1,none,0,,,,,,out of memory\n",
			[]string{"steps: line 2", `column "seq"`, "longer than"}},
		{"short row", header + "llama32-1b,1235814400,2048\n", []string{"steps: line 2", "wrong number of fields"}},
		{"bad quote", header + "llama32-1b,\"1235814400,2048\n", []string{"steps: line", "quote"}},
		{"error on a later line", header + "llama32-1b,1235814400,2048,2,1,none,0,,,,,,out of memory\n\n" +
			"llama32-1b,1235814400,2048,x,1,none,0,,,,,,out of memory\n",
			[]string{"steps: line 4", `column "micro_batch"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := Read(strings.NewReader(tt.csv))
			if err == nil {
				t.Fatalf("Read = %d rows, want an error containing %q", len(rows), tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Read error = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestReadDefaults(t *testing.T) {
	csv := "\ufeffModel, Seq ,micro_batch,recompute,outcome,step_s,peak_allocated_bytes,framework,cluster\n" +
		"llama32-1b,2048,2,full,ran,0.5,2e10,,\n" +
		",,,,,,,,\n" + // a blank spreadsheet row
		"llama3-8b,8192,1,none,Out of  memory,,,megatron,h100-8\n"
	rows, err := Read(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("Read = %d rows, want 2 (the blank row skipped)", len(rows))
	}
	r := rows[0]
	if r.Line != 2 || r.Model != "llama32-1b" || r.Seq != 2048 || r.MicroBatch != 2 || r.Accumulated != 1 || r.Batch() != 2 ||
		r.Recompute != "full" || !r.Ran || r.StepS != 0.5 || r.PeakAllocatedBytes != 2e10 || r.Compiled != nil || r.Framework != "" || r.Cluster != "" {
		t.Errorf("row 1 = %+v", r)
	}
	if got, want := r.ID(), "llama32-1b s2048 mb2 k1 full"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	r = rows[1]
	if r.Line != 4 || r.Ran || r.Framework != "megatron" || r.Cluster != "h100-8" || r.StepS != 0 {
		t.Errorf("row 2 = %+v", r)
	}
}

func TestReadReference(t *testing.T) {
	f, err := os.Open(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	ran, compiled := 0, 0
	for _, r := range rows {
		if r.Ran {
			ran++
		}
		if r.Compiled != nil && *r.Compiled {
			compiled++
		}
	}
	// 52 rows below the header, 45 of which ran, 12 compiled (wc and grep on the file).
	if len(rows) != 52 || ran != 45 || compiled != 12 {
		t.Errorf("Read = %d rows, %d ran, %d compiled; want 52, 45, 12", len(rows), ran, compiled)
	}
	r := rows[38-1] // line 39
	if got, want := r.ID(), "llama2-7b-8l s4096 mb1 k2 none eager"; got != want || r.Line != 39 || r.Params != 1881214976 || r.OptimizerStepS != 0.0216 {
		t.Errorf("line 39: ID %q (want %q), %+v", got, want, r)
	}
}

// FuzzRead checks that Read never panics and that what it accepts is a
// complete row.
func FuzzRead(f *testing.F) {
	if data, err := os.ReadFile(referenceFile); err == nil {
		f.Add(string(data))
	}
	for _, s := range []string{
		"",
		header,
		header + "llama32-1b,1235814400,2048,2,1,none,0,0.1231,33263.9,,33543327232,33592180736,ran\n",
		header + "llama32-1b,1235814400,2048,-2,1,none,0,,,,,,out of memory\n",
		"model,seq,micro_batch,recompute,outcome\nx,1e3,1,none,out of memory\n",
		"model,seq,micro_batch,recompute,outcome,step_s,peak_allocated_bytes,framework,cluster\nx,9,9,full,ran,1,1,a.yaml,b.yml\n",
		"\ufeffmodel,seq\n\"a\nb\",1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := Read(strings.NewReader(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "steps: ") {
				t.Errorf("error %q does not start with \"steps: \"", err)
			}
			return
		}
		if len(rows) == 0 {
			t.Fatal("Read accepted a file without rows")
		}
		for _, r := range rows {
			if r.Model == "" || r.Recompute == "" || r.Seq < 1 || r.MicroBatch < 1 || r.Accumulated < 1 || r.Batch() > maxBatch || r.Line < 2 {
				t.Errorf("accepted an incomplete row: %+v", r)
			}
			if r.Ran && !(r.StepS > 0 && r.PeakAllocatedBytes > 0) {
				t.Errorf("accepted a row that ran without its measurements: %+v", r)
			}
			_ = r.ID()
		}
	})
}
