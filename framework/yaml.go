package framework

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/text"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/meshplan/meshplan/model"
)

// maxYAMLBytes bounds the size of a framework file.
const maxYAMLBytes = 1 << 20

// file is a framework file: every key optional, each overriding the base
// profile's value (a pass given replaces the base's entry whole).
type file struct {
	Name                   string                    `yaml:"name"`
	Base                   string                    `yaml:"base"`
	Description            string                    `yaml:"description"`
	Attention              string                    `yaml:"attention"`
	AttentionRate          float64                   `yaml:"attention_rate"`
	SplitProjections       *bool                     `yaml:"split_projections"`
	SeparateProjections    *bool                     `yaml:"separate_projections"`
	ALiBiFused             *bool                     `yaml:"alibi_fused"`
	Passes                 map[string]model.PassCost `yaml:"passes"`
	Precision              model.Precision           `yaml:"precision"`
	Optimizer              model.Optimizer           `yaml:"optimizer"`
	AllocatorSlackFraction float64                   `yaml:"allocator_slack_fraction"`
	Overlap                struct {
		Weights   *float64 `yaml:"weights"`
		Gradients *float64 `yaml:"gradients"`
	} `yaml:"overlap"`
	FlatCollectives       *bool   `yaml:"flat_collectives"`
	PerTensorCollectives  *bool   `yaml:"per_tensor_collectives"`
	ChunkSync             *bool   `yaml:"chunk_sync"`
	TensorParallelOverlap *bool   `yaml:"tensor_parallel_overlap"`
	SearchDispatchers     *bool   `yaml:"search_dispatchers"`
	FP8Recipe             *string `yaml:"fp8_recipe"`
	PerExpertGEMMs        *bool   `yaml:"per_expert_gemms"`
	GraphedStep           *bool   `yaml:"graphed_step"`
	GraphedLayers         *bool   `yaml:"graphed_layers"`
	CPAllGather           *bool   `yaml:"cp_all_gather"`
	CPRepeatedKV          *bool   `yaml:"cp_repeated_kv"`
	GatherCopyOut         *bool   `yaml:"gather_copy_out"`
}

// Attention kernel names of a framework file.
const (
	attentionFlash        = "flash"
	attentionMaterialized = "materialized"
)

// Parse reads a framework profile from YAML:
//
//	name: my-stack            # default "custom"
//	base: torchtitan          # a built-in profile to start from (default generic)
//	attention: flash          # flash or materialized
//	attention_rate: 1         # the attention kernel's speed relative to the chip's flash kernel
//	split_projections: false  # separate q/k/v and gate/up matmuls, each keeping a copy of its input
//	separate_projections: false  # separate q/k/v and gate/up matmuls on one bf16 input, their input gradients summed
//	alibi_fused: false        # the attention kernel takes ALiBi's bias at full rate (cuDNN through Transformer Engine)
//	passes:                   # bytes per element: fwd_bytes, bwd_bytes, saved_bytes
//	  norm: {fwd_bytes: 4, bwd_bytes: 6}
//	precision: {weight_bytes: 2, grad_bytes: 4, master_bytes: 4, moments_bytes: 8,
//	            activation_bytes: 2, residual_bytes: 2, weight_copies: false,
//	            transient_grads: false, grad_cast: false}
//	optimizer: {clip_passes: 1}
//	allocator_slack_fraction: 0.05
//	overlap: {weights: 0.85, gradients: 0.85}   # fractions hidden under compute (default: the chip's)
//	flat_collectives: false   # one flat ring over all chips instead of one per mesh level
//	per_tensor_collectives: false  # one collective per parameter tensor (DeepSpeed ZeRO-3)
//	chunk_sync: false         # the interleaved schedule syncs each model chunk on its own (Megatron-Core)
//	tensor_parallel_overlap: false # tp/cp collectives hidden under matmuls (async TP)
//	search_dispatchers: false # the search tries each MoE token dispatcher the chip runs (alltoall, deepep, hybridep)
//	fp8_recipe: delayed       # precision=fp8's recipe: delayed, tensorwise, blockwise, mxfp8, torchao, nvfp4 or none
//	per_expert_gemms: true    # one GEMM per local expert, each with its tail (Transformer Engine's GroupedLinear); false: one fused grouped kernel
//	graphed_step: false       # the step runs as one captured CUDA graph (Megatron-Core's cuda_graph_impl full_iteration)
//	graphed_layers: false     # each layer but its routed experts runs as captured CUDA graphs (--cuda-graph-scope attn moe_router moe_preprocess)
//	cp_all_gather: false      # cp's keys and values all-gathered and waited on where issued, their gradients back in fp32 (PyTorch's compiled ring attention)
//	cp_repeated_kv: false     # grouped-query keys and values repeated to the query heads before the kernel, so cp moves them repeated
//	gather_copy_out: false    # each FSDP all-gather copied out of its flat buffer into the parameters on the compute stream (FSDP2)
//
// The passes are norm, rope, act, residual, loss and lookup (model.Pass).
// Unknown keys are errors naming the line, and every number must be in the
// range model's validation allows.
func Parse(data []byte) (Profile, error) {
	p, err := parse(data, "custom")
	if err != nil {
		return Profile{}, fmt.Errorf("framework: %v", err)
	}
	return p, nil
}

// Load returns the profile arg names: a built-in profile, or a YAML file
// (a name ending in .yaml or .yml).
func Load(arg string) (Profile, error) {
	lower := strings.ToLower(arg)
	if !strings.HasSuffix(lower, ".yaml") && !strings.HasSuffix(lower, ".yml") {
		return Builtin(arg)
	}
	data, err := bounded.ReadFile(arg, bounded.ConfigBytes)
	if err != nil {
		return Profile{}, fmt.Errorf("framework: cannot read framework file %s: %v", arg, err)
	}
	base := filepath.Base(arg)
	p, err := parse(data, strings.TrimSuffix(base, filepath.Ext(base)))
	if err != nil {
		return Profile{}, fmt.Errorf("framework: file %s: %v", arg, err)
	}
	return p, nil
}

// parse is Parse without the error prefix; a profile without a name is
// called defaultName.
func parse(data []byte, defaultName string) (Profile, error) {
	if len(data) > maxYAMLBytes {
		return Profile{}, fmt.Errorf("%d bytes is too large for a framework description (at most %d)", len(data), maxYAMLBytes)
	}
	doc, err := bounded.YAML(data)
	if err != nil {
		return Profile{}, yamlError(err)
	}
	if len(doc.Content) > 0 && doc.Content[0].Kind != yaml.MappingNode {
		return Profile{}, fmt.Errorf("line %d: a framework profile is a mapping of keys such as base, attention and passes", doc.Content[0].Line)
	}
	var head struct {
		Base string `yaml:"base"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return Profile{}, yamlError(err)
	}
	baseName := head.Base
	if baseName == "" {
		baseName = Default
	}
	base, err := Builtin(baseName)
	if err != nil {
		return Profile{}, fmt.Errorf("base: %v", strings.TrimPrefix(err.Error(), "framework: "))
	}
	f, err := decode(data, defaultName, base, Variant{Kernels: base.Kernels, Precision: base.Precision})
	if err != nil {
		return Profile{}, err
	}
	p := base
	p.Name, p.Description = f.Name, f.Description
	if p.Kernels, err = f.kernels(base.Kernels); err != nil {
		return Profile{}, err
	}
	p.Precision, p.Optimizer, p.AllocatorSlackFraction = f.Precision, f.Optimizer, f.AllocatorSlackFraction
	if base.Sharded != nil {
		// The file's keys apply to the base's sharded setup too: decoded
		// again over it, so that a key the file leaves out keeps the
		// sharded setup's value.
		fs, err := decode(data, defaultName, base, *base.Sharded)
		if err != nil {
			return Profile{}, err
		}
		k, err := fs.kernels(base.Sharded.Kernels)
		if err != nil {
			return Profile{}, err
		}
		p.Sharded = &Variant{Kernels: k, Precision: fs.Precision}
	}
	for _, o := range []struct {
		name string
		v    *float64
		dst  **float64
	}{{"overlap.weights", f.Overlap.Weights, &p.Comm.WeightOverlap}, {"overlap.gradients", f.Overlap.Gradients, &p.Comm.GradOverlap}} {
		if o.v == nil {
			continue
		}
		if !(*o.v >= 0 && *o.v <= 1) {
			return Profile{}, fmt.Errorf("%s = %v must be between 0 and 1", o.name, *o.v)
		}
		v := *o.v
		*o.dst = &v
	}
	for _, b := range []struct {
		v   *bool
		dst *bool
	}{{f.FlatCollectives, &p.Comm.Flat}, {f.PerTensorCollectives, &p.Comm.PerTensor}, {f.ChunkSync, &p.Comm.ChunkSync}, {f.TensorParallelOverlap, &p.TensorParallelOverlap}, {f.SearchDispatchers, &p.Limits.SearchDispatchers},
		{f.PerExpertGEMMs, &p.PerExpertGEMMs}, {f.GraphedStep, &p.Comm.GraphedStep}, {f.GraphedLayers, &p.Comm.GraphedLayers},
		{f.CPAllGather, &p.Comm.CPAllGather}, {f.CPRepeatedKV, &p.Comm.CPRepeatedKV}, {f.GatherCopyOut, &p.Comm.GatherCopyOut}} {
		if b.v != nil {
			*b.dst = *b.v
		}
	}
	if f.FP8Recipe != nil {
		switch name := strings.ToLower(strings.TrimSpace(*f.FP8Recipe)); name {
		case "none":
			p.FP8 = nil
		default:
			r, ok := model.LookupFP8Recipe(name)
			if !ok {
				return Profile{}, fmt.Errorf("fp8_recipe %q is unknown: use %s or none", *f.FP8Recipe, strings.Join(model.FP8RecipeNames(), ", "))
			}
			p.FP8 = &r
		}
	}
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// decode reads a framework file over the values of base, with the kernels'
// attention rate and the precision of v.
func decode(data []byte, defaultName string, base Profile, v Variant) (file, error) {
	f := file{
		Name: defaultName, Description: "custom framework profile based on " + base.Name,
		AttentionRate: v.Kernels.AttentionRate, Precision: v.Precision, Optimizer: base.Optimizer,
		AllocatorSlackFraction: base.AllocatorSlackFraction, Passes: map[string]model.PassCost{},
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return file{}, yamlError(err)
	}
	return f, nil
}

// kernels returns k with the file's attention kernel, rate, projections
// and passes.
func (f file) kernels(k model.Kernels) (model.Kernels, error) {
	switch f.Attention {
	case "":
	case attentionFlash:
		k.Attention = model.AttentionFlash
	case attentionMaterialized:
		k.Attention = model.AttentionMaterialized
	default:
		return k, fmt.Errorf("attention %q is unknown: use %s or %s", f.Attention, attentionFlash, attentionMaterialized)
	}
	k.AttentionRate = f.AttentionRate
	if f.SplitProjections != nil {
		k.SplitProjections = *f.SplitProjections
	}
	if f.SeparateProjections != nil {
		k.SeparateProjections = *f.SeparateProjections
	}
	if f.ALiBiFused != nil {
		k.ALiBiFused = *f.ALiBiFused
	}
	names := model.PassNames()
	keys := make([]string, 0, len(f.Passes))
	for name := range f.Passes {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	for _, name := range keys {
		i := slices.Index(names, name)
		if i < 0 {
			return k, fmt.Errorf("passes: %q is not a pass; the passes are %s", name, strings.Join(names, ", "))
		}
		k.Passes[i] = f.Passes[name]
	}
	return k, nil
}

// Validate reports the first field of p out of its range.
func (p Profile) Validate() error {
	if strings.TrimSpace(p.Name) == "" {
		return errors.New("the profile has no name")
	}
	errs := []error{p.Kernels.Validate(), p.Precision.Validate(), p.Optimizer.Validate()}
	if p.Sharded != nil {
		errs = append(errs, p.Sharded.Kernels.Validate(), p.Sharded.Precision.Validate())
	}
	for _, err := range errs {
		if err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "model: "))
		}
	}
	if !(p.AllocatorSlackFraction >= 0 && p.AllocatorSlackFraction < 1) {
		return fmt.Errorf("allocator_slack_fraction = %v must be at least 0 and below 1", p.AllocatorSlackFraction)
	}
	return nil
}

// yamlError shortens the YAML library's messages to one sentence.
func yamlError(err error) error {
	// One line, of at most bounded.MaxProblems problems.
	if pe, ok := errors.AsType[*bounded.ProblemsError](err); ok {
		return errors.New(strings.Join(pe.Problems, "; "))
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, e := range te.Errors {
			msgs[i] = strings.ReplaceAll(text.Squash(e), " in type framework.file", "")
		}
		return errors.New(strings.Join(bounded.Problems(msgs), "; "))
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = strings.ReplaceAll(msg, " in type framework.file", "")
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
	return errors.New(msg)
}
