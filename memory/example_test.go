package memory_test

import (
	"fmt"

	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Llama-3-8B on 8 H100s with FSDP over all of them, 8K-token sequences.
func ExampleEstimate() {
	m := model.Spec{
		Name: "llama3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8,
		FFNHidden: 14336, FFN: model.SwiGLU, Vocab: 128256, SeqLen: 8192,
	}
	m.Normalize()
	c, err := profiles.Parse("h100-8")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := space.Strategy{Degree: space.Degrees{space.DP: 1, space.FSDP: 8, space.TP: 1, space.CP: 1, space.PP: 1, space.EP: 1}, MB: 1, Schedule: space.OneFOneB, V: 1, Recompute: space.RecomputeSelective}
	w := space.Workload{Batch: 64, SeqLen: 8192}

	p, err := model.NewProgram(m, model.ProgramOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := memory.Estimate(p, c, w, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("params %.1f GB, grads %.1f GB, optimizer %.1f GB\n", b.ParamsBytes/1e9, b.GradsBytes/1e9, b.OptimizerBytes/1e9)
	fmt.Printf("activations %.1f GB, buffers %.1f GB\n", b.ActivationsBytes/1e9, b.BuffersBytes/1e9)
	fmt.Printf("total %.1f of %.1f GB usable: fits %v, dominated by %s\n",
		b.TotalBytes()/1e9, memory.UsableBytes(c, memory.Options{})/1e9, memory.Fits(b, c, memory.Options{}), memory.Dominant(b))
	// Output:
	// params 2.0 GB, grads 4.0 GB, optimizer 12.0 GB
	// activations 36.5 GB, buffers 13.3 GB
	// total 67.9 of 80.2 GB usable: fits true, dominated by activations
}
