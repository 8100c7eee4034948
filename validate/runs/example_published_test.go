package runs_test

import (
	"fmt"
	"strings"

	"github.com/meshplan/meshplan/validate/runs"
)

// ExampleValidatePublished reads a user file in the published-runs-2
// columns (its format is detected from the header) and predicts it; a row
// the planner cannot express is listed with the planner's own reason.
func ExampleValidatePublished() {
	file := `id,source,framework,model_name,layers,hidden,ffn_hidden,heads,kv_heads,vocab,seq_len,chip,chips,global_batch_seqs,tp,pp,cp,dp,micro_batch,zero_or_fsdp,recompute,precision,measured_tokens_per_s_per_chip
mine_fsdp,my-lab/notes@1,torchtitan (FSDP2),Llama-3.1-8B,32,4096,14336,32,8,128256,8192,H100-SXM-80GB,8,16,1,1,1,8,2,FSDP2 8-way,full,BF16,8000
mine_int8,my-lab/notes@1,torchtitan (FSDP2),Llama-3.1-8B,32,4096,14336,32,8,128256,8192,H100-SXM-80GB,8,16,1,1,1,8,2,FSDP2 8-way,full,INT8,9000
`
	rs, format, err := runs.ReadFormat(strings.NewReader(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	rep := runs.ValidatePublished(rs, format, nil, runs.Options{})
	fmt.Println(rep.Format, len(rep.Rows), "posable")
	r := rep.Rows[0]
	fmt.Println(r.ID, r.Source, r.Framework, r.Cluster, r.Strategy)
	for _, s := range rep.NotPosable {
		fmt.Println(s.ID+":", s.Reason)
	}
	// Output:
	// published-runs 1 posable
	// mine_fsdp my-lab/notes torchtitan h100-8 fsdp=8,mb=2,recompute=full,mesh=fsdp:gpu*8
	// mine_int8: strategy fsdp=8,mb=2,recompute=full,precision=int8: space: precision=int8: the h100 has no int8 matmul speed-up (peak_int8_ops is 0): use precision=bf16
}
