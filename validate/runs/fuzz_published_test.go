package runs

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzReadPublished feeds ReadFormat arbitrary files seeded with the
// published files' first rows: it must never panic, must return rows or
// an error, and the rows it returns must convert (model, precision,
// pattern and MLA parsers included) without panicking.
func FuzzReadPublished(f *testing.F) {
	for _, name := range []string{"published-runs-2.csv", "published-memory.csv"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 4)
		f.Add([]byte(strings.Join(lines[:min(3, len(lines))], "\n")))
	}
	f.Add([]byte("id,model,cluster,batch,seq,strategy,measured_tokens_per_s_per_chip,mla,moe_layer_pattern,precision\n" +
		"a,llama3-8b,h100-8,8,8192,dp=8,100,1/2/3/4/5,first 2 layers dense,MXFP8\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, format, err := ReadFormat(bytes.NewReader(data))
		if err != nil {
			if rs != nil {
				t.Fatalf("ReadFormat returned rows and an error: %v", err)
			}
			return
		}
		for _, r := range rs {
			if r.Format != format {
				t.Fatalf("row %s has format %v, file %v", r.ID, r.Format, format)
			}
			_ = r.SourceName()
			if m, err := r.ModelSpec(); err == nil {
				_, _ = r.Measured(m, max(r.Chips, 1), r.GlobalBatchSeqs, max(r.SeqLen, 1))
			}
			_, _ = precisionOf(r.Precision)
			_, _, _, _ = layerPattern(r.MoELayerPattern)
		}
	})
}
