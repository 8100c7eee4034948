package planner_test

import (
	"fmt"

	"github.com/meshplan/meshplan/planner"
)

// The default batch on a GB200 NVL72 rack: 4Mi tokens are 512 sequences
// of 8,192, which 72 GPUs do not divide, so the default takes 504 (7 a
// GPU); 64 GPUs keep 512, and 1,024 GPUs, with fewer sequences than chips,
// keep 512 too (half the chips). On 1,536 GPUs 512 sequences would leave
// no layout whose tp, cp and pp are powers of two, so the default takes
// 768, a multiple of 384 (a quarter of the chips).
func ExampleDefaultBatchSequences() {
	for _, chips := range []int{72, 64, 1024, 1536} {
		fmt.Println(chips, planner.DefaultBatchSequences(chips, 8192, true))
	}
	// Output:
	// 72 504
	// 64 512
	// 1024 512
	// 1536 768
}
