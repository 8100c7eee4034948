package cost

import (
	"github.com/meshplan/meshplan/space"
	"math"
	"testing"

	"github.com/meshplan/meshplan/profiles"
)

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// TestCollectiveBookExamples pins the collective cost model to the worked
// examples of the scaling book, with Efficiency 1. Convention: Bytes is the
// full array over the collective's axes (still sharded over the others);
// W_uni is one ICI link one way; a wraparound ring takes ⌈(n-1)/2⌉ shard
// steps (= V/(2·W_uni) = V/W_ici for even n), a line n-1.
func TestCollectiveBookExamples(t *testing.T) {
	y4 := space.Group{Axis: tpuAxis("y", 4, false), Size: 4, Whole: true}
	y4wrap := space.Group{Axis: tpuAxis("y", 4, true), Size: 4, Whole: true}
	v4 := func(n string) space.Group { return space.Group{Axis: tpuAxis(n, 4, true), Size: 4, Whole: true} }
	nv := space.Group{Axis: profiles.Axis{Name: "gpu", Size: 8, Tier: profiles.NVLink, BandwidthBytesPerS: 450e9}, Size: 8, Whole: true}
	const B, D = 1024.0, 4096.0
	for _, tc := range []struct {
		name   string
		got    float64
		wantS  float64
		relTol float64
	}{
		// [SB-SHARD] v5e 8x4, AllGather over the 4-axis of bf16[2048, 8192]:
		// 560 µs without wraparound, 377 µs with (book; exact even-n value 373 µs).
		{"v5e AG no wrap", AllGatherSeconds(2*2048*8192, []space.Group{y4}), 560e-6, 0.01},
		{"v5e AG wrap", AllGatherSeconds(2*2048*8192, []space.Group{y4wrap}), 377e-6, 0.015},
		// [SB-SHARD] a 32 kB shard is latency-bound: 3 hops × 1 µs.
		{"v5e AG latency-bound", AllGatherSeconds(4*32e3, []space.Group{y4}), 3e-6, 0.01},
		// [SB-SHARD] quiz, v4 4x4x4 torus, bf16 A[B_X, D_Y], B=1024, D=4096:
		// AllGather_X moves [B, D_Y] = 2BD/4 bytes: 23.3 µs.
		{"v4 AG_X", AllGatherSeconds(2*B*D/4, []space.Group{v4("x")}), 23.3e-6, 0.01},
		// AllGather_XY moves [B, D] = 2BD bytes over two axes, bandwidths add: 46.6 µs.
		{"v4 AG_XY", AllGatherSeconds(2*B*D, []space.Group{v4("x"), v4("y")}), 46.6e-6, 0.01},
		// AllReduce_Z of [B_X, D_Y]{U_Z}: 2BD/16 bytes, 2V/W_ici: 11.6 µs.
		{"v4 AR_Z", AllReduceSeconds(2*B*D/16, []space.Group{v4("z")}), 11.6e-6, 0.01},
		// [SB-GPU] 8xH100 AllGather of bf16[1024, 16384]: S(N-1)/(N·W) = 65 µs.
		{"8xH100 AG", AllGatherSeconds(2*1024*16384, []space.Group{nv}), 65.2e-6, 0.01},
		// AllToAll on a ring is a quarter of the AllGather ([SB-SHARD]).
		{"v4 A2A_X", AllToAllSeconds(2*B*D/4, []space.Group{v4("x")}), 23.3e-6 / 4, 0.01},
		// Switched AllToAll: S(N-1)/(N²W) (docs/formulas.md §4.4).
		{"8xH100 A2A", AllToAllSeconds(2*1024*16384, []space.Group{nv}), 65.2e-6 / 8, 0.01},
	} {
		if !near(tc.got, tc.wantS, tc.relTol) {
			t.Errorf("%s: got %.4g s, want %.4g s", tc.name, tc.got, tc.wantS)
		}
	}
}

// TestCollectiveHierarchical checks the two-tier GPU form (docs/formulas.md §4.4-4.5):
// a data-parallel group of 8 GPUs per node over 16 nodes moves S/8 per GPU
// through its own NIC, the book's S/W_node with W_node = 8·W_nic.
func TestCollectiveHierarchical(t *testing.T) {
	nv := space.Group{Axis: profiles.Axis{Name: "gpu", Size: 8, Tier: profiles.NVLink, BandwidthBytesPerS: 450e9}, Size: 8, Whole: true}
	ib := space.Group{Axis: profiles.Axis{Name: "node", Size: 16, Tier: profiles.InfiniBand, BandwidthBytesPerS: 50e9}, Size: 16, Whole: true}
	const S = 1e9
	want := S*7/8/450e9 + S/8*15/16/50e9
	if got := AllGatherSeconds(S, []space.Group{nv, ib}); !near(got, want, 1e-9) {
		t.Errorf("hierarchical AG: got %g, want %g", got, want)
	}
	// One GPU per node (tp fills the node): the NIC carries S·(n-1)/n.
	if got, want := ReduceScatterSeconds(S, []space.Group{ib}), S*15/16/50e9; !near(got, want, 1e-9) {
		t.Errorf("cross-node RS: got %g, want %g", got, want)
	}
	if got, want := AllReduceSeconds(S, []space.Group{ib}), 2*S*15/16/50e9; !near(got, want, 1e-9) {
		t.Errorf("cross-node AR: got %g, want %g", got, want)
	}
	// A part of a wraparound axis is a line: a 4-chip share of a 16-ring.
	part := space.Group{Axis: tpuAxis("x", 16, true), Size: 4}
	if got, want := AllGatherSeconds(4e6, []space.Group{part}), 3*1e6/4.5e10; !near(got, want, 1e-9) {
		t.Errorf("sub-ring AG: got %g, want %g", got, want)
	}
	if got, want := SendRecvSeconds(1e6, ib), 1e6/50e9; !near(got, want, 1e-9) {
		t.Errorf("send: got %g, want %g", got, want)
	}
	// An AllToAll over 8 GPUs x 16 nodes: each GPU's buffer S/128 moves
	// once per level, 7/8 of it over NVLink and 15/16 of it through its NIC;
	// the network leg is the book's S(M-1)/(M²·W_node) with W_node = 8·W_nic.
	a2a := S/128*7/8/450e9 + S/128*15/16/50e9
	if got := AllToAllSeconds(S, []space.Group{nv, ib}); !near(got, a2a, 1e-9) {
		t.Errorf("hierarchical AllToAll: got %g, want %g", got, a2a)
	}
	if book := S * 15 / (16 * 16 * 8 * 50e9); !near(a2a-S/128*7/8/450e9, book, 1e-9) {
		t.Errorf("network leg %g, book %g", a2a-S/128*7/8/450e9, book)
	}
}

// TestLinModel checks that the per-role-set linear models used by Evaluate
// agree with gatherSeconds and allToAllSeconds.
func TestLinModel(t *testing.T) {
	nv := space.Group{Axis: profiles.Axis{Name: "gpu", Size: 8, Tier: profiles.NVLink, BandwidthBytesPerS: 450e9, LatencySeconds: 3e-6, Efficiency: 0.8}, Size: 8, Whole: true}
	ib := space.Group{Axis: profiles.Axis{Name: "node", Size: 16, Tier: profiles.InfiniBand, BandwidthBytesPerS: 50e9, LatencySeconds: 5e-6}, Size: 16, Whole: true}
	x := space.Group{Axis: tpuAxis("x", 16, true), Size: 16, Whole: true}
	y := space.Group{Axis: tpuAxis("y", 8, false), Size: 4}
	dcn := space.Group{Axis: profiles.Axis{Name: "slice", Size: 4, Tier: profiles.DCN, BandwidthBytesPerS: 3.125e9, LatencySeconds: 10e-6}, Size: 4, Whole: true}
	for _, gs := range [][]space.Group{{nv}, {ib}, {nv, ib}, {x}, {x, y}, {x, y, dcn}, {y}} {
		for _, v := range []float64{1e3, 1e5, 1e7, 1e9} {
			ag, a2a := linModelOf(gs, false, false), linModelOf(gs, true, false)
			if got, want := ag.at(v), gatherSeconds(v, gs); !near(got, want, 1e-9) {
				t.Errorf("AG %v bytes %g: lin %g, direct %g", gs, v, got, want)
			}
			if got, want := a2a.at(v), allToAllSeconds(v, gs); !near(got, want, 1e-9) {
				t.Errorf("A2A %v bytes %g: lin %g, direct %g", gs, v, got, want)
			}
		}
	}
}

// TestRoutingUnder pins the share of routed copies that cross the network
// under each dispatcher (routing.under), worked by hand. Qwen3-30B-A3B's
// 8 of 128 experts over 2 nodes of 64: a token misses a node with
// probability C(64,8)/C(128,8) = prod_{i<8} (64-i)/(128-i) = 0.0030959,
// so DeepEP and HybridEP send it to 2·(1 - 0.0030959) = 1.99381 nodes:
// 0.249226 of its 8 copies; over 4 nodes of 32, C(96,8)/C(128,8) =
// 0.0927473, 4·0.9072527/8 = 0.453626. The plain AllToAll sends all 8;
// the default keeps the model's routing (DeepSeek-V3's group limit: 0.5
// over 8 nodes, TestRoutingNetScale; none without one).
func TestRoutingUnder(t *testing.T) {
	qwen := routing{copies: 8, experts: 128, topK: 8}
	v3 := routing{copies: 8, groups: 8, limit: 4, experts: 256, topK: 8}
	for _, tc := range []struct {
		name       string
		r          routing
		dispatcher string
		nets       float64
		want       float64
	}{
		{"qwen default", qwen, "", 2, 1},
		{"qwen alltoall", qwen, space.DispatcherAllToAll, 2, 1},
		{"qwen deepep 2 nodes", qwen, space.DispatcherDeepEP, 2, 0.24922603393080198},
		{"qwen hybridep 4 nodes", qwen, space.DispatcherHybridEP, 4, 0.45362636555321256},
		{"qwen deepep one node", qwen, space.DispatcherDeepEP, 1, 1},
		{"v3 default", v3, "", 8, 0.5},
		{"v3 deepep keeps the group limit", v3, space.DispatcherDeepEP, 8, 0.5},
		{"v3 alltoall", v3, space.DispatcherAllToAll, 8, 1},
		{"dense", routing{}, space.DispatcherDeepEP, 2, 1},
	} {
		if got := tc.r.under(tc.dispatcher).netScale(tc.nets); !near(got, tc.want, 1e-12) {
			t.Errorf("%s: netScale = %.9g, want %.9g", tc.name, got, tc.want)
		}
	}
}

// TestRoutingNetScale pins the share of routed copies that cross the
// network under group-limited routing ([DSV3 §2.1.2], docs/formulas.md
// §3.5), worked by hand: DeepSeek-V3's 8 copies from 4 of 8 groups over 8
// nodes (one group each) reach 8·(1 - C(7,4)/C(8,4)) = 4 nodes: 0.5 of
// the copies; over 2 nodes of 4 groups, 2·(1 - 1/70) = 1.971 nodes: 0.246.
func TestRoutingNetScale(t *testing.T) {
	v3 := routing{copies: 8, groups: 8, limit: 4}
	for _, tc := range []struct {
		name string
		r    routing
		nets float64
		want float64
	}{
		{"v3 over 8 nodes", v3, 8, 0.5},
		{"v3 over 2 nodes", v3, 2, 2 * (1 - 1.0/70) / 8},
		{"within a node", v3, 1, 1},
		{"no limit", routing{copies: 2}, 8, 1},
		{"groups span nodes", v3, 16, 1},
		{"one group per token", routing{copies: 8, groups: 8, limit: 1}, 8, 1.0 / 8},
	} {
		if got := tc.r.netScale(tc.nets); !near(got, tc.want, 1e-12) {
			t.Errorf("%s: netScale = %.6g, want %.6g", tc.name, got, tc.want)
		}
	}
	// The MoE AllToAll's network leg scales by it; NVLink's does not.
	nv := space.Group{Axis: profiles.Axis{Name: "gpu", Size: 8, Tier: profiles.NVLink, BandwidthBytesPerS: 200e9}, Size: 8, Whole: true}
	ib := space.Group{Axis: profiles.Axis{Name: "node", Size: 8, Tier: profiles.InfiniBand, BandwidthBytesPerS: 50e9}, Size: 8, Whole: true}
	const S = 64e9 // 1 GB per GPU
	m := scaledLinModel([]space.Group{nv, ib}, true, false, 0.5)
	if got, want := m.at(S)-m.lat-m.ringLat, 1e9*7/8/200e9+0.5*1e9*7/8/50e9; !near(got, want, 1e-9) {
		t.Errorf("routed AllToAll bandwidth time %g, want %g", got, want)
	}
}
