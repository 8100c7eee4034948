package space

// Dim is one kind of parallelism that occupies mesh axes.
type Dim int

// The parallel dimensions, in the order the strategy string lists them.
// EP is carved out of the data-parallel chips (DP and FSDP), so its axes are
// a subset of theirs.
const (
	DP Dim = iota
	FSDP
	TP
	CP
	PP
	EP
	NumDims
)

// Schedules accepted in Strategy.Schedule.
const (
	GPipe       = "gpipe"
	OneFOneB    = "1f1b"
	Interleaved = "interleaved"
)

// Recompute policies accepted in Strategy.Recompute.
const (
	RecomputeNone      = "none"
	RecomputeSelective = "selective"
	RecomputeFull      = "full"
)

// Share is the part of one cluster mesh axis that a parallel dimension
// occupies: the whole axis when Size equals the axis size, or a factor of it.
type Share struct {
	// Axis is the cluster axis name (profiles.Axis.Name).
	Axis string
	// Size is the number of chips of that axis the dimension spans.
	Size int
}

// Strategy is one parallel layout: the contract's strategy string as a value.
// Degrees are at least 1; Parse and Defaults fill omitted keys.
type Strategy struct {
	DP        int    // pure data-parallel replicas
	Zero      int    // ZeRO stage 0, 1 or 2 applied across DP
	FSDP      int    // fully sharded data parallel (ZeRO-3) degree
	TP        int    // tensor parallel degree
	SP        bool   // Megatron sequence parallelism inside the TP group
	CP        int    // context parallel degree
	PP        int    // pipeline stages
	EP        int    // expert parallel degree, divides DP*FSDP
	MB        int    // micro-batch size in sequences per data-parallel replica
	Schedule  string // GPipe, OneFOneB or Interleaved
	V         int    // virtual stages per pipeline rank (Interleaved only)
	Recompute string // RecomputeNone, RecomputeSelective or RecomputeFull
	// Mesh lists, per dimension, the axis shares it occupies, innermost first.
	// An empty Mesh means "not placed yet": Place fills it with the default placement.
	Mesh [NumDims][]Share
}

// Workload is what one training step processes.
type Workload struct {
	// Batch is the global batch in sequences per step.
	Batch int
	// SeqLen is the sequence length in tokens.
	SeqLen int
}

// Tokens returns the tokens per step.
func (w Workload) Tokens() int { return w.Batch * w.SeqLen }
