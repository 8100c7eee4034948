package space

import (
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

func TestGroups(t *testing.T) {
	s, _ := Parse("tp=8,pp=4,dp=32")
	g := s.Groups(gpuCluster(1024))
	check := func(d Dim, i int, axis string, size int, whole bool) {
		t.Helper()
		if i >= len(g[d]) {
			t.Fatalf("Groups()[%s] has %d groups, want more than %d", d, len(g[d]), i)
		}
		got := g[d][i]
		if got.Axis.Name != axis || got.Size != size || got.Whole != whole {
			t.Errorf("Groups()[%s][%d] = {%s %d %v}, want {%s %d %v}", d, i, got.Axis.Name, got.Size, got.Whole, axis, size, whole)
		}
	}
	check(TP, 0, "gpu", 8, true)
	check(PP, 0, "node", 4, false)
	check(DP, 0, "node", 32, false)
	if len(g[FSDP]) != 0 || len(g[CP]) != 0 || len(g[EP]) != 0 {
		t.Errorf("Groups() gave shares to degree-1 dimensions: %+v", g)
	}
	if g[TP][0].Axis.Tier != profiles.NVLink {
		t.Errorf("Groups()[tp] axis tier = %q, want nvlink", g[TP][0].Axis.Tier)
	}
	// A whole axis written without a size.
	w, _ := Parse("tp=8,fsdp=16,mesh=tp:z;fsdp:x.y")
	gw := w.Groups(v5p256())
	if len(gw[FSDP]) != 2 || !gw[TP][0].Whole || gw[TP][0].Size != 8 || !gw[FSDP][1].Whole {
		t.Errorf("Groups(%q) = %+v", w, gw)
	}
}

func BenchmarkGroups(b *testing.B) {
	s, _ := Parse("tp=8,pp=16,dp=128,mesh=tp:gpu;pp:node*16;dp:node*128")
	c := gpuCluster(16384)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Groups(c)
	}
}
