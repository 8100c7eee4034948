package framework_test

import (
	"fmt"

	"github.com/meshplan/meshplan/framework"
)

func ExampleBuiltin() {
	for _, name := range []string{"Megatron", "torchtitan", "deepspeed"} {
		p, err := framework.Builtin(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		o := p.SearchOptions()
		fmt.Printf("%s: optimizer step %g bytes per parameter, attention rate %g, synchronous weight gathers %t\n",
			p.Name, o.Program.Precision.StepBytes(o.Program.Optimizer), o.Program.Kernels.AttentionRate,
			o.Cost.Comm.WeightOverlap != nil && *o.Cost.Comm.WeightOverlap == 0)
	}

	_, err := framework.Builtin("megatorn")
	fmt.Println(err)
	// Output:
	// megatron: optimizer step 34 bytes per parameter, attention rate 1, synchronous weight gathers false
	// torchtitan: optimizer step 28 bytes per parameter, attention rate 0.35, synchronous weight gathers false
	// deepspeed: optimizer step 42 bytes per parameter, attention rate 1, synchronous weight gathers true
	// framework: unknown framework "megatorn" (nearest: megatron; known: generic, megatron, torchtitan, pytorch, maxtext, deepspeed, or a YAML file)
}

func ExampleParse() {
	p, err := framework.Parse([]byte(`
name: titan-flash
base: torchtitan          # torch.compile'd PyTorch under autocast
attention_rate: 1         # SDPA with is_causal runs the flash kernel
optimizer: {clip_passes: 1}
overlap: {weights: 0.5}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	o := p.SearchOptions()
	fmt.Println(p.Name, "-", p.Description)
	fmt.Println("attention rate", p.Kernels.AttentionRate)
	fmt.Println("optimizer step", o.Program.Precision.StepBytes(o.Program.Optimizer), "bytes per parameter")
	fmt.Println("weight overlap", *o.Cost.Comm.WeightOverlap)

	_, err = framework.Parse([]byte("base: torchtitan\noverlap: {weights: 1.5}\n"))
	fmt.Println(err)
	// Output:
	// titan-flash - custom framework profile based on torchtitan
	// attention rate 1
	// optimizer step 32 bytes per parameter
	// weight overlap 0.5
	// framework: overlap.weights = 1.5 must be between 0 and 1
}
