package model_test

import (
	"fmt"

	"github.com/meshplan/meshplan/model"
)

func ExamplePreset() {
	s, err := model.Preset("mixtral-8x7b")
	if err != nil {
		fmt.Println(err)
		return
	}
	c := s.Counts()
	fmt.Printf("%s: %d layers, %d experts top-%d\n", s.Name, s.Layers, s.MoE.Experts, s.MoE.TopK)
	fmt.Printf("params %.2fB, active %.2fB\n", float64(c.Total)/1e9, float64(c.Active)/1e9)
	// Output:
	// mixtral-8x7b: 32 layers, 8 experts top-2
	// params 46.70B, active 12.88B
}

func ExamplePreset_unknown() {
	_, err := model.Preset("llama-70")
	fmt.Println(err)
	// Output:
	// model: unknown preset "llama-70" (nearest: llama70b, llama2-70b, llama3-70b; see plan models)
}

func ExampleParseYAML() {
	s, err := model.ParseYAML([]byte(`
name: tiny
layers: 2
hidden: 64
heads: 4
vocab: 100
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, s.KVHeads, s.HeadDim, s.FFNHidden, s.FFN, s.Norm, s.SeqLen, s.Counts().Total)

	_, err = model.ParseYAML([]byte("layers: 2\nhiden: 64\n"))
	fmt.Println(err)
	// Output:
	// tiny 4 16 256 gelu rmsnorm 2048 111424
	// model: unknown key "hiden" at line 2 (did you mean "hidden"?)
}

func ExampleSpec_Validate() {
	s := model.Spec{Layers: 0, Hidden: 4096, Heads: 32, KVHeads: 5, Vocab: 32000, FFN: "relu"}
	fmt.Println(s.Validate())
	// Output:
	// model: layers is 0; it must be between 1 and 10000
	// model: heads 32 is not a multiple of kv_heads 5; use a kv_heads that divides heads, such as 4
	// model: ffn is "relu"; it must be "gelu" (two matrices) or "swiglu" (three matrices)
}
