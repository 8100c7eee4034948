package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Test fixtures built from docs/hardware.md numbers (the profiles presets are
// written concurrently). Efficiency is left zero: DefaultEfficiency applies.

// gpuCluster is n GPUs in nodes of 8 on NVLink (uni egress nvlinkBW) and one
// NIC per GPU (nicBW one way), docs/hardware.md §2.1; latencies from the NCCL
// tuner constants (NVLink ring Simple 3.4 µs → ~1 µs LL128-ish per step,
// network ~5 µs), docs/formulas.md §4.2.
func gpuCluster(name string, chip profiles.Chip, n int, nvlinkBW, nicBW float64) profiles.Cluster {
	axes := []profiles.Axis{{Name: "gpu", Size: min(n, 8), Tier: profiles.NVLink, BandwidthBytesPerS: nvlinkBW, LatencySeconds: 2e-6, Efficiency: 0.8}}
	if n > 8 {
		axes = append(axes, profiles.Axis{Name: "node", Size: n / 8, Tier: profiles.InfiniBand, BandwidthBytesPerS: nicBW, LatencySeconds: 5e-6, Efficiency: 0.9})
	}
	return profiles.Cluster{Name: name, Chip: chip, Axes: axes}
}

var (
	chipA100 = profiles.Chip{Name: "a100-80gb", Family: "nvidia-ampere", PeakBF16FLOPs: 312e12, HBMBytes: 80e9, HBMBandwidthBytesPerS: 2039e9}
	chipH100 = profiles.Chip{Name: "h100", Family: "nvidia-hopper", PeakBF16FLOPs: 989e12, HBMBytes: 80e9, HBMBandwidthBytesPerS: 3350e9}
	chipV5e  = profiles.Chip{Name: "v5e", Family: "tpu-v5e", PeakBF16FLOPs: 197e12, HBMBytes: 16e9, HBMBandwidthBytesPerS: 819e9}
)

// tpuAxis is one ICI axis, one-way per-link bandwidth 4.5e10 (v4/v5e, [SB-TPU]), 1 µs per hop.
func tpuAxis(name string, size int, wrap bool) profiles.Axis {
	return profiles.Axis{Name: name, Size: size, Tier: profiles.ICI, Wraparound: wrap, BandwidthBytesPerS: 4.5e10, LatencySeconds: 1e-6, Efficiency: 1}
}

// gpt3 is GPT-3 175B as in Korthikanti 2022 Table 3 (MHA, gelu, 4h, vocab 51200).
func gpt3() model.Spec {
	m := model.Spec{Name: "gpt3-175b", Layers: 96, Hidden: 12288, Heads: 96, Vocab: 51200, SeqLen: 2048, FFN: model.GELU, Norm: model.LayerNorm}
	m.Normalize()
	return m
}

// llama3 returns Llama 3 8B, 70B or 405B (docs/formulas.md §1.1 table).
func llama3(size string) model.Spec {
	var m model.Spec
	switch size {
	case "8b":
		m = model.Spec{Name: "llama3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, FFNHidden: 14336}
	case "70b":
		m = model.Spec{Name: "llama3-70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, FFNHidden: 28672}
	default:
		m = model.Spec{Name: "llama3-405b", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, FFNHidden: 53248}
	}
	m.Vocab, m.SeqLen, m.FFN = 128256, 8192, model.SwiGLU
	m.Normalize()
	return m
}

// strategy fills defaults like space.Parse would.
func strategy(s space.Strategy) space.Strategy {
	for d := range s.Degree {
		if s.Degree[d] == 0 {
			s.Degree[d] = 1
		}
	}
	for _, p := range []*int{&s.MB, &s.V} {
		if *p == 0 {
			*p = 1
		}
	}
	if s.Schedule == "" {
		s.Schedule = space.OneFOneB
	}
	if s.Recompute == "" {
		s.Recompute = space.RecomputeNone
	}
	return s
}

func share(axis string, size int) []space.Share { return []space.Share{{Axis: axis, Size: size}} }

// program builds m's layer program with o, for tests.
func program(m model.Spec, o model.ProgramOptions) *model.Program { return model.MustProgram(m, o) }

// evaluate is Evaluate on m's default program.
func evaluate(m model.Spec, c profiles.Cluster, w space.Workload, s space.Strategy, o Options) (Estimate, error) {
	return Evaluate(program(m, model.ProgramOptions{}), c, w, s, o)
}

// placedEstimate places s on c and evaluates m there with default
// options, failing t on an error.
func placedEstimate(t *testing.T, m model.Spec, c profiles.Cluster, w space.Workload, s space.Strategy) Estimate {
	t.Helper()
	placed, err := s.Place(c)
	if err != nil {
		t.Fatal(err)
	}
	est, err := evaluate(m, c, w, placed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return est
}

// parseStrategy parses spec (space.Parse), failing t on an error.
func parseStrategy(t *testing.T, spec string) space.Strategy {
	t.Helper()
	s, err := space.Parse(spec)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return s
}

// presets loads the model of that name (a preset or a file, model.Load)
// and parses the cluster of that name, failing t on an error.
func presets(t *testing.T, modelName, clusterName string) (model.Spec, profiles.Cluster) {
	t.Helper()
	m, err := model.Load(modelName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse(clusterName)
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}
