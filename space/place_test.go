package space

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/profiles"
)

func TestPlaceDefault(t *testing.T) {
	tests := []struct {
		name string
		c    profiles.Cluster
		s    string
		want string // the mesh value after Place
	}{
		// tp=8 on the 4x4x8 torus takes the whole 8-long axis and keeps its wraparound.
		{"v5p-256 tp8", v5p256(), "tp=8,fsdp=16", "tp:z*8;fsdp:x*4.y*4"},
		{"v5p-256 tp4", v5p256(), "tp=4,fsdp=32", "tp:x*4;fsdp:y*4.z*8"},
		{"v5p-256 tp2", v5p256(), "tp=2,dp=64", "tp:x*2;dp:x*2.y*4.z*8"},
		{"v5p-256 tp16", v5p256(), "tp=16,pp=8", "tp:x*4.y*4;pp:z*8"},
		// Megatron placement: tp in the node, pp then dp across nodes, dp outermost.
		{"h100-1024", gpuCluster(1024), "tp=8,pp=4,dp=32", "tp:gpu*8;pp:node*4;dp:node*32"},
		{"h100-16384 405b", gpuCluster(16384), "tp=8,pp=16,dp=128", "tp:gpu*8;pp:node*16;dp:node*128"},
		{"h100-16 tp4 cp2 fsdp2", gpuCluster(16), "tp=4,cp=2,fsdp=2", "tp:gpu*4;cp:gpu*2;fsdp:node*2"},
		{"ep innermost", gpuCluster(16), "tp=2,fsdp=8,ep=4", "tp:gpu*2;fsdp:gpu*4.node*2;ep:gpu*4"},
		{"partial mesh", gpuCluster(16), "tp=2,dp=8,mesh=tp:node", "tp:node*2;dp:gpu*8"},
		{"explicit sorted", gpuCluster(16), "tp=16,mesh=tp:node.gpu", "tp:gpu*8.node*2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			before := s.String()
			p, err := s.Place(tt.c)
			if err != nil {
				t.Fatalf("Place(%q) error: %v", tt.s, err)
			}
			if got := meshString(&p.Mesh); got != tt.want {
				t.Errorf("Place(%q) mesh = %q, want %q", tt.s, got, tt.want)
			}
			if s.String() != before {
				t.Errorf("Place modified its receiver: %q -> %q", before, s.String())
			}
			// Placing a placed strategy changes nothing.
			if q, err := p.Place(tt.c); err != nil || q.String() != p.String() {
				t.Errorf("Place(Place(%q)) = %q, %v; want %q", tt.s, q.String(), err, p.String())
			}
		})
	}
}

func TestPlaceErrors(t *testing.T) {
	tests := []struct {
		c    profiles.Cluster
		s    string
		want string
	}{
		{gpuCluster(16), "tp=8", "cannot place dp*fsdp*tp*cp*pp = 8 on cluster h100-16 with 16 chips"},
		{gpuCluster(16), "tp=8,dp=2,mesh=tp:node*2.gpu*4;dp:node", "axis node has 2 chips but the mesh gives dp a share of 2 on top of 2"},
		{gpuCluster(16), "tp=8,dp=2,mesh=tp:rack", `which cluster h100-16 does not have (axes: gpu (8), node (2))`},
	}
	for _, tt := range tests {
		s, err := Parse(tt.s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Place(tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Place(%q) error = %v, want it to contain %q", tt.s, err, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	s, _ := Parse("tp=8,pp=4,dp=32")
	m, err := s.Resolve(gpuCluster(1024))
	if err != nil {
		t.Fatal(err)
	}
	check := func(gs []Group, what string, i int, axis string, size int, whole bool) {
		t.Helper()
		if i >= len(gs) {
			t.Fatalf("%s has %d groups, want more than %d", what, len(gs), i)
		}
		got := gs[i]
		if got.Axis.Name != axis || got.Size != size || got.Whole != whole {
			t.Errorf("%s[%d] = {%s %d %v}, want {%s %d %v}", what, i, got.Axis.Name, got.Size, got.Whole, axis, size, whole)
		}
	}
	check(m.Groups[RoleTP], "tp", 0, "gpu", 8, true)
	check(m.Pipeline, "pp", 0, "node", 4, false)
	check(m.Groups[RoleDP], "dp", 0, "node", 32, false)
	check(m.Groups[RoleEDP], "edp", 0, "node", 32, false)
	if len(m.Groups[RoleFSDP]) != 0 || len(m.Groups[RoleCP]) != 0 || len(m.Groups[RoleEP]) != 0 {
		t.Errorf("Resolve gave groups to degree-1 roles: %+v", m.Groups)
	}
	if m.Groups[RoleTP][0].Axis.Tier != profiles.NVLink {
		t.Errorf("tp axis tier = %q, want nvlink", m.Groups[RoleTP][0].Axis.Tier)
	}
	// A whole axis written without a size.
	w, _ := Parse("tp=8,fsdp=16,mesh=tp:z;fsdp:x.y")
	mw, err := w.Resolve(v5p256())
	if err != nil {
		t.Fatal(err)
	}
	gw := mw.Groups
	if len(gw[RoleFSDP]) != 2 || !gw[RoleTP][0].Whole || gw[RoleTP][0].Size != 8 || !gw[RoleFSDP][1].Whole {
		t.Errorf("Resolve(%q) = %+v", w, gw)
	}
}

// TestResolveCarve checks EP's carving out of FSDP and DP, axis by axis:
// FSDP first, then DP (issue: the ep share gpu*8 of dp=32,fsdp=2,ep=8 on
// 8x8 GPUs spans the fsdp share gpu*2 and part of the dp share gpu*4).
func TestResolveCarve(t *testing.T) {
	tests := []struct {
		s          string
		edp, efsdp int
		edpGroups  string
	}{
		{"dp=32,fsdp=2,ep=8", 8, 1, "node*8"},
		{"dp=32,fsdp=2,ep=2", 32, 1, "gpu*4.node*8"},
		{"dp=16,fsdp=4,ep=8", 8, 1, "node*8"},
		{"dp=8,fsdp=8,ep=8", 8, 1, "node*8"},
		{"dp=8,fsdp=8,ep=4", 8, 2, "node*8"},
		{"dp=2,fsdp=32,ep=64", 1, 1, ""},
		// gpu: ep 4 of fsdp 8 leaves efsdp 2; node: ep 4 takes fsdp's 2, then 2 of dp's 4.
		{"dp=4,fsdp=16,ep=16,mesh=fsdp:gpu*8.node*2;dp:node*4;ep:gpu*4.node*4", 2, 2, "node*2"},
	}
	for _, tt := range tests {
		s, m, ok := resolve64(t, tt.s)
		if !ok {
			continue
		}
		if m.Degrees[RoleEDP] != tt.edp || m.Degrees[RoleEFSDP] != tt.efsdp {
			t.Errorf("Resolve(%q): edp %d, efsdp %d; want %d, %d", tt.s, m.Degrees[RoleEDP], m.Degrees[RoleEFSDP], tt.edp, tt.efsdp)
		}
		if got := groupsText(m.Groups[RoleEDP]); got != tt.edpGroups {
			t.Errorf("Resolve(%q): edp groups %q, want %q", tt.s, got, tt.edpGroups)
		}
		// Every chip of the data-parallel group is in exactly one of ep, edp, efsdp.
		if got, want := m.Degrees[RoleEP]*m.Degrees[RoleEDP]*m.Degrees[RoleEFSDP], s.Replicas(); got != want {
			t.Errorf("Resolve(%q): ep*edp*efsdp = %d, want dp*fsdp = %d", tt.s, got, want)
		}
	}
}

// groupsText writes axis groups as the mesh value does: "gpu*2.node*4".
func groupsText(gs []Group) string {
	var parts []string
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%s*%d", g.Axis.Name, g.Size))
	}
	return strings.Join(parts, ".")
}

// TestResolveCarveTP checks EP's carving out of tp's ranks for whole
// experts under sp (Megatron-Core's expert grid with etp=1): fsdp first,
// dp next, tp last on each axis, tp's expert part tpe what ep leaves, and
// every chip of dp*fsdp*tp in exactly one of ep, edp, efsdp, tpe.
func TestResolveCarveTP(t *testing.T) {
	tests := []struct {
		s             string
		edp, tpe      int
		tpeGroups     string
		tpeDegreeSame bool // tpe = tp: ep took no tensor rank
	}{
		// gpu: tp 2, dp 4; ep 8 takes dp's 4 then tp's 2.
		{"dp=32,tp=2,ep=8,mesh=tp:gpu*2;dp:gpu*4.node*8;ep:gpu*8", 8, 1, "", false},
		// Qwen3-235B on 256 H100s: ep 32 = tp 2 x dp 16, none left.
		{"dp=32,tp=2,ep=64,mesh=tp:gpu*2;dp:gpu*4.node*8;ep:gpu*8.node*8", 1, 1, "", false},
		// ep 2 within dp's gpu share: tp keeps its 2 ranks.
		{"dp=32,tp=2,ep=2,mesh=tp:gpu*2;dp:gpu*4.node*8;ep:gpu*2", 16, 2, "gpu*2", true},
		// Split experts (etp=tp): ep never takes a tensor rank.
		{"dp=32,tp=2,ep=4,etp=2,mesh=tp:gpu*2;dp:gpu*4.node*8;ep:gpu*4", 8, 2, "gpu*2", true},
	}
	for _, tt := range tests {
		s, m, ok := resolve64(t, tt.s)
		if !ok {
			continue
		}
		if m.Degrees[RoleEDP] != tt.edp || m.Degrees[RoleTPE] != tt.tpe {
			t.Errorf("Resolve(%q): edp %d, tpe %d; want %d, %d", tt.s, m.Degrees[RoleEDP], m.Degrees[RoleTPE], tt.edp, tt.tpe)
		}
		if got := groupsText(m.Groups[RoleTPE]); got != tt.tpeGroups {
			t.Errorf("Resolve(%q): tpe groups %q, want %q", tt.s, got, tt.tpeGroups)
		}
		if got, want := m.Degrees[RoleEP]*m.Degrees[RoleEDP]*m.Degrees[RoleEFSDP]*m.Degrees[RoleTPE], s.Replicas()*s.Degree[TP]; got != want {
			t.Errorf("Resolve(%q): ep*edp*efsdp*tpe = %d, want dp*fsdp*tp = %d", tt.s, got, want)
		}
		if (m.Degrees[RoleTPE] == m.Degrees[RoleTP]) != tt.tpeDegreeSame {
			t.Errorf("Resolve(%q): tpe %d against tp %d", tt.s, m.Degrees[RoleTPE], m.Degrees[RoleTP])
		}
		deg, err := s.RoleDegrees(gpuCluster(64))
		if err != nil || deg != m.Degrees {
			t.Errorf("RoleDegrees(%q) = %v, %v; Resolve gives %v", tt.s, deg, err, m.Degrees)
		}
	}
}

// TestPlaceInOrder checks the default placement in a framework's rank
// order: Megatron-LM lays tp, cp, dp, pp over its ranks from the
// innermost, so dp=4,pp=8 on 4 nodes of 8 GPUs puts dp inside the node and
// pp across nodes, where the fill order (tp, cp, fsdp, pp, dp) puts pp
// inside.
func TestPlaceInOrder(t *testing.T) {
	tests := []struct {
		s     string
		order []Dim
		want  string
	}{
		{"dp=4,pp=8", nil, "dp=4,pp=8,mesh=pp:gpu*8;dp:node*4"},
		{"dp=4,pp=8", []Dim{TP, CP, DP, PP}, "dp=4,pp=8,mesh=pp:gpu*2.node*4;dp:gpu*4"},
		{"dp=2,tp=4,pp=4", []Dim{TP, CP, DP, PP}, "dp=2,tp=4,pp=4,mesh=tp:gpu*4;pp:node*4;dp:gpu*2"},
		// A mesh given is kept; only the rest follows the order.
		{"dp=4,pp=8,mesh=pp:gpu*8", []Dim{TP, CP, DP, PP}, "dp=4,pp=8,mesh=pp:gpu*8;dp:node*4"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.s)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.PlaceInOrder(gpuCluster(32), tt.order)
		if err != nil {
			t.Errorf("PlaceInOrder(%q, %v): %v", tt.s, tt.order, err)
			continue
		}
		if got := p.String(); got != tt.want {
			t.Errorf("PlaceInOrder(%q, %v) = %q, want %q", tt.s, tt.order, got, tt.want)
		}
	}
}

// TestResolvePlacedEverywhere checks that every placement Place accepts
// resolves, for random MoE strategies.
func TestResolvePlacedEverywhere(t *testing.T) {
	c := gpuCluster(64)
	sp, err := New(smallMoE(), c, Workload{Batch: 64, SeqLen: 64}, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	genes := make([]int, NumGenes)
	var s Strategy
	for i := range sp.Size() {
		if !sp.DecodeIndex(i, genes, &s) {
			continue
		}
		if _, err := s.Resolve(c); err != nil {
			t.Fatalf("Decode gives %s, which does not resolve: %v", s, err)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	s, _ := Parse("tp=8,pp=16,dp=128,mesh=tp:gpu;pp:node*16;dp:node*128")
	c := gpuCluster(16384)
	var m Mesh
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Resolve(c, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRoleDegreesMatchResolve checks the allocation-free carving against
// Resolve's groups on every MoE strategy of a small space.
func TestRoleDegreesMatchResolve(t *testing.T) {
	c := gpuCluster(64)
	sp, err := New(smallMoE(), c, Workload{Batch: 64, SeqLen: 64}, Fix{})
	if err != nil {
		t.Fatal(err)
	}
	genes := make([]int, NumGenes)
	var s Strategy
	n := 0
	for i := range sp.Size() {
		if !sp.DecodeIndex(i, genes, &s) {
			continue
		}
		m, err := s.Resolve(c)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.RoleDegrees(c)
		if err != nil {
			t.Fatal(err)
		}
		if d != m.Degrees {
			t.Fatalf("%s: RoleDegrees %v, Resolve %v", s, d, m.Degrees)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no valid strategy")
	}
}

// TestMeshCopyFrom checks that Mesh.CopyFrom copies a resolved mesh (the
// groups of every role, EP's carved remainders included, and the
// pipeline's) into memory of its own: resolving another strategy into the
// original, or into the copy, leaves the other as it was.
func TestMeshCopyFrom(t *testing.T) {
	c := gpuCluster(64)
	var (
		strategies []Strategy
		wants      []Mesh // each strategy's mesh, resolved on its own
	)
	for _, text := range []string{
		"dp=64",
		"tp=8,pp=2,dp=4",
		"dp=4,fsdp=16,ep=16,mesh=fsdp:gpu*8.node*2;dp:node*4;ep:gpu*4.node*4",
		"dp=2,fsdp=32,ep=64",
	} {
		s, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Resolve(c)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", text, err)
		}
		strategies, wants = append(strategies, s), append(wants, m)
	}
	same := func(a, b *Mesh) bool {
		return reflect.DeepEqual(a.Groups, b.Groups) && a.Degrees == b.Degrees && reflect.DeepEqual(a.Pipeline, b.Pipeline)
	}
	for i := range strategies {
		j := (i + 1) % len(strategies)
		var orig, cp Mesh
		if err := orig.Resolve(c, &strategies[i]); err != nil {
			t.Fatal(err)
		}
		cp.CopyFrom(&orig)
		if err := orig.Resolve(c, &strategies[j]); err != nil { // the same backing, rewritten
			t.Fatal(err)
		}
		if !same(&cp, &wants[i]) {
			t.Errorf("CopyFrom(%s) after resolving %s into the original = %+v; want %+v", &strategies[i], &strategies[j], cp, wants[i])
		}
		// Into a copy that already holds memory: the reuse keeps nothing
		// of the mesh it held.
		cp.CopyFrom(&orig)
		if !same(&cp, &wants[j]) {
			t.Errorf("CopyFrom(%s) into a copy of %s = %+v; want %+v", &strategies[j], &strategies[i], cp, wants[j])
		}
	}
}

// resolve64 parses spec and resolves it on 64 H100s, reporting a
// resolution error on t and false.
func resolve64(t *testing.T, spec string) (Strategy, Mesh, bool) {
	t.Helper()
	s, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Resolve(gpuCluster(64))
	if err != nil {
		t.Errorf("Resolve(%q): %v", spec, err)
		return s, m, false
	}
	return s, m, true
}
