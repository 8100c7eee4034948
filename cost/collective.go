package cost

import (
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Collective operation names, as used in Collective.Op.
const (
	AllGather     = "AllGather"
	ReduceScatter = "ReduceScatter"
	AllReduce     = "AllReduce"
	AllToAll      = "AllToAll"
	SendRecv      = "SendRecv"
)

// effBandwidth is the achieved one-way bandwidth of axis a in bytes/s:
// BandwidthBytesPerS times the axis Efficiency (1 when unset).
func effBandwidth(a profiles.Axis) float64 {
	e := a.Efficiency
	if e <= 0 || e > 1 {
		e = 1
	}
	return a.BandwidthBytesPerS * e
}

// tierKind sorts axes into the three cost models of docs/formulas.md §4.
type tierKind int

const (
	kindRing     tierKind = iota // TPU ICI ring or line [SB-SHARD], docs/formulas.md §4.3
	kindSwitched                 // NVLink domain behind NVSwitch [SB-GPU], docs/formulas.md §4.4
	kindNetwork                  // IB / Ethernet / DCN, one NIC share per chip, docs/formulas.md §4.4-4.5
)

// kindOf reads tier t's fabric from its row (profiles); an axis without a
// tier is a ring, as ICI.
func kindOf(t profiles.Tier) tierKind {
	if t == "" {
		return kindRing
	}
	switch t.Fabric() {
	case profiles.FabricRing:
		return kindRing
	case profiles.FabricSwitch:
		return kindSwitched
	default:
		return kindNetwork
	}
}

// ringHops is the number of sequential shard steps of a ring AllGather over
// one group: ⌈(n-1)/2⌉ on a bidirectional ring with wraparound (each chip
// receives half of the n-1 shards from either side), n-1 on a line without it
// (the end chip receives every shard from one side). [SB-SHARD]; for even n
// the wraparound form is exactly the book's V/(2·W_uni) = V/W_ici.
func ringHops(g space.Group) int {
	n := g.Size
	if g.Whole && g.Axis.Wraparound && n > 2 {
		return n / 2 // ⌈(n-1)/2⌉
	}
	return n - 1
}

// ringGatherSeconds is the bandwidth and latency terms of an AllGather of a
// full array of v bytes over one ring group: hops·(v/n)/W_uni and hops·T_hop.
func ringGatherSeconds(v float64, g space.Group) (bw, lat float64) {
	h := float64(ringHops(g))
	return h * v / float64(g.Size) / effBandwidth(g.Axis), h * g.Axis.LatencySeconds
}

// ringAllToAllSeconds is the bisection bound of an AllToAll of a full array of
// v bytes over one ring group: a quarter of v crosses the middle each way, over
// one link on a line (v/(4·W_uni)) or two on a ring (v/(8·W_uni)), i.e. about a
// quarter of the AllGather time ([SB-SHARD], docs/hardware.md §3.2).
func ringAllToAllSeconds(v float64, g space.Group) (bw, lat float64) {
	n := float64(g.Size)
	cross := v / 4 // (n/2)² pairs × v/n² bytes, for even n
	if g.Size%2 == 1 {
		cross = v * (n*n - 1) / (4 * n * n)
	}
	links := 1.0
	if g.Whole && g.Axis.Wraparound && g.Size > 2 {
		links = 2
	}
	_, lat = ringGatherSeconds(v, g)
	return cross / (links * effBandwidth(g.Axis)), lat
}

// gatherSeconds is the AllGather (or, by transposition, ReduceScatter) time of
// a full array of v bytes over groups, in the hierarchical form:
//
//   - ring (ICI) groups run at once, their bandwidths add ([SB-SHARD]
//     "multi-axis gather": V/(W·k)), so their bandwidth terms combine as a
//     harmonic sum; the phase takes max(latency floor, bandwidth term)
//     (T = max(T_min·Σ hops, V/(W·k)), docs/formulas.md §4.3);
//   - switched (NVLink) groups: n chips, T = v·(n-1)/n / W_gpu + (n-1)·α
//     (docs/formulas.md §4.4, α-β form of §4.1);
//   - each network level j (IB, Ethernet, DCN), innermost first: every chip of
//     the group sends through its own NIC share, so only v/g_j bytes per chip
//     cross the level, where g_j is the number of group chips inside one
//     instance of the level (the product of all inner group sizes):
//     T_j = (v/g_j)·(n_j-1)/n_j / W_nic + (n_j-1)·α_j. With g = 8 GPUs per
//     node this is the book's cross-node v/W_node with W_node = 8·W_nic
//     (docs/formulas.md §4.4-4.5, docs/hardware.md §3.2 hierarchical AllReduce).
//
// The phases add (docs/formulas.md §4.5: the sum; their max is the optimistic bound).
func gatherSeconds(v float64, gs []space.Group) float64 {
	return phasedSeconds(v, gs, false)
}

// allToAllSeconds is the AllToAll time of a full array of v bytes (the sum of
// every chip's send buffer) over groups of N chips in all, one phase per
// level, each moving every chip's buffer of v/N bytes once along its level
// (the hierarchical AllToAll of DeepEP and NCCL's PXN: a level's links carry
// only the traffic that changes that level's coordinate):
//
//   - ring groups together: the bisection bound of ringAllToAllSeconds on
//     the array of one ring instance, v·R/N for R ring chips, bandwidths
//     adding over several axes;
//   - a switched or network level of n_j chips: every chip sends the
//     (n_j-1)/n_j of its buffer that changes level through its own link:
//     T = v·(n_j-1)/(N·n_j·W); with one level N = n_j and this is
//     v·(n-1)/(n²·W) (docs/formulas.md §4.4), and across M nodes of g GPUs
//     the book's S(M-1)/(M²·W_node) with W_node = g·W_nic (no
//     hierarchical gain on the network, docs/hardware.md §5.4).
func allToAllSeconds(v float64, gs []space.Group) float64 {
	return phasedSeconds(v, gs, true)
}

// phasedSeconds adds the phases of a gather (a2a false) or an AllToAll (a2a
// true) of v bytes over gs: the ring axes together, then each switched and
// network level innermost first, as documented on gatherSeconds and
// allToAllSeconds.
func phasedSeconds(v float64, gs []space.Group, a2a bool) float64 {
	if v <= 0 {
		return 0
	}
	var (
		ringInvBW, ringLat float64
		anyRing            bool
		t                  float64
		inner              = 1.0
	)
	ringV := v
	if a2a {
		ringV = v * ringChips(gs) / groupChips(gs)
	}
	for _, g := range gs {
		if g.Size <= 1 || kindOf(g.Axis.Tier) != kindRing {
			continue
		}
		var bw, lat float64
		if a2a {
			bw, lat = ringAllToAllSeconds(ringV, g)
		} else {
			bw, lat = ringGatherSeconds(v, g)
		}
		ringInvBW += 1 / bw
		ringLat += lat
		anyRing = true
		inner *= float64(g.Size)
	}
	if anyRing {
		t += max(1/ringInvBW, ringLat)
	}
	for _, kind := range [...]tierKind{kindSwitched, kindNetwork} {
		for _, g := range gs {
			if g.Size <= 1 || kindOf(g.Axis.Tier) != kind {
				continue
			}
			n := float64(g.Size)
			share := (n - 1) / n // gather: (n-1)/n of the bytes cross [SB-GPU]
			switch {
			case a2a:
				share /= groupChips(gs) // AllToAll: (n-1)/n of each chip's v/N [SB-GPU]
			case kind == kindNetwork:
				share /= inner // each NIC carries its chip's share only
			}
			t += v*share/effBandwidth(g.Axis) + (n-1)*g.Axis.LatencySeconds
			inner *= n
		}
	}
	return t
}

// routing is a mixture of experts' routing as it shapes the dispatch and
// combine: copies routed copies of each token (top_k times the capacity
// factor), and group-limited routing over groups expert groups, at most
// limit per token (model.MoE), of experts experts, topK per token.
type routing struct {
	copies        float64
	groups, limit int
	experts, topK int
}

// under is the routing r as dispatcher d (space.Strategy.Dispatcher) sends
// it over the network. The plain AllToAll sends every routed copy
// (Megatron-LM@d98e8a64 megatron/core/transformer/moe/token_dispatcher.py,
// MoEAlltoAllTokenDispatcher: the permuted tokens, one row per expert
// choice): no limit. DeepEP and HybridEP send a token once to each node
// holding one of its experts over RDMA, which forwards it over NVLink
// ([DSV3 §3.2.2]; deepseek-ai/DeepEP@dd758caf README.md: NVLink intranode,
// RDMA internode; Megatron-LM@d98e8a64
// megatron/core/transformer/moe/fused_a2a.py): each expert a group of its
// own, topK of them per token, where the routing sets no tighter limit.
// The default ("") keeps r: node-limited dispatch under group-limited
// routing only, as DeepSeek-V3's own system.
func (r routing) under(d string) routing {
	switch {
	case d == space.DispatcherAllToAll:
		r.groups, r.limit = 0, 0
	case space.NodeDedup(d) && r.limit <= 0 && r.experts > 0 && r.topK > 0:
		r.groups, r.limit = r.experts, r.topK
	}
	return r
}

// netScale is the fraction of the routed copies that cross the network
// levels of an AllToAll spanning nets network instances (nodes): with
// group-limited routing and the groups laid out over the instances, a
// token goes to at most limit groups, and DeepSeek-V3's dispatch sends it
// once to each instance it reaches, whose NVLink then fans it out to the
// experts there ([DSV3 §2.1.2, §3.2.2]): of nets instances holding
// groups/nets groups each, a token's limit groups hit
// nets·(1 - C(groups - groups/nets, limit)/C(groups, limit)) of them on
// average, against copies without the limit (docs/formulas.md §3.5). It
// is 1 without a limit, within one instance, or when a group spans
// several instances.
func (r routing) netScale(nets float64) float64 {
	n := int(nets)
	if r.limit <= 0 || r.groups <= 0 || n <= 1 || r.groups%n != 0 || r.copies <= 0 {
		return 1
	}
	per := r.groups / n
	// P(an instance holds none of the token's groups) = C(G-per, L)/C(G, L).
	miss := 1.0
	for i := 0; i < r.limit; i++ {
		left := float64(r.groups - per - i)
		if left <= 0 {
			miss = 0
			break
		}
		miss *= left / float64(r.groups-i)
	}
	hit := float64(n) * (1 - miss)
	return min(1, min(hit, r.copies)/r.copies)
}

// networkChips is the number of network (IB, Ethernet, DCN) instances the
// groups gs span: the product of their network group sizes.
func networkChips(gs []space.Group) float64 {
	n := 1.0
	for _, g := range gs {
		if kindOf(g.Axis.Tier) == kindNetwork {
			n *= float64(max(g.Size, 1))
		}
	}
	return n
}

// groupChips is the number of chips of groups gs.
func groupChips(gs []space.Group) float64 {
	n := 1.0
	for _, g := range gs {
		n *= float64(max(g.Size, 1))
	}
	return n
}

// ringChips is the number of chips of the ring (ICI) groups of gs.
func ringChips(gs []space.Group) float64 {
	n := 1.0
	for _, g := range gs {
		if kindOf(g.Axis.Tier) == kindRing {
			n *= float64(max(g.Size, 1))
		}
	}
	return n
}

// linModelOf writes gatherSeconds (or allToAllSeconds when a2a) over gs as
// a linModel; the two must stay in step (TestLinModel checks them). flat
// replaces the latency of the switched and network levels by that of one
// flat ring over all their chips: (n-1) steps at the slowest level's
// latency (NCCL's ring over nodes without hierarchy, docs/formulas.md §4.1).
func linModelOf(gs []space.Group, a2a, flat bool) linModel {
	return scaledLinModel(gs, a2a, flat, 1)
}

// scaledLinModel is linModelOf with the network levels' bytes scaled by
// netScale (routing.netScale for the MoE dispatch and combine).
func scaledLinModel(gs []space.Group, a2a, flat bool, netScale float64) linModel {
	var m linModel
	var ringInv float64
	inner := 1.0
	for _, g := range gs {
		if g.Size <= 1 || kindOf(g.Axis.Tier) != kindRing {
			continue
		}
		var bw, lat float64
		if a2a {
			bw, lat = ringAllToAllSeconds(1, g)
		} else {
			bw, lat = ringGatherSeconds(1, g)
		}
		ringInv += 1 / bw
		m.ringLat += lat
		inner *= float64(g.Size)
	}
	chips := groupChips(gs)
	if ringInv > 0 {
		m.ringPerByte = 1 / ringInv
		if a2a {
			m.ringPerByte *= ringChips(gs) / chips
		}
	}
	for _, g := range gs {
		if g.Size <= 1 || kindOf(g.Axis.Tier) != kindSwitched {
			continue
		}
		n := float64(g.Size)
		if a2a {
			m.perByte += (n - 1) / (n * chips * effBandwidth(g.Axis))
		} else {
			m.perByte += (n - 1) / n / effBandwidth(g.Axis)
		}
		m.lat += (n - 1) * g.Axis.LatencySeconds
		inner *= n
	}
	for _, g := range gs {
		if g.Size <= 1 || kindOf(g.Axis.Tier) != kindNetwork {
			continue
		}
		n := float64(g.Size)
		if a2a {
			m.perByte += netScale * (n - 1) / (n * chips * effBandwidth(g.Axis))
		} else {
			m.perByte += netScale * (n - 1) / (inner * n * effBandwidth(g.Axis))
		}
		m.lat += (n - 1) * g.Axis.LatencySeconds
		inner *= n
	}
	if flat {
		chips, alpha := 1.0, 0.0
		for _, g := range gs {
			if g.Size > 1 && kindOf(g.Axis.Tier) != kindRing {
				chips *= float64(g.Size)
				alpha = max(alpha, g.Axis.LatencySeconds)
			}
		}
		m.lat = (chips - 1) * alpha
	}
	return m
}

// AllGatherSeconds is the time to AllGather an array of bytes (the full,
// gathered size) over the axis groups; see gatherSeconds for the model
// ([SB-SHARD], [SB-GPU], docs/formulas.md §4.3-4.5).
func AllGatherSeconds(bytes float64, groups []space.Group) float64 {
	return gatherSeconds(bytes, groups)
}

// ReduceScatterSeconds is the time to ReduceScatter an array of bytes (the full,
// unreduced size) over the groups: the transpose of an AllGather, same cost
// ([SB-SHARD] "More about the ReduceScatter", docs/formulas.md §3.0).
func ReduceScatterSeconds(bytes float64, groups []space.Group) float64 {
	return gatherSeconds(bytes, groups)
}

// AllReduceSeconds is the time to AllReduce an array of bytes over the groups:
// ReduceScatter + AllGather, T = 2·T_AG ([SB-SHARD], docs/formulas.md §4.1 ring).
func AllReduceSeconds(bytes float64, groups []space.Group) float64 {
	return 2 * gatherSeconds(bytes, groups)
}

// AllToAllSeconds is the time of an AllToAll of an array of bytes (all chips'
// buffers together) over the groups; see allToAllSeconds ([SB-SHARD], [SB-GPU]).
func AllToAllSeconds(bytes float64, groups []space.Group) float64 {
	return allToAllSeconds(bytes, groups)
}

// SendRecvSeconds is the time of one point-to-point transfer of bytes (as sent
// by one chip) to a neighbour along group g: bytes/W + one hop latency
// (α-β model, docs/formulas.md §4.1; pipeline sends, docs/formulas.md §3.3).
func SendRecvSeconds(bytes float64, g space.Group) float64 {
	if bytes <= 0 {
		return 0
	}
	return bytes/effBandwidth(g.Axis) + g.Axis.LatencySeconds
}

// PipelineSendSeconds prices the sends between the stages of a pipeline
// laid out on groups (innermost first; stage i+1 is the next chip along
// the innermost group that has one, as the mesh numbers them): steady is
// one send on the slowest hop, which bounds every send once all stage
// boundaries send at once in the steady state; ramp is one micro-batch's
// walk over all pp-1 boundaries, each on the axis it crosses: group k's
// axis is crossed (g_k - 1)·Π_{j>k} g_j times (docs/formulas.md §3.3, §5).
func PipelineSendSeconds(bytes float64, groups []space.Group) (steady, ramp float64) {
	outer := 1
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i]
		if g.Size <= 1 {
			continue
		}
		t := SendRecvSeconds(bytes, g)
		steady = max(steady, t)
		ramp += float64((g.Size-1)*outer) * t
		outer *= g.Size
	}
	return steady, ramp
}
