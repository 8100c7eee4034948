package score_test

import (
	"fmt"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/score"
	"github.com/meshplan/meshplan/space"
)

// Mixtral 8x7B under torch.autocast, with a bf16 residual stream for the
// strategies FSDP2 shards: each strategy is priced by the variant of the
// layer program with its options.
func ExampleModels_Variant() {
	m, err := model.Preset("mixtral-8x7b")
	if err != nil {
		fmt.Println(err)
		return
	}
	autocast := model.ProgramOptions{Precision: model.AutocastPrecision()}
	sharded := autocast
	sharded.Precision.Residual = 2
	ms, err := score.New(m, autocast, &sharded, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, str := range []string{"dp=8", "fsdp=8", "dp=8,precision=fp8", "dp=4,tp=2,etp=1", "fsdp=4,tp=2,etp=1,precision=fp8", "fsdp=8,weights=bf16", "dp=8,precision=fp8,weights=bf16-moments"} {
		s, err := space.Parse(str)
		if err != nil {
			fmt.Println(err)
			return
		}
		key, prog, err := ms.Variant(&s)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-40s %+v residual %g B, fp8 %v, whole experts %v, moments %g B\n", str, key,
			prog.Options.Precision.Residual, prog.Options.FP8 != nil, prog.Options.ExpertsWhole, prog.Options.Precision.Moments)
	}
	// Output:
	// dp=8                                     {Sharded:false FP8:false Whole:false BF16Weights:false BF16Moments:false} residual 4 B, fp8 false, whole experts false, moments 8 B
	// fsdp=8                                   {Sharded:true FP8:false Whole:false BF16Weights:false BF16Moments:false} residual 2 B, fp8 false, whole experts false, moments 8 B
	// dp=8,precision=fp8                       {Sharded:false FP8:true Whole:false BF16Weights:false BF16Moments:false} residual 4 B, fp8 true, whole experts false, moments 8 B
	// dp=4,tp=2,etp=1                          {Sharded:false FP8:false Whole:true BF16Weights:false BF16Moments:false} residual 4 B, fp8 false, whole experts true, moments 8 B
	// fsdp=4,tp=2,etp=1,precision=fp8          {Sharded:true FP8:true Whole:true BF16Weights:false BF16Moments:false} residual 2 B, fp8 true, whole experts true, moments 8 B
	// fsdp=8,weights=bf16                      {Sharded:true FP8:false Whole:false BF16Weights:true BF16Moments:false} residual 2 B, fp8 false, whole experts false, moments 4 B
	// dp=8,precision=fp8,weights=bf16-moments  {Sharded:false FP8:true Whole:false BF16Weights:false BF16Moments:true} residual 4 B, fp8 true, whole experts false, moments 4 B
}
