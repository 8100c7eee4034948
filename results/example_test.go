package results_test

import (
	"fmt"
	"os"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/space"
)

func ExampleCount() {
	fmt.Println(results.Count(70.56e9), results.Count(8.03e9), results.Count(999.7e9), results.Count(512))
	// Output: 70.6B 8.03B 1.00T 512
}

func ExampleBytes() {
	fmt.Println(results.Bytes(95.74e9), results.Bytes(102.0e9), results.Bytes(4.5e6))
	// Output: 95.7 GB 102 GB 4.50 MB
}

func ExampleFLOPRate() {
	fmt.Println(results.FLOPRate(459e12), results.FLOPRate(989.4e12), results.FLOPRate(2.5e15))
	// Output: 459 TFLOP/s 989 TFLOP/s 2.50 PFLOP/s
}

func ExampleSeconds() {
	fmt.Println(results.Seconds(12.34), results.Seconds(0.45), results.Seconds(7.5e-6), results.Seconds(0))
	// Output: 12.3 s 450 ms 7.50 µs 0 s
}

// example is a small synthetic evaluation: 4 chips, 2 s per step.
func example() results.Evaluation {
	m := model.Spec{Name: "tiny", Layers: 2, Hidden: 64, Heads: 4, KVHeads: 4, HeadDim: 16, FFNHidden: 256, FFN: model.GELU, Vocab: 1000, SeqLen: 128}
	c := profiles.Cluster{
		Name: "toy-4",
		Chip: profiles.Chip{Name: "toy", PeakBF16FLOPs: 100e12, HBMBytes: 16e9},
		Axes: []profiles.Axis{{Name: "x", Size: 4, Tier: profiles.ICI, Wraparound: true, BandwidthBytesPerS: 50e9}},
	}
	s := space.Defaults()
	s.Degree[space.FSDP] = 4
	s.Mesh[space.FSDP] = []space.Share{{Axis: "x", Size: 4}}
	return results.Evaluation{
		Model: m, Cluster: c, Workload: space.Workload{Batch: 8, SeqLen: 128}, Strategy: s,
		Time: cost.Estimate{
			StepSeconds: 2, ComputeSeconds: 1.5, ExposedCommSeconds: 0.5,
			MatmulSeconds: 1.2, AttentionSeconds: 0.1, MemoryBoundSeconds: 0.15, OptimizerSeconds: 0.05,
			ModelFLOPs: 400e12, HardwareFLOPs: 500e12,
			Collectives: []cost.Collective{{Op: "AllGather", Axes: []string{"x"}, Bytes: 1e6, Count: 4, Seconds: 0.25, Overlapped: true, Why: "fsdp weight gather"}},
		},
		Memory:      memory.Breakdown{ParamsBytes: 1e9, GradsBytes: 1e9, OptimizerBytes: 6e9, ActivationsBytes: 2e9},
		UsableBytes: 15e9,
	}
}

// NewResult derives the contract's rates: MFU = 400 TFLOP / (2 s x 4 chips x 100 TFLOP/s).
func ExampleNewResult() {
	r := results.NewResult(example())
	fmt.Printf("step %g s, %g tokens/s, %g per chip, MFU %.2f, HFU %.3f, %g GB, fits %t, mesh %v\n",
		r.StepTimeS, r.TokensPerS, r.TokensPerSPerChip, r.MFU, r.HFU, r.MemoryGBPerChip, r.Fits, r.Strategy.Mesh)
	// Output: step 2 s, 512 tokens/s, 128 per chip, MFU 0.50, HFU 0.625, 10 GB, fits true, mesh map[fsdp:[x]]
}

func ExamplePlan_WriteTable() {
	e := example()
	p := results.NewPlan(e.Model, e.Cluster, e.Workload,
		results.SearchSummary{Method: "exhaustive", Evaluated: 10, Feasible: 3, SpaceSize: 40, Seed: 1},
		[]results.Evaluation{e}, 0)
	p.WriteTable(os.Stdout)
	// Output:
	// model    tiny: 227K params (227K active)
	// cluster  toy-4: 4 x toy
	// batch    8 sequences x 128 tokens = 1.02K tokens per step
	// framework generic
	// band     80% of measured runs fall within x0.923 to x1.13 of the predicted step time (95%: x0.855 to x1.29): 157 published runs of dense models on every chip family, each source left out; 83% fall in it drawn without their source; no run covers this family
	// search   exhaustive: all 40 gene vectors, 10 strategies evaluated, 3 feasible, 1 on the Pareto front (seed 1)
	//
	//    RANK  STEP    BAND 80%          TOKENS/S  TOKENS/S/CHIP  MFU    MEMORY/CHIP  OOM RISK  STRATEGY
	// *  1     2.00 s  1.85 s to 2.25 s  512       128            50.0%  10.0 GB      2.6%      fsdp=4,mesh=fsdp:x*4
	//
	// * recommended. See one row in full with: plan explain --model tiny --cluster toy-4 --batch 8 --seq 128 --strategy SPEC
}

func ExampleWriteExplainTable() {
	results.WriteExplainTable(os.Stdout, example())
	// Output:
	// model     tiny: 227K params (227K active), 2 layers, hidden 64
	// cluster   toy-4: 4 x toy, 100 TFLOP/s and 16.0 GB per chip
	// mesh      x=4(ici 50.0 GB/s, torus)
	// batch     8 sequences x 128 tokens = 1.02K tokens per step
	// framework generic
	// strategy  fsdp=4,mesh=fsdp:x*4
	//           2 micro-batch(es) of 1 sequence(s) per data-parallel replica, 4 replica(s)
	//
	// TIME PER STEP
	// compute                1.50 s
	//   matmuls              1.20 s
	//   attention kernels    100 ms
	//   memory-bound passes  150 ms
	//   optimizer step       50.0 ms
	// exposed communication  500 ms
	// pipeline bubble        0 s
	// step                   2.00 s
	// band                   80%: 1.85 s to 2.25 s, 95%: 1.71 s to 2.58 s (157 published runs of dense models on every chip family, each source left out; 83% fall in it drawn without their source; no run covers this family)
	// throughput             512 tokens/s, 128 tokens/s per chip
	// MFU                    50.0% (model FLOPs 400 TFLOP per step)
	// HFU                    62.5% (hardware FLOPs 500 TFLOP per step)
	//
	// MEMORY PER CHIP
	// parameters          1.00 GB
	// gradients           1.00 GB
	// optimizer state     6.00 GB
	// activations         2.00 GB
	// buffers             0 B
	// total               10.0 GB of 15.0 GB usable: fits
	// out-of-memory risk  2.6% (the memory model's error on 39 published per-GPU peaks of runs that ran)
	//
	// COLLECTIVES PER STEP
	// OP         AXES  BYTES    COUNT  TIME    OVERLAPPED  WHY
	// AllGather  x     1.00 MB  4      250 ms  true        fsdp weight gather
}
