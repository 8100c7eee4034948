package cost_test

import (
	"fmt"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Evaluate Megatron tensor parallelism with sequence parallelism inside one
// 8xH100 node and list the derived collectives: per layer and micro-batch
// 6 AllGather + 4 ReduceScatter (32 layers × 8 micro-batches = 1536 + 1024),
// plus the embedding (RS fwd, AG bwd), the output layer (AG fwd, AG + RS bwd)
// and the loss statistics' AllReduce, 8 micro-batches each.
func ExampleEvaluate() {
	m := model.Spec{Name: "llama3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8,
		FFNHidden: 14336, FFN: model.SwiGLU, Vocab: 128256, SeqLen: 8192}
	c := profiles.Cluster{Name: "h100-8",
		Chip: profiles.Chip{Name: "h100", Family: "nvidia-hopper", PeakBF16FLOPs: 989e12, HBMBandwidthBytesPerS: 3.35e12},
		Axes: []profiles.Axis{{Name: "gpu", Size: 8, Tier: profiles.NVLink, BandwidthBytesPerS: 450e9, LatencySeconds: 3e-6, Efficiency: 0.8}}}
	s := space.Strategy{Degree: space.Degrees{space.DP: 1, space.FSDP: 1, space.TP: 8, space.CP: 1, space.PP: 1, space.EP: 1}, SP: true, MB: 1, V: 1, Schedule: space.OneFOneB, Recompute: space.RecomputeNone}
	s.Mesh[space.TP] = []space.Share{{Axis: "gpu", Size: 8}}
	p, err := model.NewProgram(m, model.ProgramOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	est, err := cost.Evaluate(p, c, space.Workload{Batch: 8, SeqLen: 8192}, s, cost.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	n := map[string]int{}
	for _, col := range est.Collectives {
		n[col.Op] += col.Count
	}
	fmt.Printf("AllGather %d, ReduceScatter %d, AllReduce %d per step\n", n[cost.AllGather], n[cost.ReduceScatter], n[cost.AllReduce])
	fmt.Println(est.StepSeconds == est.ComputeSeconds+est.ExposedCommSeconds+est.BubbleSeconds)
	// Output:
	// AllGather 1560, ReduceScatter 1040, AllReduce 8 per step
	// true
}

// An Evaluator prices many strategies of one model, cluster and workload,
// reusing what consecutive strategies share; EvaluateTo is its form for a
// hot loop, writing the estimate in place. Here the ZeRO stage of a data-
// parallel strategy on two 8xH100 nodes changes (ZeRO-1 shards the
// optimizer step, which the once-per-step collectives pay for), and a
// micro-batch that does not divide the batch is an error that leaves the
// estimate as it was.
func ExampleEvaluator_EvaluateTo() {
	cm, c, s, err := dataParallel8B()
	if err != nil {
		fmt.Println(err)
		return
	}
	ev := cm.NewEvaluator(c, space.Workload{Batch: 32, SeqLen: 8192}, cost.Options{SkipCollectives: true})
	var est cost.Estimate
	for _, zero := range []int{0, 1} {
		s.Zero = zero
		if err := ev.EvaluateTo(&s, &est); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("zero=%d: %.3f s per step\n", zero, est.StepSeconds)
	}
	s.MB = 3
	fmt.Println(ev.EvaluateTo(&s, &est))
	fmt.Printf("the estimate before: %.3f s\n", est.StepSeconds)
	// Output:
	// zero=0: 2.425 s per step
	// zero=1: 2.385 s per step
	// cost: batch 32 does not divide into dp*fsdp*mb = 6
	// the estimate before: 2.385 s
}

// A search that decodes strategies from a space.Space names each one's
// placement by its layout gene: the strategies of one placement, here the
// ZeRO stages of one data-parallel mesh, then share the mesh's part of the
// Evaluator's key instead of comparing their meshes. The estimates are
// EvaluateTo's.
func ExampleEvaluator_EvaluatePlacedTo() {
	cm, c, s, err := dataParallel8B()
	if err != nil {
		fmt.Println(err)
		return
	}
	w, o := space.Workload{Batch: 32, SeqLen: 8192}, cost.Options{SkipCollectives: true}
	named, plain := cm.NewEvaluator(c, w, o), cm.NewEvaluator(c, w, o)
	const placement = 0 // this mesh's name
	for _, zero := range []int{0, 1, 2} {
		s.Zero = zero
		var a, b cost.Estimate
		if err := named.EvaluatePlacedTo(&s, placement, &a); err != nil {
			fmt.Println(err)
			return
		}
		if err := plain.EvaluateTo(&s, &b); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("zero=%d: %.3f s per step, the same as EvaluateTo's: %v\n", zero, a.StepSeconds, a.StepSeconds == b.StepSeconds)
	}
	// Output:
	// zero=0: 2.425 s per step, the same as EvaluateTo's: true
	// zero=1: 2.385 s per step, the same as EvaluateTo's: true
	// zero=2: 2.381 s per step, the same as EvaluateTo's: true
}

// dataParallel8B returns the Evaluator examples' cost model (Llama 3 8B),
// cluster (two nodes of 8 H100s) and strategy (tp over each node's GPUs,
// dp over the nodes).
func dataParallel8B() (*cost.Model, profiles.Cluster, space.Strategy, error) {
	m := model.Spec{Name: "llama3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8,
		FFNHidden: 14336, FFN: model.SwiGLU, Vocab: 128256, SeqLen: 8192}
	gpu := profiles.Axis{Name: "gpu", Size: 8, Tier: profiles.NVLink, BandwidthBytesPerS: 450e9, LatencySeconds: 3e-6, Efficiency: 0.8}
	node := profiles.Axis{Name: "node", Size: 2, Tier: profiles.InfiniBand, BandwidthBytesPerS: 50e9, LatencySeconds: 10e-6, Efficiency: 0.8}
	c := profiles.Cluster{Name: "h100-16",
		Chip: profiles.Chip{Name: "h100", Family: "nvidia-hopper", PeakBF16FLOPs: 989e12, HBMBandwidthBytesPerS: 3.35e12},
		Axes: []profiles.Axis{gpu, node}}
	p, err := model.NewProgram(m, model.ProgramOptions{})
	if err != nil {
		return nil, c, space.Strategy{}, err
	}
	s := space.Strategy{Degree: space.Degrees{space.DP: 2, space.FSDP: 1, space.TP: 8, space.CP: 1, space.PP: 1, space.EP: 1}, SP: true, MB: 1, V: 1, Schedule: space.OneFOneB, Recompute: space.RecomputeNone}
	s.Mesh[space.TP] = []space.Share{{Axis: "gpu", Size: 8}}
	s.Mesh[space.DP] = []space.Share{{Axis: "node", Size: 2}}
	return cost.NewModel(p), c, s, nil
}
