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
	// Size is the number of chips of that axis the dimension spans. Parse
	// leaves it 0 for a share written without "*k" (the whole axis, size
	// not yet known); Place, Decode and Groups resolve it against the
	// cluster.
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

// String returns the dimension's key in the strategy string: "dp", "fsdp",
// "tp", "cp", "pp" or "ep".
func (d Dim) String() string {
	switch d {
	case DP:
		return "dp"
	case FSDP:
		return "fsdp"
	case TP:
		return "tp"
	case CP:
		return "cp"
	case PP:
		return "pp"
	case EP:
		return "ep"
	}
	return "dim(" + itoa(int(d)) + ")"
}

// fillOrder is the order in which the default placement gives mesh axes to
// the dimensions, innermost (fastest) axes first; it is also the order in
// which the mesh value of the strategy string lists them, and the order of
// the dimensions' shares inside one axis (the first holds the contiguous,
// innermost part).
func fillOrder() [NumDims]Dim { return [NumDims]Dim{TP, CP, FSDP, PP, DP, EP} }

// Defaults returns the strategy with every key at its contract default: all
// degrees 1, zero 0, sp false, mb 1, schedule 1f1b, v 1, recompute none and
// an empty (unplaced) mesh.
func Defaults() Strategy {
	return Strategy{DP: 1, FSDP: 1, TP: 1, CP: 1, PP: 1, EP: 1, MB: 1,
		Schedule: OneFOneB, V: 1, Recompute: RecomputeNone}
}

// Degree returns the degree of dimension d (DP, FSDP, TP, CP, PP or EP), or
// 0 for an unknown dimension.
func (s Strategy) Degree(d Dim) int {
	switch d {
	case DP:
		return s.DP
	case FSDP:
		return s.FSDP
	case TP:
		return s.TP
	case CP:
		return s.CP
	case PP:
		return s.PP
	case EP:
		return s.EP
	}
	return 0
}

// Chips returns dp*fsdp*tp*cp*pp, the number of chips the strategy occupies
// (saturating at the largest int instead of overflowing).
func (s Strategy) Chips() int {
	return mulSat(mulSat(mulSat(mulSat(s.DP, s.FSDP), s.TP), s.CP), s.PP)
}

// Replicas returns dp*fsdp, the number of data-parallel replicas the global
// batch is split over.
func (s Strategy) Replicas() int { return mulSat(s.DP, s.FSDP) }

// NumMicrobatches returns batch/(dp*fsdp*mb), the micro-batches each
// data-parallel replica processes per step (gradient accumulation steps when
// pp is 1), or 0 when the numbers do not divide (Validate says why).
func (s Strategy) NumMicrobatches(w Workload) int {
	r := mulSat(s.Replicas(), s.MB)
	if r <= 0 || w.Batch <= 0 || w.Batch%r != 0 {
		return 0
	}
	return w.Batch / r
}

// LayersPerStage returns the number of transformer layers on the busiest
// pipeline rank: ceil(layers/pp). Layers need not divide evenly: stages
// differ by at most one layer and the busiest one sets the pace. With the
// interleaved schedule each rank holds v chunks of floor or ceil of
// layers/(pp*v) layers, assigned so that the ranks stay balanced, which
// gives the same maximum. The first stage also carries the input embedding
// and the last the final norm and output layer; the cost and memory models
// add those on top of this count.
func (s Strategy) LayersPerStage(layers int) (max int) {
	if s.PP <= 1 || layers <= 0 {
		return layers
	}
	return (layers + s.PP - 1) / s.PP
}

// mulSat multiplies two ints, saturating at the largest int; it returns 0
// when either is not positive.
func mulSat(a, b int) int {
	const maxInt = int(^uint(0) >> 1)
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > maxInt/b {
		return maxInt
	}
	return a * b
}
