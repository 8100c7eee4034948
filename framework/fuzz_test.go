package framework_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/framework"
)

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.y*ml"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, name := range framework.Names() {
		f.Add([]byte("base: " + name + "\n"))
	}
	for _, seed := range []string{
		"",
		"passes: {norm: {fwd_bytes: 5, bwd_bytes: 7}}\n",
		"attention: materialized\nattention_rate: 0.5\n",
		"base: megatron\nalibi_fused: false\nattention_rate: 0.5\n",
		"overlap: {weights: 0, gradients: 1}\nflat_collectives: true\nper_tensor_collectives: true\n",
		"precision: {residual_bytes: 4, weight_copies: true}\noptimizer: {clip_passes: 3}\n",
		"base: torchtitan\nprecision: {pipeline_unsharded: false}\n",
		"precision: {pipeline_unsharded: yes, grad_bytes: 2}\n",
		"allocator_slack_fraction: 0.99\n",
		"passes: {norm: ~, loss: {}}\n",
		"base: megatorn\n",
		"foo: 1\nbar: 2\n",
		"passes: {nrm: {fwd_bytes: 1}}\n",
		"passes: [\n",
		"- a\n- b\n",
		"attention_rate: .nan\n",
		"overlap: {weights: .inf}\n",
		"precision: {weight_bytes: -1e308}\n",
		"name: ''\n",
		"base: &b torchtitan\nname: *b\n",
		"a: &x [*x]\n",
		"---\n---\nbase: pytorch\n",
		"base: deepspeed\n---\nfoo: 1\n",
		"passes: {norm: {fwd_bytes: 1, fwd_bytes: 2}}\n",
		"\t- :\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := framework.Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "framework: ") {
				t.Fatalf("error without the framework: prefix: %v", err)
			}
			if !reflect.DeepEqual(p, framework.Profile{}) {
				t.Fatalf("a failed Parse returned %+v", p)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed profile fails Validate: %v\n%+v", err, p)
		}
		if strings.TrimSpace(p.Name) == "" {
			t.Fatalf("parsed profile has no name: %+v", p)
		}
		o := p.SearchOptions()
		if b := o.Program.Precision.StepBytes(o.Program.Optimizer); !(b >= 0) {
			t.Fatalf("parsed profile's optimizer step is %v bytes per parameter", b)
		}
		for _, v := range []*float64{o.Cost.Comm.WeightOverlap, o.Cost.Comm.GradOverlap} {
			if v != nil && !(*v >= 0 && *v <= 1) {
				t.Fatalf("parsed profile has overlap %v", *v)
			}
		}
	})
}
