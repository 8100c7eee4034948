package space

import (
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// Test models: shapes from the Llama 3 model cards (Meta, 2024) and
// Mixtral 8x7B (Mistral AI, 2024).
func llama3_8b() model.Spec {
	return model.Spec{Name: "llama3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		FFNHidden: 14336, FFN: model.SwiGLU, Vocab: 128256, SeqLen: 8192}
}

func llama3_70b() model.Spec {
	return model.Spec{Name: "llama70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		FFNHidden: 28672, FFN: model.SwiGLU, Vocab: 128256, SeqLen: 8192}
}

func llama3_405b() model.Spec {
	return model.Spec{Name: "llama3-405b", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128,
		FFNHidden: 53248, FFN: model.SwiGLU, Vocab: 128256, SeqLen: 8192}
}

func mixtral() model.Spec {
	return model.Spec{Name: "mixtral-8x7b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		FFNHidden: 14336, FFN: model.SwiGLU, Vocab: 32000, SeqLen: 4096,
		MoE: &model.MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 14336}}
}

// gpuCluster is n H100s, 8 per NVLink node.
func gpuCluster(n int) profiles.Cluster {
	c := profiles.Cluster{Name: "h100-" + itoa(n)}
	c.Axes = append(c.Axes, profiles.Axis{Name: "gpu", Size: min(n, 8), Tier: profiles.NVLink, BandwidthBytesPerS: 450e9})
	if n > 8 {
		c.Axes = append(c.Axes, profiles.Axis{Name: "node", Size: n / 8, Tier: profiles.InfiniBand, BandwidthBytesPerS: 50e9})
	}
	return c
}

// fp8Cluster is gpuCluster with an fp8 peak (H100: 1,979 TFLOP/s).
func fp8Cluster(n int) profiles.Cluster {
	c := gpuCluster(n)
	c.Chip.Name, c.Chip.PeakFP8FLOPs = "h100", 1979e12
	return c
}

// int8Cluster is gpuCluster's n GPUs with an int8 peak and no fp8 one (an
// A100: int8 624 TOP/s, docs/hardware.md §2.1).
func int8Cluster(n int) profiles.Cluster {
	c := gpuCluster(n)
	c.Chip.Name, c.Chip.PeakInt8OPs = "a100", 624e12
	return c
}

// v5p256 is a v5p-256 slice: 128 chips as a 4x4x8 torus, wraparound on
// every axis (docs/hardware.md §1.2).
func v5p256() profiles.Cluster {
	ax := func(name string, n int) profiles.Axis {
		return profiles.Axis{Name: name, Size: n, Tier: profiles.ICI, Wraparound: true, BandwidthBytesPerS: 90e9}
	}
	return profiles.Cluster{Name: "v5p-256", Axes: []profiles.Axis{ax("x", 4), ax("y", 4), ax("z", 8)}}
}
