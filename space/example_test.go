package space_test

import (
	"fmt"

	"github.com/meshplan/meshplan/model"
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

// A loop over the strategies of one layout decodes the layout's degrees
// and mesh once (Decode) and then only the other genes (DecodeInner).
func ExampleSpace_DecodeInner() {
	c := profiles.Cluster{Name: "h100-16", Axes: []profiles.Axis{
		{Name: "gpu", Size: 8, Tier: profiles.NVLink},
		{Name: "node", Size: 2, Tier: profiles.InfiniBand},
	}}
	m := model.Spec{Name: "small", Layers: 8, Hidden: 1024, Heads: 8, FFNHidden: 4096, FFN: model.SwiGLU, Vocab: 32000, SeqLen: 2048}
	sp, err := space.New(m, c, space.Workload{Batch: 32}, space.Fix{Set: map[string]string{"tp": "8", "dp": "2", "schedule": "1f1b"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var s space.Strategy
	genes := make([]int, space.NumGenes)
	sp.Decode(genes, &s)
	for mb := range 3 {
		genes[space.GeneMB] = mb
		fmt.Println(sp.DecodeInner(genes, &s), s)
	}
	// Output:
	// true dp=2,tp=8,mesh=tp:gpu*8;dp:node*2
	// true dp=2,tp=8,mb=2,mesh=tp:gpu*8;dp:node*2
	// true dp=2,tp=8,mb=4,mesh=tp:gpu*8;dp:node*2
}

// On a chip with int8 matmuls but no FP8 ones (TPU v6e), a fix of
// precision=fp8 is planned as int8 under a framework that runs int8
// (MaxText's AQT), with a note for stderr.
func ExampleLimits_EightBitFix() {
	v6e, _ := profiles.LookupChip("v6e")
	fix, _ := space.ParseFix("tp=1,precision=fp8")
	f, note := space.Limits{Framework: "maxtext"}.EightBitFix(fix, v6e)
	fmt.Println(f)
	fmt.Println(note)
	_, note = space.Limits{Framework: "megatron", NoInt8: true}.EightBitFix(fix, v6e)
	fmt.Printf("%q\n", note)
	// Output:
	// tp=1,precision=int8
	// v6e has no FP8: 8-bit matmuls planned as int8 (AQT)
	// ""
}

func ExampleSplit() {
	// Llama 3.1 405B's 126 layers on 8 stages: the default split, then the
	// last stage lighter, in 8 chunks a rank.
	s, err := space.Parse("pp=8,first=16,last=14,schedule=interleaved,v=8")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, sp := range []space.Split{{}, s.Split} {
		var counts []int
		for r := range 8 {
			_, n := sp.StageLayers(126, 8, r)
			counts = append(counts, n)
		}
		fmt.Printf("%q %v, rank 7's chunks:", sp, counts)
		for j := range 8 {
			fmt.Print(" ", sp.ChunkLayers(126, 8, 8, 7, j))
		}
		fmt.Println()
	}
	fmt.Println(space.Splits(126, 8))
	fmt.Println(space.Split{First: 14, Last: 14}.Check(126, 8))
	// Output:
	// "" [15 16 16 16 16 16 16 15], rank 7's chunks: 2 2 2 2 2 2 2 1
	// "first=16,last=14" [16 16 16 16 16 16 16 14], rank 7's chunks: 2 2 2 2 2 2 1 1
	// [first=16,last=14 first=14,last=16]
	// space: first=14,last=14 with pp=8 leaves 98 of the 126 layers for the other 6 stages, which do not share them evenly: make 126 minus first and last a multiple of 6 (e.g. first=15,last=15)
}
