package framework

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/meshplan/meshplan/model"
)

// Profile is one training framework as the planner models it: how its
// kernels run the layer program's memory-bound passes and attention core,
// how it lays out and updates the model states, and what its allocator
// loses. Every field is data; a YAML file (Parse) may set any of them.
type Profile struct {
	// Name is the profile's name ("generic", "megatron", ... or the file's).
	Name string `json:"name" yaml:"name"`
	// Description says what the profile models and where its figures come from.
	Description string `json:"description" yaml:"description"`
	// Kernels are the elementwise passes' bytes and the attention kernel.
	Kernels model.Kernels `json:"-" yaml:"-"`
	// Precision is the element sizes and the layout of the model states.
	Precision model.Precision `json:"precision" yaml:"precision"`
	// Optimizer is the optimizer step's extra passes.
	Optimizer model.Optimizer `json:"optimizer" yaml:"optimizer"`
	// AllocatorSlackFraction, when positive, replaces the chip's allocator
	// slack (profiles.Chip.AllocatorSlackFraction).
	AllocatorSlackFraction float64 `json:"allocator_slack_fraction,omitempty" yaml:"allocator_slack_fraction"`
}

// ProgramOptions returns the layer program options of the profile.
func (p Profile) ProgramOptions() model.ProgramOptions {
	return model.ProgramOptions{Kernels: p.Kernels, Precision: p.Precision, Optimizer: p.Optimizer}
}

// Default is the name of the default profile.
const Default = "generic"

// builtins returns the built-in profiles, built on each call so that no
// caller can change another's.
func builtins() []Profile {
	return []Profile{generic(), megatron(), torchtitan(), pytorch()}
}

// Names returns the built-in profiles' names.
func Names() []string {
	var out []string
	for _, p := range builtins() {
		out = append(out, p.Name)
	}
	return out
}

// Builtin returns the built-in profile with the given name
// (case-insensitive).
func Builtin(name string) (Profile, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range builtins() {
		if p.Name == n {
			return p, nil
		}
	}
	names := Names()
	slices.SortFunc(names, func(a, b string) int {
		return levenshtein.ComputeDistance(n, a) - levenshtein.ComputeDistance(n, b)
	})
	return Profile{}, fmt.Errorf("framework: unknown framework %q (nearest: %s; known: %s, or a YAML file)", name, names[0], strings.Join(Names(), ", "))
}

// generic is the default: framework-neutral figures for planning at scale.
func generic() Profile {
	return Profile{
		Name: "generic",
		Description: "framework-neutral planning defaults: one fused kernel per elementwise pass, a flash attention kernel, " +
			"Megatron's mixed precision (bf16 weights, persistent fp32 gradients, fp32 master weights and Adam moments in the optimizer state), " +
			"fused AdamW with the gradient-norm pass of clipping",
		Kernels:   model.FusedKernels(),
		Precision: model.MixedPrecision(),
		Optimizer: model.Optimizer{ClipPasses: 1},
	}
}

// megatron is Megatron-Core with Transformer Engine.
func megatron() Profile {
	p := generic()
	p.Name = "megatron"
	p.Description = "Megatron-Core with Transformer Engine: fused norms, activations and cross-entropy, flash attention, " +
		"bf16 parameters with fp32 main gradients (gradient-accumulation fusion) and the distributed optimizer's fp32 master weights and moments, " +
		"clipping's norm pass fused with the optimizer's scaling"
	return p
}
