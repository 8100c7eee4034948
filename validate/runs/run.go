package runs

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/validate/internal/cells"
)

// publishedRunsCSV is the published runs of docs/published-runs.md with one
// column added at the end: "framework", the profile each row is planned with.
//
//go:embed testdata/published-runs.csv
var publishedRunsCSV []byte

// Run is one measured training run: a row of a runs file. Numeric fields are
// zero and text fields empty where the row leaves the cell blank ("not
// published").
type Run struct {
	// Line is the 1-based line of the row in its file (the header is line 1).
	Line int
	// ID names the row; in the published data it starts with a source
	// prefix (nar21, kor22, mtnlg, bloom, opt, maxtext, mpt, torchtitan,
	// gptneox, llama1) that selects the source's conventions.
	ID string
	// Source cites where the figures come from.
	Source string

	// Model is a preset name or model file ("model" column); when set, the
	// shape columns below only override the fields they give.
	Model string
	// ModelName is the model's published name ("model_name" column).
	ModelName string
	// Layers, Hidden, FFNHidden, Heads, KVHeads, HeadDim and Vocab are the
	// model's shape. FFNHidden is the per-expert width for MoE rows.
	Layers, Hidden, FFNHidden, Heads, KVHeads, HeadDim, Vocab int
	// SeqLen is the training sequence length in tokens.
	SeqLen int
	// ParamsB is the published parameter count in billions (a check only).
	ParamsB float64
	// MoEExperts and MoETopK describe the routed experts (0 for dense models).
	MoEExperts, MoETopK int

	// Framework is the training framework's profile the run was measured
	// with ("framework" column: a built-in name or a YAML file); when empty
	// it follows from the source (see FrameworkName).
	Framework string

	// Cluster is a cluster name or file ("cluster" column); when empty the
	// cluster is derived from Chip and Chips.
	Cluster string
	// Chip is the accelerator as the source names it, e.g. "A100-SXM-80GB" or "TPUv5e".
	Chip string
	// Chips is the number of chips (GPUs or TPU chips) of the whole job.
	Chips int

	// GlobalBatchSeqs is the global batch in sequences per step.
	GlobalBatchSeqs int
	// GlobalBatchTokens is the global batch in tokens per step, used when
	// GlobalBatchSeqs is blank.
	GlobalBatchTokens int

	// Strategy is a contract strategy string; when set it replaces the
	// layout columns below.
	Strategy string
	// TP, PP and DP are the tensor, pipeline and data-parallel degrees; DP
	// counts ZeRO/FSDP sharding groups too (ZeroOrFSDP says which).
	TP, PP, DP int
	// CPOrSP is the context-parallel degree as an integer, or "SP" for
	// Megatron sequence parallelism over the TP group with CP = 1.
	CPOrSP string
	// EP is the expert-parallel degree.
	EP int
	// ZeroOrFSDP says how the DP chips share model state, e.g. "ZeRO-1",
	// "FSDP FULL_SHARD", "none (plain DP all-reduce)" or
	// "FSDP ici=256 x DCN data-parallel=8".
	ZeroOrFSDP string
	// MicroBatch is the framework's micro-batch figure: Megatron's micro-batch
	// size, MaxText's per_device_batch_size, or an FSDP framework's per-rank batch.
	MicroBatch int
	// InterleaveV is the number of virtual pipeline stages per device.
	InterleaveV int
	// Recompute is the activation-checkpointing policy as published.
	Recompute string

	// MeasuredTFLOPsPerChip is the source's TFLOP/s per chip, in its own FLOP convention.
	MeasuredTFLOPsPerChip float64
	// MeasuredMFU is the source's model FLOPs utilisation, a fraction.
	MeasuredMFU float64
	// MeasuredStepS is the time of one training step in seconds.
	MeasuredStepS float64
	// MeasuredTokensPerS is the whole job's throughput in tokens per second.
	MeasuredTokensPerS float64
	// FLOPsConvention names the FLOP count behind MeasuredMFU and
	// MeasuredTFLOPsPerChip; empty means the convention of the ID's source
	// prefix, or ConventionContract for other rows.
	FLOPsConvention Convention

	// Notes are free text: caveats, derived figures, "?" for uncertain values.
	Notes string
}

// column is one known CSV column and how it sets a Run field.
type column struct {
	name string
	set  func(r *Run, v string) error
}

func textCol(name string, f func(*Run) *string) column {
	return column{name, func(r *Run, v string) error { *f(r) = v; return nil }}
}

func intCol(name string, f func(*Run) *int) column {
	return column{name, func(r *Run, v string) error {
		n, err := cells.Whole(v, maxCount)
		if err != nil {
			return err
		}
		*f(r) = n
		return nil
	}}
}

func floatCol(name string, f func(*Run) *float64) column {
	return column{name, func(r *Run, v string) error {
		x, err := cells.Number(v)
		if err != nil {
			return err
		}
		*f(r) = x
		return nil
	}}
}

// columns returns every column Read accepts, in the published file's order
// followed by the user-file extras.
func columns() []column {
	return []column{
		textCol("id", func(r *Run) *string { return &r.ID }),
		textCol("source", func(r *Run) *string { return &r.Source }),
		textCol("model_name", func(r *Run) *string { return &r.ModelName }),
		intCol("layers", func(r *Run) *int { return &r.Layers }),
		intCol("hidden", func(r *Run) *int { return &r.Hidden }),
		intCol("ffn_hidden", func(r *Run) *int { return &r.FFNHidden }),
		intCol("heads", func(r *Run) *int { return &r.Heads }),
		intCol("kv_heads", func(r *Run) *int { return &r.KVHeads }),
		intCol("vocab", func(r *Run) *int { return &r.Vocab }),
		intCol("seq_len", func(r *Run) *int { return &r.SeqLen }),
		floatCol("params_b", func(r *Run) *float64 { return &r.ParamsB }),
		intCol("moe_experts", func(r *Run) *int { return &r.MoEExperts }),
		intCol("moe_topk", func(r *Run) *int { return &r.MoETopK }),
		textCol("chip", func(r *Run) *string { return &r.Chip }),
		intCol("chips", func(r *Run) *int { return &r.Chips }),
		intCol("global_batch_seqs", func(r *Run) *int { return &r.GlobalBatchSeqs }),
		intCol("global_batch_tokens", func(r *Run) *int { return &r.GlobalBatchTokens }),
		intCol("tp", func(r *Run) *int { return &r.TP }),
		intCol("pp", func(r *Run) *int { return &r.PP }),
		intCol("dp", func(r *Run) *int { return &r.DP }),
		textCol("cp_or_sp", func(r *Run) *string { return &r.CPOrSP }),
		intCol("ep", func(r *Run) *int { return &r.EP }),
		textCol("zero_or_fsdp", func(r *Run) *string { return &r.ZeroOrFSDP }),
		intCol("micro_batch", func(r *Run) *int { return &r.MicroBatch }),
		intCol("interleave_v", func(r *Run) *int { return &r.InterleaveV }),
		textCol("recompute", func(r *Run) *string { return &r.Recompute }),
		floatCol("measured_tflops_per_chip", func(r *Run) *float64 { return &r.MeasuredTFLOPsPerChip }),
		floatCol("measured_mfu", func(r *Run) *float64 { return &r.MeasuredMFU }),
		floatCol("measured_step_s", func(r *Run) *float64 { return &r.MeasuredStepS }),
		floatCol("measured_tokens_per_s", func(r *Run) *float64 { return &r.MeasuredTokensPerS }),
		textCol("notes", func(r *Run) *string { return &r.Notes }),
		// User-file extras.
		textCol("model", func(r *Run) *string { return &r.Model }),
		textCol("cluster", func(r *Run) *string { return &r.Cluster }),
		textCol("strategy", func(r *Run) *string { return &r.Strategy }),
		textCol("framework", func(r *Run) *string { return &r.Framework }),
		intCol("head_dim", func(r *Run) *int { return &r.HeadDim }),
		column{"flops_convention", func(r *Run, v string) error {
			c, err := parseConvention(v)
			r.FLOPsConvention = c
			return err
		}},
		// Short aliases for user files.
		intCol("batch", func(r *Run) *int { return &r.GlobalBatchSeqs }),
		intCol("seq", func(r *Run) *int { return &r.SeqLen }),
	}
}

// alias returns the published column a short column name stands for.
func alias(name string) (string, bool) {
	switch name {
	case "batch":
		return "global_batch_seqs", true
	case "seq":
		return "seq_len", true
	}
	return "", false
}

// ColumnNames returns the names of every column Read accepts.
func ColumnNames() []string {
	cs := columns()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return names
}

// Default returns the built-in data set: the published runs of
// validate/runs/testdata/published-runs.csv (docs/published-runs.md), in file
// order.
func Default() ([]Run, error) {
	return Read(bytes.NewReader(publishedRunsCSV))
}

// Read parses a runs file: a CSV with a header row naming the columns (see
// the package documentation). It fails on an unknown or repeated column, on
// a missing required column (naming it), and on a cell that is not a number
// where one is expected (naming the row id and the column). Rows that parse
// but cannot be planned are not errors here; Plan and Validate say why.
func Read(r io.Reader) ([]Run, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0 // every row as long as the header
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("runs: the runs file is empty; it needs a header row naming the columns")
	}
	if err != nil {
		return nil, fmt.Errorf("runs: %v", cells.CSVError(err))
	}
	setters, err := readHeader(header)
	if err != nil {
		return nil, err
	}
	var out []Run
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("runs: %v", cells.CSVError(err))
		}
		line, _ := cr.FieldPos(0)
		if cells.Blank(rec) {
			continue
		}
		run, err := readRow(rec, header, setters, line)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[run.ID]; dup {
			return nil, fmt.Errorf("runs: line %d: id %q is already used on line %d", line, run.ID, first)
		}
		seen[run.ID] = line
		out = append(out, run)
	}
	return out, nil
}

// readHeader maps each header cell to its column setter and checks the
// required columns.
func readHeader(header []string) ([]column, error) {
	known := columns()
	names := ColumnNames()
	setters := make([]column, len(header))
	has := map[string]bool{}
	first := map[string]string{} // canonical column -> the header name that set it
	if i := cells.HeaderNames(header); i > 0 {
		return nil, fmt.Errorf("runs: header column %d has no name", i)
	}
	for i, name := range header {
		j := slices.IndexFunc(known, func(c column) bool { return c.name == name })
		if j < 0 {
			if len(name) > 64 {
				return nil, fmt.Errorf("runs: unknown column %.64q... (known: %s)", name, strings.Join(names, ", "))
			}
			if m := cells.Nearest(name, names, 2); m != "" {
				return nil, fmt.Errorf("runs: unknown column %q (did you mean %q?)", name, m)
			}
			return nil, fmt.Errorf("runs: unknown column %q (known: %s)", name, strings.Join(names, ", "))
		}
		canon := name
		if a, ok := alias(name); ok {
			canon = a
		}
		if prev, dup := first[canon]; dup {
			if prev != name {
				return nil, fmt.Errorf("runs: column %q repeats %q", name, prev)
			}
			return nil, fmt.Errorf("runs: column %q appears twice", name)
		}
		first[canon] = name
		has[canon] = true
		setters[i] = known[j]
	}
	return setters, requireColumns(has)
}

// requireColumns checks that the header can describe a run at all: an id, a
// model, a cluster, a batch and a measured figure.
func requireColumns(has map[string]bool) error {
	all := func(names ...string) bool {
		for _, n := range names {
			if !has[n] {
				return false
			}
		}
		return true
	}
	anyOf := func(names ...string) bool { return slices.ContainsFunc(names, func(n string) bool { return has[n] }) }
	missing := func(names ...string) string {
		var m []string
		for _, n := range names {
			if !has[n] {
				m = append(m, strconv.Quote(n))
			}
		}
		return strings.Join(m, ", ")
	}
	switch {
	case !has["id"]:
		return errors.New(`runs: missing required column "id"`)
	case !has["model"] && !all("layers", "hidden", "heads", "vocab"):
		return fmt.Errorf(`runs: missing model column: give "model" or all of "layers", "hidden", "heads", "vocab" (missing %s)`,
			missing("layers", "hidden", "heads", "vocab"))
	case !has["cluster"] && !all("chip", "chips"):
		return fmt.Errorf(`runs: missing cluster column: give "cluster" or both "chip" and "chips" (missing %s)`,
			missing("chip", "chips"))
	case !anyOf("global_batch_seqs", "global_batch_tokens"):
		return errors.New(`runs: missing batch column: give "global_batch_seqs" (or "batch") or "global_batch_tokens"`)
	case !anyOf("measured_step_s", "measured_tokens_per_s", "measured_mfu", "measured_tflops_per_chip"):
		return errors.New(`runs: missing measured column: give "measured_step_s", "measured_tokens_per_s", "measured_mfu" or "measured_tflops_per_chip"`)
	}
	return nil
}

// readRow fills a Run from one record.
func readRow(rec, header []string, setters []column, line int) (Run, error) {
	run := Run{Line: line}
	// The id first, so that errors in other cells can name it.
	for i, h := range header {
		if h == "id" {
			run.ID = strings.TrimSpace(rec[i])
		}
	}
	if run.ID == "" {
		return Run{}, fmt.Errorf("runs: line %d: the id is blank", line)
	}
	for i, c := range setters {
		v := strings.TrimSpace(rec[i])
		if v == "" {
			continue
		}
		if err := c.set(&run, v); err != nil {
			return Run{}, fmt.Errorf("runs: row %q (line %d), column %q: %v", run.ID, line, header[i], err)
		}
	}
	return run, nil
}

// maxCount bounds integer cells (chips, batch, widths): larger values are
// not real training runs and would overflow products.
const maxCount = 1 << 40
