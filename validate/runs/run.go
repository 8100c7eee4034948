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
	// Format is the layout of the file the row was read from (Read sets
	// it from the header); FormatPublished and FormatMemory rows are read
	// with the conventions of docs/published-runs-2.md and docs/published-memory.md.
	Format Format
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

	// The columns of the published-runs-2 and published-memory files
	// (docs/published-runs-2.md and docs/published-memory.md); a user file may use them too.

	// CP is the context-parallel degree ("cp" column); it replaces a
	// numeric cp_or_sp.
	CP int
	// ETP is the expert-tensor-parallel degree ("etp"), 0 when not published.
	ETP int
	// MoESharedExperts is the number of shared experts per MoE layer.
	MoESharedExperts int
	// MoEExpertFFN is the width of one routed expert ("moe_expert_ffn");
	// when it is given, FFNHidden is the dense layers' width.
	MoEExpertFFN int
	// MoELayerPattern says which layers are MoE, e.g. "first 3 layers dense
	// (ffn 18432) then 58 MoE layers", and may name the attention pattern
	// ("attention alternates sliding-window(128)/full every other layer").
	MoELayerPattern string
	// MLA holds the multi-head latent attention widths
	// q_lora/kv_lora/rope/nope/v, e.g. "1536/512/64/128/128".
	MLA string
	// Precision is the matmul precision as published: "BF16", "FP8-CS",
	// "MXFP8", "INT8 (AQT)", "fp16 AMP", ...
	Precision string
	// MeasuredTokensPerSPerChip is the published throughput per chip.
	MeasuredTokensPerSPerChip float64
	// FLOPsBasis describes the FLOP count behind measured_tflops_per_chip
	// in words; FLOPsConvention is read from it when not given.
	FLOPsBasis string
	// HBMGB is the chip's memory as the source states it, in GB.
	HBMGB float64
	// SequenceParallel is the published sequence-parallel setting ("yes", blank).
	SequenceParallel string
	// Optimizer is the optimizer as published.
	Optimizer string
	// MeasuredPeakGB is the measured per-chip peak memory in GiB (2^30
	// bytes; docs/published-memory.md: PyTorch byte counters printed as "GB").
	MeasuredPeakGB float64
	// PeakKind is the counter behind MeasuredPeakGB: "allocated",
	// "reserved" or "unknown".
	PeakKind string
	// OOM is "1" when the source says the run ran out of memory, "0" when
	// it says the run ran, "" when it says neither.
	OOM string
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
		// The published-runs-2 and published-memory columns.
		intCol("cp", func(r *Run) *int { return &r.CP }),
		intCol("etp", func(r *Run) *int { return &r.ETP }),
		intCol("vp", func(r *Run) *int { return &r.InterleaveV }),
		intCol("moe_shared_experts", func(r *Run) *int { return &r.MoESharedExperts }),
		intCol("moe_expert_ffn", func(r *Run) *int { return &r.MoEExpertFFN }),
		textCol("moe_layer_pattern", func(r *Run) *string { return &r.MoELayerPattern }),
		textCol("mla", func(r *Run) *string { return &r.MLA }),
		textCol("precision", func(r *Run) *string { return &r.Precision }),
		floatCol("measured_tokens_per_s_per_chip", func(r *Run) *float64 { return &r.MeasuredTokensPerSPerChip }),
		textCol("flops_basis", func(r *Run) *string { return &r.FLOPsBasis }),
		floatCol("hbm_gb", func(r *Run) *float64 { return &r.HBMGB }),
		textCol("sequence_parallel", func(r *Run) *string { return &r.SequenceParallel }),
		textCol("optimizer", func(r *Run) *string { return &r.Optimizer }),
		floatCol("measured_peak_gb", func(r *Run) *float64 { return &r.MeasuredPeakGB }),
		textCol("peak_kind", func(r *Run) *string { return &r.PeakKind }),
		column{"oom", func(r *Run, v string) error {
			if v != "0" && v != "1" {
				return fmt.Errorf("%q is not 0 (ran) or 1 (out of memory)", v)
			}
			r.OOM = v
			return nil
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
	case "vp":
		return "interleave_v", true
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

// MaxFileBytes bounds a runs file: Read refuses a larger input (a pipe
// included), which no file of training runs needs.
const MaxFileBytes = 16 << 20

// MaxRows bounds the rows of a runs file.
const MaxRows = 100_000

// maxProblems is how many row problems Read lists before "and N more".
const maxProblems = 20

// Read parses a runs file: a CSV with a header row naming the columns (see
// the package documentation). It fails on an input over MaxFileBytes or
// MaxRows rows, on an unknown or repeated column, on a missing required
// column (naming it), and on cells that are not a number where one is
// expected (naming the row id and the column); row problems are listed
// together, at most 20 and then "and N more". Rows that parse but cannot
// be planned are not errors here; Plan and Validate say why.
func Read(r io.Reader) ([]Run, error) {
	rs, _, err := ReadFormat(r)
	return rs, err
}

// ReadFormat is Read that also returns the file's format, detected from
// its header (see Format).
func ReadFormat(r io.Reader) ([]Run, Format, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("runs: reading the runs file: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, 0, fmt.Errorf("runs: the runs file is over %d MiB; split it into smaller files", MaxFileBytes>>20)
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = 0 // every row as long as the header
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, 0, errors.New("runs: the runs file is empty; it needs a header row naming the columns")
	}
	if err != nil {
		return nil, 0, fmt.Errorf("runs: %v", cells.CSVError(err))
	}
	format := formatOf(header)
	setters, err := readHeader(header)
	if err != nil {
		return nil, 0, err
	}
	var out []Run
	var problems []string
	seen := map[string]int{}
	for rows := 0; ; rows++ {
		if rows >= MaxRows {
			return nil, 0, fmt.Errorf("runs: the runs file has more than %d rows; split it into smaller files", MaxRows)
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// A broken record (quotes, field count) leaves the rest unreadable.
			problems = append(problems, cells.CSVError(err).Error())
			break
		}
		line, _ := cr.FieldPos(0)
		if cells.Blank(rec) {
			continue
		}
		run, err := readRow(rec, header, setters, line)
		run.Format = format
		if err != nil {
			problems = append(problems, strings.TrimPrefix(err.Error(), "runs: "))
			continue
		}
		if first, dup := seen[run.ID]; dup {
			problems = append(problems, fmt.Sprintf("line %d: id %q is already used on line %d", line, run.ID, first))
			continue
		}
		seen[run.ID] = line
		out = append(out, run)
	}
	if len(problems) > 0 {
		return nil, 0, problemsError(problems)
	}
	return out, format, nil
}

// problemsError joins row problems into one error: the only one as it
// stands, else at most maxProblems of them and "and N more".
func problemsError(problems []string) error {
	if len(problems) == 1 {
		return errors.New("runs: " + problems[0])
	}
	shown := problems[:min(len(problems), maxProblems)]
	msg := fmt.Sprintf("runs: %d problems: %s", len(problems), strings.Join(shown, "; "))
	if n := len(problems) - len(shown); n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return errors.New(msg)
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
	case !anyOf("measured_step_s", "measured_tokens_per_s", "measured_tokens_per_s_per_chip", "measured_mfu",
		"measured_tflops_per_chip", "measured_peak_gb", "oom"):
		return errors.New(`runs: missing measured column: give "measured_step_s", "measured_tokens_per_s", "measured_tokens_per_s_per_chip", "measured_mfu", "measured_tflops_per_chip", "measured_peak_gb" or "oom"`)
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
