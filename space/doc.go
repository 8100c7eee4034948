// Package space describes parallel training strategies: a Strategy (the
// parallel degrees, the per-replica knobs and which mesh axes carry which
// parallelism), its string form, its validity for a model, cluster and
// workload, its placement on the cluster's mesh, and the enumeration of all
// strategies as a mixed-radix Space for the search.
//
// # The strategy string
//
// A strategy is written as comma-separated key=value items, every key
// optional (default in brackets):
//
//	dp [1]            pure data-parallel replicas
//	zero [0]          ZeRO stage across dp: 1 shards optimizer state, 2 also gradients
//	fsdp [1]          fully sharded data parallel (ZeRO-3) degree
//	tp [1]            tensor parallel degree
//	sp [tp>1]         Megatron sequence parallelism inside the tp group
//	cp [1]            context parallel degree (ring attention)
//	pp [1]            pipeline stages
//	first [even]      decoder layers on the first pipeline stage (Split)
//	last [even]       decoder layers on the last pipeline stage (Split)
//	ep [1]            expert parallel degree, carved out of the dp*fsdp chips (and tp's, for etp=1 under sp)
//	mb [1]            micro-batch size in sequences per data-parallel replica
//	schedule [1f1b]   gpipe, 1f1b, interleaved, zb-h1, zb-v, dualpipe or dualpipev (Schedules)
//	v [1]             virtual stages per pipeline rank (interleaved only)
//	recompute [none]  none, selective or full activation checkpointing
//	mesh [by the tool] which mesh axes carry which parallelism
//
// For example "tp=8,pp=16,dp=128,mb=1,schedule=interleaved,v=2". Keys are
// case-insensitive, unknown or repeated keys are errors, and
// dp*fsdp*tp*cp*pp must equal the chip count. Each of the dp*fsdp replicas
// takes batch/(dp*fsdp) sequences per step in batch/(dp*fsdp*mb)
// micro-batches. [Strategy.String] prints the canonical form: keys in the
// order above, only those that differ from their default, and the mesh
// whenever the strategy is placed; [Parse] reads it back exactly.
//
// # The mesh notation
//
// The mesh value lists, per parallel dimension, the cluster axes it
// occupies: dimensions separated by ";", axes by ".", e.g. "tp:z;fsdp:x.y"
// on a TPU torus with axes x, y, z. A dimension that takes only part of an
// axis writes the share size after "*": on a GPU cluster with axes gpu (8
// per node) and node, "tp:gpu;pp:node*16;dp:node*8" puts tensor parallelism
// inside the NVLink domain and splits the nodes into 16 pipeline stages of
// 8 data-parallel replicas. A plain axis name is the whole axis.
//
// The shares on every axis multiply to exactly the axis size, every share
// size divides its axis size, and a dimension's shares multiply to its
// degree. Several dimensions sharing an axis lie in the fixed order TP, CP,
// FSDP, PP, DP: the first holds a contiguous block of the axis (stride 1),
// the next the blocks of those, and so on. A share that is only a factor of
// an axis is a contiguous sub-ring without wraparound (its collectives run
// one way round a line) unless it spans the whole axis; a whole axis keeps
// the axis's wraparound. EP is not an extra set of chips: its shares lie
// inside the DP and FSDP shares of the same axes, on their innermost part
// by default.
//
// # Placement rules
//
// When the mesh is omitted, [Strategy.Place] chooses it, following the
// usual rules of thumb (tensor parallelism on the fastest tier, pipeline
// on the slowest, data parallelism outermost): the dimensions are laid out
// in the order TP, CP, FSDP, PP, DP, each taking the free part of the axes
// innermost (fastest) first. A dimension whose degree equals the size of an
// untouched axis on the fastest tier with free chips takes that whole axis,
// keeping its wraparound (tp=8 on a 4x4x8 v5p torus takes the 8-long
// axis); otherwise it takes from each axis
// in turn the largest factor that divides what is left of its degree. Thus
// on 128 nodes of 8 H100s, tp=8,pp=4,dp=32 gives "tp:gpu;pp:node*4;dp:node*32".
// Placement fails, with an error naming the degrees or the axes, when the
// degrees do not multiply to the chip count or explicit shares conflict.
//
// # Tables
//
// The parallel dimensions ([Dim]: dp, fsdp, tp, cp, pp, ep) are the rows of
// one table (dims.go): each row's key, its place in the fill order, the
// dimensions it is carved out of (ep: fsdp, then dp, then tp for whole
// experts under sp) and its [Role], what it shards of the layer program
// ([ClassRoles]). EP's carving adds the expert data-parallel roles edp and
// efsdp and tp's expert part tpe. [Strategy.Resolve] resolves a placed
// strategy into a [Mesh] (each role's axis groups and degree, the
// pipeline's groups) once, for the cost and memory models; the carving rule
// (EP takes each axis's fsdp share first, then its dp share, then its tp
// share for whole experts under sp) lives there only. The pipeline
// schedules ([Schedule]: 1f1b, gpipe, interleaved, zb-h1, zb-v, dualpipe,
// dualpipev) are the rows of another table
// (schedule.go): each gives its bubble (weights of the forward,
// input-gradient, weight-gradient and overlapped passes, [Bubble]), the
// micro-batches each rank holds in flight, whether it takes virtual stages
// or runs fixed chunks, where a rank's layers are ([Placement]: linear,
// V-shaped, mirrored with two copies of the parameters), what it overlaps
// ([Overlap]), what it needs of pp and the micro-batches, and whether the
// search lists it unasked. [StageLayers] splits the layers over
// the ranks for both models; a [Split] (first, last) sets the end ranks'
// layers, the middle ranks sharing the rest evenly. docs/layers.md says what it takes to add a
// dimension or a schedule.
//
// # Validity
//
// [Strategy.Validate] checks a strategy against a model, a cluster and a
// workload and reports every rule it breaks at once; see its documentation
// for the list. Notable choices: tp may exceed the key/value heads when it
// is a multiple of them (each KV head is then replicated tp/kv_heads
// times); layers need not divide evenly across pipeline stages
// ([StageLayers], [Split]) nor a rank's layers into its v chunks
// ([Split.ChunkLayers]); ZeRO stages above 0 need dp > 1.
//
// # Enumeration
//
// [New] builds a [Space]: the product of a layout gene (degrees, ep and
// placement, precomputed with the model-level checks applied), a
// micro-batch gene, a schedule gene (every schedule the search lists
// unasked, with interleaving at every v the layers allow, each with the
// default split and, when pp does not divide the layers, the few explicit
// ones [Splits] offers for that pp, and the
// zero-bubble and DualPipe schedules when a fix or the framework names
// them), a recompute gene and a ZeRO gene.
// On clusters with several link tiers, layouts with tensor parallelism
// beyond the fastest tier, or FSDP or CP over DCN, are left out unless a
// fix asks for them (see [New]). [Space.Decode] turns a gene vector into a placed Strategy without
// allocating and reports whether it is valid; [Space.Encode] inverts it.
package space
