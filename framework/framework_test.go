package framework_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// mustBuiltin returns the built-in profile name or fails the test.
func mustBuiltin(t *testing.T, name string) framework.Profile {
	t.Helper()
	p, err := framework.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stepBytes is the optimizer step's HBM traffic per parameter under p.
func stepBytes(p framework.Profile) float64 {
	o := p.SearchOptions()
	return o.Program.Precision.StepBytes(o.Program.Optimizer)
}

// checkOneSentence fails unless err is one line that starts with the
// package's prefix.
// manyKeys returns n distinct unknown keys, one a line.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "key%d: 1\n", i)
	}
	return b.String()
}

func checkOneSentence(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "framework: ") {
		t.Errorf("error %q lacks the framework: prefix", msg)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q spans several lines", msg)
	}
}

func TestParse(t *testing.T) {
	generic := mustBuiltin(t, "generic")
	titan := mustBuiltin(t, "torchtitan")
	for _, tc := range []struct {
		name  string
		yaml  string
		check func(t *testing.T, p framework.Profile)
	}{
		{
			name: "empty document is generic called custom",
			yaml: "",
			check: func(t *testing.T, p framework.Profile) {
				if p.Name != "custom" {
					t.Errorf("name %q, want custom", p.Name)
				}
				if p.Description != "custom framework profile based on generic" {
					t.Errorf("description %q", p.Description)
				}
				want := generic
				want.Name, want.Description = p.Name, p.Description
				if !reflect.DeepEqual(p, want) {
					t.Errorf("profile %+v, want generic's settings %+v", p, want)
				}
			},
		},
		{
			name: "comments only",
			yaml: "# nothing here\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Name != "custom" || !reflect.DeepEqual(p.SearchOptions(), generic.SearchOptions()) {
					t.Errorf("profile %+v, want generic's settings", p)
				}
			},
		},
		{
			name: "name and description",
			yaml: "name: my-stack\ndescription: what we run\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Name != "my-stack" || p.Description != "what we run" {
					t.Errorf("name %q, description %q", p.Name, p.Description)
				}
			},
		},
		{
			name: "base torchtitan inherits its kernels and precision",
			yaml: "base: torchtitan\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Kernels != titan.Kernels || p.Precision != titan.Precision || p.Optimizer != titan.Optimizer {
					t.Errorf("kernels %+v, precision %+v, optimizer %+v; want torchtitan's %+v, %+v, %+v",
						p.Kernels, p.Precision, p.Optimizer, titan.Kernels, titan.Precision, titan.Optimizer)
				}
				if p.Kernels.AttentionRate != 0.35 {
					t.Errorf("attention rate %v, want torchtitan's 0.35", p.Kernels.AttentionRate)
				}
				if p.Description != "custom framework profile based on torchtitan" {
					t.Errorf("description %q", p.Description)
				}
			},
		},
		{
			name: "base is case-insensitive",
			yaml: "base: TorchTitan\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Kernels != titan.Kernels {
					t.Errorf("kernels %+v, want torchtitan's", p.Kernels)
				}
			},
		},
		{
			name: "one pass replaces the base's entry whole",
			yaml: "base: torchtitan\npasses: {norm: {fwd_bytes: 5, bwd_bytes: 7}}\n",
			check: func(t *testing.T, p framework.Profile) {
				// torchtitan's norm keeps 8 bytes; the override gives none.
				if got, want := p.Kernels.Passes[model.PassNorm], (model.PassCost{FwdBytes: 5, BwdBytes: 7}); got != want {
					t.Errorf("norm %+v, want %+v", got, want)
				}
				for _, pass := range []model.Pass{model.PassRope, model.PassAct, model.PassResidual, model.PassLoss, model.PassLookup} {
					if p.Kernels.Passes[pass] != titan.Kernels.Passes[pass] {
						t.Errorf("%s %+v changed from the base's %+v", pass, p.Kernels.Passes[pass], titan.Kernels.Passes[pass])
					}
				}
			},
		},
		{
			name: "passes over generic",
			yaml: "passes:\n  norm: {fwd_bytes: 5, bwd_bytes: 7}\n  loss: {fwd_bytes: 1, bwd_bytes: 2, saved_bytes: 3, transient_bytes: 4}\n",
			check: func(t *testing.T, p framework.Profile) {
				want := generic.Kernels
				want.Passes[model.PassNorm] = model.PassCost{FwdBytes: 5, BwdBytes: 7}
				want.Passes[model.PassLoss] = model.PassCost{FwdBytes: 1, BwdBytes: 2, SavedBytes: 3, TransientBytes: 4}
				if p.Kernels != want {
					t.Errorf("kernels %+v, want %+v", p.Kernels, want)
				}
			},
		},
		{
			name: "attention materialized",
			yaml: "attention: materialized\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Kernels.Attention != model.AttentionMaterialized {
					t.Errorf("attention kernel %v, want materialized", p.Kernels.Attention)
				}
			},
		},
		{
			name: "attention flash over a base",
			yaml: "base: megatron\nattention: flash\nattention_rate: 2.5\nsplit_projections: true\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Kernels.Attention != model.AttentionFlash || p.Kernels.AttentionRate != 2.5 || !p.Kernels.SplitProjections {
					t.Errorf("kernels %+v", p.Kernels)
				}
			},
		},
		{
			name: "overlap weights 0 is a pointer to 0",
			yaml: "overlap: {weights: 0}\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Comm.WeightOverlap == nil || *p.Comm.WeightOverlap != 0 {
					t.Errorf("weight overlap %v, want a pointer to 0", p.Comm.WeightOverlap)
				}
				if p.Comm.GradOverlap != nil {
					t.Errorf("gradient overlap %v, want nil (the chip's)", *p.Comm.GradOverlap)
				}
				if o := p.SearchOptions().Cost.Comm.WeightOverlap; o == nil || *o != 0 {
					t.Errorf("SearchOptions' weight overlap %v, want a pointer to 0", o)
				}
			},
		},
		{
			name: "overlap gradients",
			yaml: "overlap: {gradients: 1}\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Comm.GradOverlap == nil || *p.Comm.GradOverlap != 1 || p.Comm.WeightOverlap != nil {
					t.Errorf("comm %+v", p.Comm)
				}
			},
		},
		{
			name: "flat collectives",
			yaml: "flat_collectives: true\n",
			check: func(t *testing.T, p framework.Profile) {
				if !p.Comm.Flat || p.Comm.PerTensor {
					t.Errorf("comm %+v, want flat only", p.Comm)
				}
			},
		},
		{
			name: "booleans switch the base's off",
			yaml: "base: deepspeed\nflat_collectives: false\nper_tensor_collectives: false\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Comm.Flat || p.Comm.PerTensor || p.Comm.WeightOverlap == nil || *p.Comm.WeightOverlap != 0 {
					t.Errorf("comm %+v, want deepspeed's overlap without flat and per-tensor collectives", p.Comm)
				}
			},
		},
		{
			name: "tensor parallel overlap",
			yaml: "tensor_parallel_overlap: true\n",
			check: func(t *testing.T, p framework.Profile) {
				if !p.TensorParallelOverlap || !p.SearchOptions().Cost.CollectiveMatmul {
					t.Errorf("tensor parallel overlap %v, collective matmul %v", p.TensorParallelOverlap, p.SearchOptions().Cost.CollectiveMatmul)
				}
			},
		},
		{
			name: "search dispatchers",
			yaml: "base: megatron\nsearch_dispatchers: true\n",
			check: func(t *testing.T, p framework.Profile) {
				base := mustBuiltin(t, "megatron")
				if base.Limits.SearchDispatchers || !p.Limits.SearchDispatchers {
					t.Errorf("search dispatchers: megatron %v, file %v; want false, true", base.Limits.SearchDispatchers, p.Limits.SearchDispatchers)
				}
			},
		},
		{
			name: "layers graphed but for their experts",
			yaml: "base: megatron\ngraphed_layers: true\n",
			check: func(t *testing.T, p framework.Profile) {
				base := mustBuiltin(t, "megatron")
				bo, o := base.SearchOptions(), p.SearchOptions()
				if bo.Cost.Comm.GraphedLayers || !o.Cost.Comm.GraphedLayers || !o.Cost.PerExpertGEMMs || o.Cost.Comm.GraphedStep {
					t.Errorf("graphed layers: megatron %v, file %v (per-expert GEMMs %v, graphed step %v); want false, true (true, false)",
						bo.Cost.Comm.GraphedLayers, o.Cost.Comm.GraphedLayers, o.Cost.PerExpertGEMMs, o.Cost.Comm.GraphedStep)
				}
			},
		},
		{
			name: "context parallelism as torchtitan compiled it",
			yaml: "base: megatron\ncp_all_gather: true\ncp_repeated_kv: true\n",
			check: func(t *testing.T, p framework.Profile) {
				base := mustBuiltin(t, "megatron")
				tt := mustBuiltin(t, "torchtitan")
				bc, c, tc := base.SearchOptions().Cost.Comm, p.SearchOptions().Cost.Comm, tt.SearchOptions().Cost.Comm
				if bc.CPAllGather || bc.CPRepeatedKV || !c.CPAllGather || !c.CPRepeatedKV || !tc.CPAllGather || tc.CPRepeatedKV {
					t.Errorf("cp all-gather, repeated kv: megatron %v %v, file %v %v, torchtitan %v %v; want false false, true true, true false",
						bc.CPAllGather, bc.CPRepeatedKV, c.CPAllGather, c.CPRepeatedKV, tc.CPAllGather, tc.CPRepeatedKV)
				}
			},
		},
		{
			name: "FSDP2's copy-out off in a torchtitan file",
			yaml: "base: torchtitan\ngather_copy_out: false\n",
			check: func(t *testing.T, p framework.Profile) {
				base, tt := mustBuiltin(t, "megatron"), mustBuiltin(t, "torchtitan")
				bc, c, tc := base.SearchOptions().Cost.Comm, p.SearchOptions().Cost.Comm, tt.SearchOptions().Cost.Comm
				if bc.GatherCopyOut || c.GatherCopyOut || !tc.GatherCopyOut || !c.TPPlan {
					t.Errorf("gather copy-out: megatron %v, file %v, torchtitan %v (file's TP plan %v); want false, false, true (true)",
						bc.GatherCopyOut, c.GatherCopyOut, tc.GatherCopyOut, c.TPPlan)
				}
			},
		},
		{
			name: "fused grouped MLP under one CUDA graph",
			yaml: "base: megatron\nper_expert_gemms: false\ngraphed_step: true\n",
			check: func(t *testing.T, p framework.Profile) {
				base := mustBuiltin(t, "megatron")
				bo, o := base.SearchOptions(), p.SearchOptions()
				if !bo.Cost.PerExpertGEMMs || bo.Cost.Comm.GraphedStep || overlapInNode(t, bo) {
					t.Errorf("megatron: per-expert GEMMs %v, graphed step %v, overlap within NVLink %v; want true, false, false",
						bo.Cost.PerExpertGEMMs, bo.Cost.Comm.GraphedStep, overlapInNode(t, bo))
				}
				if o.Cost.PerExpertGEMMs || !o.Cost.Comm.GraphedStep || !overlapInNode(t, o) {
					t.Errorf("file: per-expert GEMMs %v, graphed step %v, overlap within NVLink %v; want false, true, true",
						o.Cost.PerExpertGEMMs, o.Cost.Comm.GraphedStep, overlapInNode(t, o))
				}
			},
		},
		{
			name: "precision override keeps the base's other fields",
			yaml: "precision: {residual_bytes: 4}\n",
			check: func(t *testing.T, p framework.Profile) {
				want := model.MixedPrecision()
				want.Residual = 4
				if p.Precision != want {
					t.Errorf("precision %+v, want %+v", p.Precision, want)
				}
			},
		},
		{
			name: "precision override over torchtitan",
			yaml: "base: torchtitan\nprecision: {weight_copies: false, moments_bytes: 4}\n",
			check: func(t *testing.T, p framework.Profile) {
				want := model.AutocastPrecision()
				want.WeightCopies, want.Moments, want.PipelineUnsharded, want.ReduceCopy = false, 4, true, true
				if p.Precision != want {
					t.Errorf("precision %+v, want %+v", p.Precision, want)
				}
			},
		},
		{
			name: "optimizer clip passes",
			yaml: "optimizer: {clip_passes: 3}\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.Optimizer.ClipPasses != 3 {
					t.Errorf("clip passes %v, want 3", p.Optimizer.ClipPasses)
				}
				// generic's 30 bytes plus three passes over 4-byte gradients.
				if got := stepBytes(p); got != 42 {
					t.Errorf("step bytes %v, want 42", got)
				}
			},
		},
		{
			name: "allocator slack",
			yaml: "base: pytorch\nallocator_slack_fraction: 0.2\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.AllocatorSlackFraction != 0.2 || p.SearchOptions().Memory.AllocatorSlackFraction != 0.2 {
					t.Errorf("allocator slack %v", p.AllocatorSlackFraction)
				}
			},
		},
		{
			name: "pytorch's slack is inherited",
			yaml: "base: pytorch\n",
			check: func(t *testing.T, p framework.Profile) {
				if p.AllocatorSlackFraction != 0.07 || !p.Kernels.SplitProjections {
					t.Errorf("allocator slack %v, split projections %v", p.AllocatorSlackFraction, p.Kernels.SplitProjections)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := framework.Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.yaml, err)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("parsed profile fails Validate: %v", err)
			}
			tc.check(t, p)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "base: megatron\noptimiser: {clip_passes: 1}\n", "line 2: field optimiser not found"},
		{"unknown nested key", "passes: {norm: {fwd: 1}}\n", "field fwd not found"},
		{"unknown pass", "passes: {nrm: {fwd_bytes: 1}}\n", `passes: "nrm" is not a pass; the passes are norm, rope, act, residual, loss, lookup`},
		{"unknown attention kernel", "attention: paged\n", `attention "paged" is unknown: use flash or materialized`},
		{"unknown base", "base: megatorn\n", `base: unknown framework "megatorn" (nearest: megatron;`},
		{"base that is a file", "base: other.yaml\n", `base: unknown framework "other.yaml"`},
		{"negative pass bytes", "passes: {norm: {fwd_bytes: -1}}\n", "kernels norm.fwd_bytes = -1 must be between 0 and 1024 bytes per element"},
		{"absurd pass bytes", "passes: {loss: {transient_bytes: 2000}}\n", "kernels loss.transient_bytes = 2000 must be between 0 and 1024"},
		{"negative precision bytes", "precision: {weight_bytes: -2}\n", "precision weight_bytes = -2 must be between 0 and 64 bytes"},
		{"attention rate 0", "attention_rate: 0\n", "attention_rate = 0 must be above 0 and at most 10"},
		{"attention rate 11", "attention_rate: 11\n", "attention_rate = 11 must be above 0 and at most 10"},
		{"attention rate NaN", "attention_rate: .nan\n", "attention_rate = NaN must be above 0"},
		{"overlap 1.5", "overlap: {weights: 1.5}\n", "overlap.weights = 1.5 must be between 0 and 1"},
		{"negative gradient overlap", "overlap: {gradients: -0.1}\n", "overlap.gradients = -0.1 must be between 0 and 1"},
		{"overlap NaN", "overlap: {weights: .nan}\n", "overlap.weights = NaN must be between 0 and 1"},
		{"allocator slack 1", "allocator_slack_fraction: 1\n", "allocator_slack_fraction = 1 must be at least 0 and below 1"},
		{"negative allocator slack", "allocator_slack_fraction: -0.5\n", "allocator_slack_fraction = -0.5 must be at least 0 and below 1"},
		{"clip passes 9", "optimizer: {clip_passes: 9}\n", "optimizer clip_passes = 9 must be between 0 and 8"},
		{"empty name", "name: ''\n", "the profile has no name"},
		{"malformed YAML", "passes: [\n", "line 1: did not find expected node content"},
		{"wrong type", "attention_rate: fast\n", "line 1: cannot unmarshal !!str `fast` into float64"},
		{"list for base", "base: [megatron]\n", "line 1: cannot unmarshal !!seq into string"},
		{"repeated key", strings.Repeat("attention_rate: 1\n", 10_000), `line 1: key "attention_rate" is given 10000 times (lines 1, 2, 3, ...); give it once`},
		{"many unknown keys", strings.Repeat("a: 1\nb: 2\n", 1) + manyKeys(900), "; and 883 more problems"},
		{"two documents", "base: megatron\n---\nbase: maxtext\n", "the file holds more than one YAML document (the second begins at line 2)"},
		{"over 1 MiB", "# " + strings.Repeat("x", 1<<20) + "\n", "bytes is too large for a framework description (at most 1048576)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := framework.Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse(%.60q) = %+v, want an error containing %q", tc.yaml, p, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%.60q): %v\nwant an error containing %q", tc.yaml, err, tc.want)
			}
			checkOneSentence(t, err)
			if !reflect.DeepEqual(p, framework.Profile{}) {
				t.Errorf("a failed Parse returned %+v, want the zero profile", p)
			}
		})
	}
}

func TestParseFullDocument(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := framework.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	titan := mustBuiltin(t, "torchtitan")
	wantKernels := titan.Kernels
	wantKernels.Attention, wantKernels.AttentionRate, wantKernels.SplitProjections = model.AttentionFlash, 1, true
	wantKernels.Passes[model.PassNorm] = model.PassCost{FwdBytes: 4, BwdBytes: 6, SavedBytes: 2}
	wantKernels.Passes[model.PassLoss] = model.PassCost{FwdBytes: 4, BwdBytes: 4, SavedBytes: 2, TransientBytes: 2}
	wantPrecision := model.Precision{Weight: 2, Grad: 4, Master: 4, Moments: 8, Activation: 2, Residual: 4,
		WeightCopies: true, TransientGrads: true, GradCast: true, PipelineUnsharded: true, ReduceCopy: true}
	switch {
	case p.Name != "my-stack" || p.Description != "torchtitan's Llama with SDPA's causal flash kernel":
		t.Errorf("name %q, description %q", p.Name, p.Description)
	case p.Kernels != wantKernels:
		t.Errorf("kernels %+v, want %+v", p.Kernels, wantKernels)
	case p.Precision != wantPrecision:
		t.Errorf("precision %+v, want %+v", p.Precision, wantPrecision)
	case p.Optimizer.ClipPasses != 1 || p.AllocatorSlackFraction != 0.05:
		t.Errorf("optimizer %+v, allocator slack %v", p.Optimizer, p.AllocatorSlackFraction)
	case p.Comm.WeightOverlap == nil || *p.Comm.WeightOverlap != 0.85 || p.Comm.GradOverlap == nil || *p.Comm.GradOverlap != 0.5:
		t.Errorf("overlap %v, %v", p.Comm.WeightOverlap, p.Comm.GradOverlap)
	case !p.Comm.Flat || !p.Comm.PerTensor || !p.TensorParallelOverlap:
		t.Errorf("comm %+v, tensor parallel overlap %v", p.Comm, p.TensorParallelOverlap)
	}
}

// Each Parse returns its own overlap values: changing one profile's does
// not change another's or a built-in's.
func TestParseDoesNotShareState(t *testing.T) {
	a, err := framework.Parse([]byte("base: deepspeed\noverlap: {weights: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := framework.Parse([]byte("base: deepspeed\noverlap: {weights: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	*a.Comm.WeightOverlap = 0.9
	if *b.Comm.WeightOverlap != 0.5 {
		t.Errorf("a second parse's weight overlap is %v, want 0.5", *b.Comm.WeightOverlap)
	}
	if ds := mustBuiltin(t, "deepspeed"); *ds.Comm.WeightOverlap != 0 {
		t.Errorf("deepspeed's weight overlap is %v after changing a parsed profile's", *ds.Comm.WeightOverlap)
	}
}

func TestBuiltins(t *testing.T) {
	want := []string{"generic", "megatron", "torchtitan", "pytorch", "maxtext", "deepspeed"}
	if got := framework.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if framework.Default != "generic" {
		t.Errorf("Default = %q, want generic", framework.Default)
	}
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			p := mustBuiltin(t, name)
			if p.Name != name {
				t.Errorf("Builtin(%q).Name = %q", name, p.Name)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if strings.TrimSpace(p.Description) == "" {
				t.Error("no description")
			}
			// A built-in's settings read back from a file based on it.
			q, err := framework.Parse([]byte("base: " + name + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(q.SearchOptions(), p.SearchOptions()) {
				t.Errorf("a file with base %s has options %+v, want %+v", name, q.SearchOptions(), p.SearchOptions())
			}
			for _, spelling := range []string{strings.ToUpper(name), " " + name + "\t", strings.ToUpper(name[:1]) + name[1:]} {
				if q, err := framework.Builtin(spelling); err != nil || q.Name != name {
					t.Errorf("Builtin(%q) = %q, %v", spelling, q.Name, err)
				}
			}
			if q, err := framework.Load(name); err != nil || !reflect.DeepEqual(q, p) {
				t.Errorf("Load(%q) = %+v, %v; want the built-in", name, q, err)
			}
		})
	}
}

func TestBuiltinUnknown(t *testing.T) {
	for _, tc := range []struct{ name, nearest string }{
		{"megatorn", "megatron"},
		{"torchtitam", "torchtitan"},
		{"deepsped", "deepspeed"},
		{"pytroch", "pytorch"},
		{"maxtxt", "maxtext"},
		{"generik", "generic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := framework.Builtin(tc.name)
			if err == nil {
				t.Fatalf("Builtin(%q) succeeded", tc.name)
			}
			checkOneSentence(t, err)
			want := `framework: unknown framework "` + tc.name + `" (nearest: ` + tc.nearest + `; known: generic, megatron, torchtitan, pytorch, maxtext, deepspeed, or a YAML file)`
			if err.Error() != want {
				t.Errorf("error %q\nwant      %q", err, want)
			}
		})
	}
	if _, err := framework.Builtin(""); err == nil {
		t.Error("Builtin(\"\") succeeded")
	}
}

// Builtin builds its profiles on every call: a caller changing one changes
// no other caller's.
func TestBuiltinReturnsCopies(t *testing.T) {
	a := mustBuiltin(t, "deepspeed")
	*a.Comm.WeightOverlap = 1
	a.Kernels.Passes[model.PassNorm].FwdBytes = 99
	b := mustBuiltin(t, "deepspeed")
	if *b.Comm.WeightOverlap != 0 || b.Kernels.Passes[model.PassNorm].FwdBytes == 99 {
		t.Errorf("a change to one deepspeed profile reached another: %+v", b)
	}
}

// The figures below are worked by hand from model.Precision.StepBytes:
// fused AdamW reads the gradient, the master weight and the two moments and
// writes the master weight and the moments back, Grad + 2(Master+Moments);
// a persistent Weight-sized copy (no WeightCopies) is written too; clipping
// adds ClipPasses reads of the gradients.
func TestHandCheckedFigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		want float64
		why  string
	}{
		// Megatron's mixed precision: 4 + 2(4+8) = 28, the bf16 weight 2:
		// 30, clipping's one gradient pass 4: 34.
		{"generic", 34, "2+4+4+8 mixed precision, one clipping pass"},
		{"megatron", 34, "as generic"},
		// Autocast: 4 + 2(4+8) = 28, no separate weight (the matmuls read
		// per micro-batch copies), no clipping.
		{"torchtitan", 28, "AutocastPrecision, no clipping"},
		{"pytorch", 28, "AutocastPrecision, no clipping"},
		// MaxText: fp32 parameters cast per step (WeightCopies): 28, one
		// clipping pass: 32.
		{"maxtext", 32, "fp32 parameters cast for the matmuls, one clipping pass"},
		// DeepSpeed: 30 and three clipping passes of 4 bytes: 42.
		{"deepspeed", 42, "mixed precision, clip_grad_norm_'s three passes"},
	} {
		if got := stepBytes(mustBuiltin(t, tc.name)); got != tc.want {
			t.Errorf("%s: StepBytes = %v, want %v (%s)", tc.name, got, tc.want, tc.why)
		}
	}

	g := mustBuiltin(t, "generic")
	if g.Precision != model.MixedPrecision() || g.Optimizer.ClipPasses != 1 {
		t.Errorf("generic: precision %+v, optimizer %+v", g.Precision, g.Optimizer)
	}
	if p := g.Precision; p.Weight+p.Grad+p.Master+p.Moments != 18 {
		t.Errorf("generic keeps %v bytes of model state per parameter, want 2+4+4+8 = 18", p.Weight+p.Grad+p.Master+p.Moments)
	}
	if g.Comm.WeightOverlap != nil || g.Comm.GradOverlap != nil || g.Comm.Flat || g.Comm.PerTensor || g.TensorParallelOverlap {
		t.Errorf("generic: comm %+v, tensor parallel overlap %v; want the chip's defaults", g.Comm, g.TensorParallelOverlap)
	}

	tt := mustBuiltin(t, "torchtitan")
	ttPrecision := model.AutocastPrecision()
	ttPrecision.PipelineUnsharded, ttPrecision.ReduceCopy = true, true // FSDP2: under pipeline parallelism, its reduce-scatter copy
	if tt.Precision != ttPrecision || tt.Optimizer.ClipPasses != 0 || tt.Kernels.AttentionRate != 0.35 {
		t.Errorf("torchtitan: precision %+v, optimizer %+v, attention rate %v", tt.Precision, tt.Optimizer, tt.Kernels.AttentionRate)
	}

	ds := mustBuiltin(t, "deepspeed")
	c := ds.SearchOptions().Cost.Comm
	if c.WeightOverlap == nil || *c.WeightOverlap != 0 {
		t.Errorf("deepspeed: weight overlap %v, want a pointer to 0 (synchronous ZeRO-3 fetch)", c.WeightOverlap)
	}
	if !c.Flat || !c.PerTensor || c.GradOverlap != nil {
		t.Errorf("deepspeed: comm %+v, want flat, per-tensor and the chip's gradient overlap", c)
	}

	mt := mustBuiltin(t, "maxtext")
	if !mt.Precision.WeightCopies || !mt.Precision.TransientGrads {
		t.Errorf("maxtext: precision %+v, want weight copies and transient gradients", mt.Precision)
	}
}

// TestTorchtitanShardedVariant checks torchtitan's FSDP2 setup (fsdp or cp
// above 1): bf16 parameters give a bf16 residual stream, the norms fuse as
// FusedKernels, torchtitan's Llama runs SDPA's flash kernel at full rate,
// the compiled loss entry stays; everything else is autocast's layout.
// A file based on torchtitan applies its keys to both setups.
func TestTorchtitanShardedVariant(t *testing.T) {
	tt := mustBuiltin(t, "torchtitan")
	if tt.Sharded == nil {
		t.Fatal("torchtitan has no sharded variant")
	}
	sh := *tt.Sharded
	want := model.AutocastPrecision()
	want.Residual, want.PipelineUnsharded, want.ReduceCopy = 2, true, true
	if sh.Precision != want {
		t.Errorf("sharded precision %+v, want autocast's with a 2-byte residual, unsharded under pipeline parallelism, FSDP2's reduce-scatter copy", sh.Precision)
	}
	fused := model.FusedKernels()
	if sh.Kernels.AttentionRate != 1 || sh.Kernels.Passes[model.PassNorm] != fused.Passes[model.PassNorm] ||
		sh.Kernels.Passes[model.PassResidual] != fused.Passes[model.PassResidual] ||
		sh.Kernels.Passes[model.PassLoss] != tt.Kernels.Passes[model.PassLoss] {
		t.Errorf("sharded kernels %+v", sh.Kernels)
	}
	o := tt.SearchOptions()
	if o.ShardedProgram == nil || o.ShardedProgram.Precision != sh.Precision || o.ShardedProgram.Kernels != sh.Kernels ||
		o.ShardedProgram.Optimizer != tt.Optimizer {
		t.Errorf("search options' sharded program %+v", o.ShardedProgram)
	}
	for _, name := range []string{"generic", "megatron", "maxtext", "deepspeed"} {
		if p := mustBuiltin(t, name); p.Sharded != nil || p.SearchOptions().ShardedProgram != nil {
			t.Errorf("%s has a sharded variant", name)
		}
	}

	f, err := framework.Parse([]byte("base: torchtitan\nattention_rate: 0.5\nprecision: {moments_bytes: 4}\npasses:\n  rope: {fwd_bytes: 9, bwd_bytes: 9}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Sharded == nil {
		t.Fatal("a file based on torchtitan lost the sharded variant")
	}
	for _, v := range []struct {
		name string
		k    model.Kernels
		pr   model.Precision
		res  float64
	}{{"main", f.Kernels, f.Precision, 4}, {"sharded", f.Sharded.Kernels, f.Sharded.Precision, 2}} {
		if v.k.AttentionRate != 0.5 || v.pr.Moments != 4 || v.k.Passes[model.PassRope] != (model.PassCost{FwdBytes: 9, BwdBytes: 9}) {
			t.Errorf("%s setup: attention rate %v, moments %v, rope %+v; want the file's 0.5, 4, 9/9", v.name, v.k.AttentionRate, v.pr.Moments, v.k.Passes[model.PassRope])
		}
		if v.pr.Residual != v.res {
			t.Errorf("%s setup: residual %v bytes, want the base's %v (the file leaves it)", v.name, v.pr.Residual, v.res)
		}
	}
	bad := tt
	bad.Sharded = &framework.Variant{Kernels: sh.Kernels, Precision: sh.Precision}
	bad.Sharded.Precision.Residual = -1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "residual") {
		t.Errorf("Validate of a bad sharded precision: %v", err)
	}
}

// TestPyTorchShardedVariant checks eager PyTorch under FSDP: its bf16
// parameters make the residual stream bf16 (2 bytes against autocast's 4)
// while the eager kernels and DDP's bucket copy setting stay as they are.
func TestPyTorchShardedVariant(t *testing.T) {
	pt := mustBuiltin(t, "pytorch")
	if pt.Sharded == nil {
		t.Fatal("pytorch has no sharded variant")
	}
	sh := *pt.Sharded
	want := pt.Precision
	want.Residual = 2
	if pt.Precision.Residual != 4 || sh.Precision != want {
		t.Errorf("precision %+v, sharded %+v; want the sharded one with a 2-byte residual", pt.Precision, sh.Precision)
	}
	if sh.Kernels != pt.Kernels {
		t.Errorf("sharded kernels %+v, want the eager ones %+v", sh.Kernels, pt.Kernels)
	}
	if o := pt.SearchOptions(); o.ShardedProgram == nil || o.ShardedProgram.Precision != sh.Precision {
		t.Errorf("search options' sharded program %+v", o.ShardedProgram)
	}
}

func TestSearchOptions(t *testing.T) {
	p, err := framework.Parse([]byte("base: pytorch\noverlap: {gradients: 0.25}\ntensor_parallel_overlap: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := p.SearchOptions()
	if o.Program != p.ProgramOptions() {
		t.Errorf("program options %+v, want %+v", o.Program, p.ProgramOptions())
	}
	if o.Program.Kernels != p.Kernels || o.Program.Precision != p.Precision || o.Program.Optimizer != p.Optimizer {
		t.Errorf("program options %+v do not carry the profile's", o.Program)
	}
	if o.Memory.AllocatorSlackFraction != 0.07 || o.Memory.ReservedFraction != 0 {
		t.Errorf("memory options %+v", o.Memory)
	}
	if !o.Cost.CollectiveMatmul || o.Cost.Comm.GradOverlap == nil || *o.Cost.Comm.GradOverlap != 0.25 || o.Cost.Trace || o.Cost.SkipCollectives {
		t.Errorf("cost options %+v", o.Cost)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	p, err := framework.Load(write("my-stack.yaml", "base: megatron\noptimizer: {clip_passes: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "my-stack" || p.Optimizer.ClipPasses != 3 || p.Description != "custom framework profile based on megatron" {
		t.Errorf("Load: name %q, optimizer %+v, description %q", p.Name, p.Optimizer, p.Description)
	}

	// The file's name: key wins over its base name; .yml and upper case work.
	p, err = framework.Load(write("Other.YML", "name: named\n"))
	if err != nil || p.Name != "named" {
		t.Errorf("Load of a .YML file with a name: %q, %v", p.Name, err)
	}
	p, err = framework.Load(write("several.dots.yml", ""))
	if err != nil || p.Name != "several.dots" {
		t.Errorf("Load of several.dots.yml: name %q, %v", p.Name, err)
	}

	p, err = framework.Load(filepath.Join("testdata", "deepspeed-prefetch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "deepspeed-prefetch" || p.Comm.WeightOverlap == nil || *p.Comm.WeightOverlap != 0.85 || p.Comm.PerTensor || !p.Comm.Flat ||
		p.Optimizer.ClipPasses != 3 {
		t.Errorf("deepspeed-prefetch.yml: %+v", p)
	}

	// A bad file's error names the file and the problem, in one sentence.
	bad := write("bad.yaml", "attention: paged\n")
	_, err = framework.Load(bad)
	if err == nil || !strings.Contains(err.Error(), "file "+bad+": attention \"paged\" is unknown") {
		t.Errorf("Load of a bad file: %v", err)
	} else {
		checkOneSentence(t, err)
	}
	_, err = framework.Load(filepath.Join("testdata", "unknown-key.yaml"))
	if err == nil || !strings.Contains(err.Error(), "unknown-key.yaml: line 2: field optimiser not found") {
		t.Errorf("Load of a file with an unknown key: %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such.yaml")
	_, err := framework.Load(missing)
	if err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
	checkOneSentence(t, err)
	if want := "framework: cannot read framework file " + missing + ": no such file or directory"; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	// A directory named like a file is no file either.
	dir := filepath.Join(t.TempDir(), "dir.yaml")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := framework.Load(dir); err == nil || !strings.Contains(err.Error(), "cannot read framework file") {
		t.Errorf("Load of a directory: %v", err)
	}
	// A name without the suffix is a built-in name, not a path.
	if _, err := framework.Load("no-such"); err == nil || !strings.Contains(err.Error(), `unknown framework "no-such"`) {
		t.Errorf("Load of an unknown name: %v", err)
	}
}

func TestValidate(t *testing.T) {
	p := mustBuiltin(t, "generic")
	for _, tc := range []struct {
		name   string
		change func(p *framework.Profile)
		want   string
	}{
		{"no name", func(p *framework.Profile) { p.Name = "  " }, "the profile has no name"},
		{"negative pass", func(p *framework.Profile) { p.Kernels.Passes[model.PassRope].BwdBytes = -1 }, "kernels rope.bwd_bytes = -1"},
		{"zero attention rate", func(p *framework.Profile) { p.Kernels.AttentionRate = 0 }, "attention_rate = 0"},
		{"precision", func(p *framework.Profile) { p.Precision.Moments = 65 }, "precision moments_bytes = 65"},
		{"optimizer", func(p *framework.Profile) { p.Optimizer.ClipPasses = -1 }, "optimizer clip_passes = -1"},
		{"allocator slack", func(p *framework.Profile) { p.AllocatorSlackFraction = 1 }, "allocator_slack_fraction = 1"},
	} {
		q := p
		tc.change(&q)
		err := q.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("%s: Validate() = %v, want %q without the model: prefix", tc.name, err, tc.want)
		}
	}
}

// TestDocsProfiles checks that the example profiles in docs/frameworks parse.
func TestDocsProfiles(t *testing.T) {
	for _, name := range []string{"megatron-2022.yaml"} {
		p, err := framework.Load("../docs/frameworks/" + name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.Name+".yaml" != name {
			t.Errorf("%s: name %q", name, p.Name)
		}
	}
}

// TestFP8Recipes checks each built-in's FP8 recipe (nil: no fp8 matmuls,
// which the search's limits refuse) and the fp8_recipe key of a file.
func TestFP8Recipes(t *testing.T) {
	for name, want := range map[string]string{
		"generic": model.FP8Delayed, "megatron": model.FP8Delayed, "torchtitan": model.FP8Torchao,
		"maxtext": model.FP8Delayed, "pytorch": "", "deepspeed": "",
	} {
		p := mustBuiltin(t, name)
		got := ""
		if p.FP8 != nil {
			got = p.FP8.Name
		}
		o := p.SearchOptions()
		if got != want || o.Limits.NoFP8 != (want == "") || (want != "" && (o.FP8 == nil || o.FP8.Name != want)) {
			t.Errorf("%s: recipe %q, limits NoFP8 %v, options %+v; want %q", name, got, o.Limits.NoFP8, o.FP8, want)
		}
	}
	for _, tc := range []struct{ yaml, want, err string }{
		{"base: megatron\nfp8_recipe: blockwise\n", model.FP8Blockwise, ""},
		{"base: generic\nfp8_recipe: none\n", "", ""},
		{"base: pytorch\nfp8_recipe: tensorwise\n", model.FP8Tensorwise, ""},
		{"base: megatron\nfp8_recipe: nvfp4\n", model.FP4NV, ""},
		{"fp8_recipe: fp4\n", "", `fp8_recipe "fp4" is unknown: use delayed, tensorwise, blockwise, mxfp8, torchao, nvfp4 or none`},
	} {
		p, err := framework.Parse([]byte(tc.yaml))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.err)
			}
			continue
		}
		got := ""
		if err == nil && p.FP8 != nil {
			got = p.FP8.Name
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: recipe %q, %v; want %q", tc.yaml, got, err, tc.want)
		}
	}
}

// TestMegatronGptOSSPasses pins the passes of Megatron-Core's eager code
// that a gpt-oss model reaches, by hand per bf16 element (see megatron()):
// the experts' output bias t + b·p, cat and cast, 4 + (2+4+4) + (4+4) +
// (4+2) = 28 forward and (2+4) + (4+2) + 2·(4+4+4) + (2+2) = 40 backward;
// YaRN's eager rotary embedding, 2 + 4 + 4 + 4 + 6 + 4 = 24 forward and
// 4 + 4 + 2 + 4 + 6 + 6 = 26 backward; the clamp of the experts'
// activation input, (2+2)·2 halves / 2 + (2+2) = 8 forward and
// ((2+1) + 5 + 2·(2+1) + 3 + 5) / 2 + (2+2) = 15 backward, a 2-byte clamped
// copy kept. The other built-ins keep the fused figures (0 and 2; rope's 4
// and 4; no clamp traffic).
func TestMegatronGptOSSPasses(t *testing.T) {
	for _, tt := range []struct {
		name              string
		bias, yarn, clamp model.PassCost
	}{
		{"megatron", model.PassCost{FwdBytes: 28, BwdBytes: 40}, model.PassCost{FwdBytes: 24, BwdBytes: 26}, model.PassCost{FwdBytes: 8, BwdBytes: 15, SavedBytes: 2}},
		{"generic", model.PassCost{FwdBytes: 0, BwdBytes: 2}, model.PassCost{FwdBytes: 4, BwdBytes: 4}, model.PassCost{}},
		{"torchtitan", model.PassCost{FwdBytes: 0, BwdBytes: 2}, model.PassCost{FwdBytes: 4, BwdBytes: 4}, model.PassCost{}},
	} {
		p, err := framework.Builtin(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Kernels.Passes[model.PassExpertBias]; got != tt.bias {
			t.Errorf("%s expert_bias = %+v, want %+v", tt.name, got, tt.bias)
		}
		if got := p.Kernels.Passes[model.PassRopeYaRN]; got != tt.yarn {
			t.Errorf("%s rope_yarn = %+v, want %+v", tt.name, got, tt.yarn)
		}
		if got := p.Kernels.Passes[model.PassActClamp]; got != tt.clamp {
			t.Errorf("%s act_clamp = %+v, want %+v", tt.name, got, tt.clamp)
		}
	}
}

// TestTorchtitanUnevenStages checks that torchtitan plans a pipeline whose
// stages cannot hold equal layers, as its default split runs one: Llama 3.1
// 405B's 126 layers on 8 stages (15, six of 16, 15: the embedding and the
// output layer each counted as a layer, torchtitan's
// pipeline_parallel_{first,last}_stage_less_layers = 1) and on 16 virtual
// stages of the interleaved schedule, as torchtitan's December 2024
// benchmark ran it, while MaxText still needs equal stages.
func TestTorchtitanUnevenStages(t *testing.T) {
	for _, tt := range []struct {
		profile, strategy string
		ok                bool
	}{
		{"torchtitan", "fsdp=8,tp=8,pp=8", true},
		{"torchtitan", "fsdp=8,tp=8,pp=8,schedule=interleaved,v=2", true},
		{"maxtext", "fsdp=8,tp=8,pp=8", false},
	} {
		s, err := space.Parse(tt.strategy)
		if err != nil {
			t.Fatal(err)
		}
		err = mustBuiltin(t, tt.profile).Limits.Check(s, 126)
		if (err == nil) != tt.ok {
			t.Errorf("%s %s on 126 layers: %v, want accepted %v", tt.profile, tt.strategy, err, tt.ok)
		}
	}
}

// overlapInNode reports whether a search under o turns the EP overlap on
// for Mixtral 8x7B at ep 8 within one H100 node (search.Problem.Space).
func overlapInNode(t *testing.T, o search.Options) bool {
	t.Helper()
	m, err := model.Preset("mixtral-8x7b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse("h100-8")
	if err != nil {
		t.Fatal(err)
	}
	fix, err := space.ParseFix("ep=8,tp=1,pp=1,mb=1,recompute=none")
	if err != nil {
		t.Fatal(err)
	}
	p, err := search.NewProblem(m, c, space.Workload{Batch: 64, SeqLen: 4096}, fix, o)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := p.Space()
	if err != nil {
		t.Fatal(err)
	}
	genes := make([]int, len(sp.Cardinalities()))
	var s space.Strategy
	for i := range sp.Cardinalities()[0] {
		genes[0] = i
		if sp.Decode(genes, &s) && s.A2AOverlap {
			return true
		}
	}
	return false
}
