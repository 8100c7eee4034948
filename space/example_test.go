package space_test

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

func ExampleParse() {
	s, err := space.Parse("tp=8, pp=16, dp=128, schedule=interleaved, v=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Degree[space.DP], s.Degree[space.TP], s.Degree[space.PP], s.SP, s.Schedule, s.V)
	fmt.Println(s)

	_, err = space.Parse("tpp=8")
	fmt.Println(err)
	// Output:
	// 128 8 16 true interleaved 2
	// dp=128,tp=8,pp=16,schedule=interleaved,v=2
	// space: strategy key "tpp" is unknown (did you mean "tp"?)
}

func ExampleStrategy_Resolve() {
	// 128 nodes of 8 H100s: the NVLink axis innermost, the nodes outside.
	c := profiles.Cluster{Name: "h100-1024", Axes: []profiles.Axis{
		{Name: "gpu", Size: 8, Tier: profiles.NVLink},
		{Name: "node", Size: 128, Tier: profiles.InfiniBand},
	}}
	s, _ := space.Parse("tp=8,pp=4,dp=32")
	p, err := s.Place(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p)
	m, err := p.Resolve(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range m.Pipeline {
		fmt.Printf("pp: %d of %s (whole axis: %v)\n", g.Size, g.Axis.Name, g.Whole)
	}
	// Output:
	// dp=32,tp=8,pp=4,mesh=tp:gpu*8;pp:node*4;dp:node*32
	// pp: 4 of node (whole axis: false)
}
