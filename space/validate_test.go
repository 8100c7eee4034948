package space

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// joined returns the top-level errors of an errors.Join.
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		return u.Unwrap()
	}
	return []error{err}
}

func TestValidate(t *testing.T) {
	small := llama3_8b()
	small.Name, small.Layers = "tiny", 4
	gqa := llama3_8b()
	gqa.Name, gqa.Heads, gqa.KVHeads = "gqa", 12, 4
	w8b := Workload{Batch: 32, SeqLen: 8192}
	tests := []struct {
		name string
		m    model.Spec
		c    profiles.Cluster
		w    Workload
		s    string    // parsed unless st is set
		st   *Strategy // a strategy Parse would reject
		want []string  // one substring per expected error
	}{
		{name: "405b tp8 pp16 dp128", m: llama3_405b(), c: gpuCluster(16384), w: Workload{2048, 8192}, s: "tp=8,pp=16,dp=128"},
		{name: "405b placed interleaved", m: llama3_405b(), c: gpuCluster(16384), w: Workload{2048, 8192},
			s: "dp=128,tp=8,pp=16,schedule=interleaved,v=4,recompute=selective,zero=1,mesh=tp:gpu;pp:node*16;dp:node*128"},
		{name: "8b defaults mesh chosen", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "fsdp=8"},
		// 126 layers, pp=8, v=8: 15, 16, ..., 15 in chunks of 1 or 2.
		{name: "405b pp8 v8 uneven chunks", m: llama3_405b(), c: gpuCluster(1024), w: Workload{1536, 8192}, s: "dp=16,tp=8,pp=8,schedule=interleaved,v=8"},
		{name: "405b pp8 first last", m: llama3_405b(), c: gpuCluster(1024), w: Workload{1536, 8192}, s: "dp=16,tp=8,pp=8,first=16,last=14,schedule=interleaved,v=8"},
		{name: "405b split does not add up", m: llama3_405b(), c: gpuCluster(1024), w: Workload{1536, 8192}, s: "dp=16,tp=8,pp=8,first=14,last=14",
			want: []string{"first=14,last=14 with pp=8 leaves 98 of the 126 layers for the other 6 stages, which do not share them evenly: make 126 minus first and last a multiple of 6 (e.g. first=15,last=15)"}},
		{name: "split chunk empty", m: llama3_405b(), c: gpuCluster(1024), w: Workload{1536, 8192}, s: "dp=16,tp=8,pp=8,first=6,last=6,schedule=interleaved,v=8",
			want: []string{"v=8 splits each stage's layers into 8 chunks, but first=6,last=6 leaves stage 0 with 6 layers (a middle stage needs 8, the first and the last 7, a chunk of theirs holding only the embedding or the output layer): use v <= 7 or give that stage more layers"}},
		// 126 layers, pp=8, v=8, first=7: the first rank's first chunk
		// holds only the embedding, as the default split's may
		// (MaxVirtualStages).
		{name: "split chunk of the embedding alone", m: llama3_405b(), c: gpuCluster(1024), w: Workload{1536, 8192}, s: "dp=16,tp=8,pp=8,first=7,last=11,schedule=interleaved,v=8"},
		{name: "split without pipeline", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=8,first=4",
			want: []string{"first=4 sets the layers of a pipeline stage, but pp=1: set pp > 1 or drop first and last"}},
		{name: "mixtral ep", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=2,fsdp=8,ep=8"},
		{name: "mixtral etp = tp", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=2,fsdp=8,ep=8,etp=2"},
		{name: "mixtral whole experts", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=2,fsdp=8,ep=8,etp=1"},
		{name: "mixtral whole experts without sp", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=2,sp=false,fsdp=8,ep=8"},
		{name: "etp over part of tp", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=4,fsdp=4,ep=4,etp=2",
			want: []string{"etp=2 with tp=4: each expert's matrices are split over all the tp chips (etp=4) or none (etp=1, the default); a split over part of them is not modelled"}},
		{name: "chips", m: llama3_405b(), c: gpuCluster(16384), w: Workload{2048, 8192}, s: "tp=8,pp=16",
			want: []string{"dp*fsdp*tp*cp*pp = 1*1*8*1*16 = 128, but cluster h100-16384 has 16384 chips: the degrees must multiply to 16384 (e.g. dp=128)"}},
		{name: "heads", m: gqa, c: gpuCluster(8), w: w8b, s: "tp=8",
			want: []string{"tp=8 does not divide the 12 attention heads of gqa: use tp in 1, 2, 3, 4, 6, 12"}},
		{name: "kv heads", m: gqa, c: profiles.Cluster{Name: "six", Axes: []profiles.Axis{{Name: "gpu", Size: 6}}}, w: Workload{6, 8190}, s: "tp=6",
			want: []string{"tp=6 and the 4 key/value heads of gqa do not divide one another"}},
		{name: "dense ep", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=8,ep=2",
			want: []string{"ep=2 needs a mixture-of-experts model, but llama3-8b is dense"}},
		{name: "experts", m: mixtral(), c: gpuCluster(8), w: Workload{48, 4096}, s: "dp=6,ep=3,cp=1,tp=1,fsdp=1,pp=1",
			want: []string{"dp*fsdp*tp*cp*pp = 6*1*1*1*1 = 6", "ep=3 does not divide the 8 experts"}},
		{name: "ep outside dp", m: mixtral(), c: gpuCluster(8), w: Workload{32, 4096}, s: "dp=2,tp=4,ep=4,etp=4",
			want: []string{"ep=4 does not divide dp*fsdp = 2"}},
		// Whole experts under sp: ep takes tp's ranks (Megatron's expert
		// grid with etp=1), ep=4 within dp*tp = 8.
		{name: "ep across tp", m: mixtral(), c: gpuCluster(8), w: Workload{32, 4096}, s: "dp=2,tp=4,ep=4"},
		{name: "ep across tp without sp", m: mixtral(), c: gpuCluster(8), w: Workload{32, 4096}, s: "dp=2,tp=4,ep=4,sp=false",
			want: []string{"ep=4 does not divide dp*fsdp = 2"}},
		{name: "ep beyond dp x tp", m: mixtral(), c: gpuCluster(8), w: Workload{32, 4096}, s: "tp=4,pp=2,ep=8",
			want: []string{"ep=8 does not divide dp*fsdp*tp = 4"}},
		{name: "batch", m: llama3_8b(), c: gpuCluster(8), w: Workload{12, 8192}, s: "dp=8",
			want: []string{"batch 12 does not split over dp*fsdp = 8 data-parallel replicas"}},
		{name: "mb", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=8,mb=3",
			want: []string{"mb=3 does not divide the per-replica batch of 4 sequences (batch 32 / dp*fsdp 8): use mb in 1, 2, 4"}},
		{name: "seq cp", m: llama3_8b(), c: gpuCluster(8), w: Workload{32, 8190}, s: "cp=8",
			want: []string{"cp=8 does not divide the sequence of 8190 tokens"}},
		{name: "seq sp", m: llama3_8b(), c: gpuCluster(8), w: Workload{32, 8196}, s: "tp=8",
			want: []string{"with sp, tp=8 must divide the 8196 tokens each cp rank holds"}},
		{name: "seq sp off", m: llama3_8b(), c: gpuCluster(8), w: Workload{32, 8196}, s: "tp=8,sp=false"},
		{name: "pp layers", m: small, c: gpuCluster(8), w: w8b, s: "pp=8",
			want: []string{"pp=8 exceeds the 4 layers of tiny: use pp <= 4"}},
		{name: "uneven layers fine", m: llama3_8b(), c: profiles.Cluster{Name: "three", Axes: []profiles.Axis{{Name: "gpu", Size: 3}}}, w: w8b, s: "pp=3"},
		{name: "v without interleaved", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "pp=8,v=2",
			want: []string{"v=2 needs a schedule with virtual stages (interleaved)"}},
		{name: "interleaved v1", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "pp=8,schedule=interleaved",
			want: []string{"schedule=interleaved needs v >= 2"}},
		{name: "interleaved pp1", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=8,schedule=interleaved,v=2",
			want: []string{"schedule=interleaved needs pp > 1"}},
		{name: "interleaved layers", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "pp=8,schedule=interleaved,v=5",
			want: []string{"pp*v = 8*5 = 40 exceeds the 34 chunks the 32 layers of llama3-8b, the embedding and the output layer can fill: use v <= 4"}},
		// 32 layers, pp=2: 16 a rank in 17 chunks, the embedding and the
		// output layer each in a chunk of their own (34 = 32+2).
		{name: "interleaved embedding and output chunks", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=4,pp=2,schedule=interleaved,v=17"},
		{name: "interleaved beyond embedding and output", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=4,pp=2,schedule=interleaved,v=18",
			want: []string{"pp*v = 2*18 = 36 exceeds the 34 chunks the 32 layers of llama3-8b, the embedding and the output layer can fill: use v <= 17"}},
		{name: "interleaved microbatches", m: llama3_8b(), c: gpuCluster(8), w: Workload{4, 8192}, s: "pp=8,schedule=interleaved,v=2",
			want: []string{"schedule=interleaved needs at least pp=8 micro-batches, but batch/(dp*fsdp*mb) = 4"}},
		{name: "gpipe few microbatches fine", m: llama3_8b(), c: gpuCluster(8), w: Workload{4, 8192}, s: "pp=8,schedule=gpipe"},
		{name: "zb-h1", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "pp=8,schedule=zbh1"},
		{name: "zb-h1 pp1", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=8,schedule=zb-h1",
			want: []string{"schedule=zb-h1 needs pp > 1: use 1f1b, or pipeline stages"}},
		{name: "zb-h1 microbatches", m: llama3_8b(), c: gpuCluster(8), w: Workload{4, 8192}, s: "pp=8,schedule=zb-h1",
			want: []string{"schedule=zb-h1 needs at least pp = 8 micro-batches, but batch/(dp*fsdp*mb) = 4"}},
		{name: "zb-v", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "pp=8,schedule=zbv"},
		{name: "zb-v layers", m: small, c: gpuCluster(8), w: w8b, s: "pp=4,dp=2,schedule=zb-v",
			want: []string{"schedule=zb-v runs 2 chunks per rank, so pp*2 = 8 exceeds the 4 layers of tiny: use pp <= 2"}},
		{name: "zb-v microbatches", m: llama3_8b(), c: gpuCluster(8), w: Workload{8, 8192}, s: "pp=8,schedule=zb-v",
			want: []string{"schedule=zb-v needs at least 2*pp-1 = 15 micro-batches, but batch/(dp*fsdp*mb) = 8"}},
		{name: "dualpipe", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "pp=4,dp=4,ep=4,schedule=dualpipe"},
		{name: "dualpipe odd pp", m: llama3_8b(), c: profiles.Cluster{Name: "six", Axes: []profiles.Axis{{Name: "gpu", Size: 6}}}, w: Workload{36, 8192}, s: "pp=3,dp=2,schedule=dualpipe",
			want: []string{"schedule=dualpipe needs an even pp, as it pairs stage i with stage pp-1-i on one rank, but pp=3: use pp=2 or 4"}},
		{name: "dualpipe microbatches", m: llama3_8b(), c: gpuCluster(8), w: Workload{14, 8192}, s: "pp=8,schedule=dualpipe",
			want: []string{"schedule=dualpipe needs at least 2*pp = 16 micro-batches, but batch/(dp*fsdp*mb) = 14"}},
		{name: "dualpipe odd microbatches", m: llama3_8b(), c: gpuCluster(8), w: Workload{17, 8192}, s: "pp=8,schedule=dualpipe",
			want: []string{"schedule=dualpipe splits the micro-batches between its two directions, so it needs an even number, but batch/(dp*fsdp*mb) = 17: change mb or the batch"}},
		{name: "dualpipev", m: llama3_8b(), c: gpuCluster(8), w: Workload{16, 8192}, s: "pp=8,schedule=dualpipe-v"},
		{name: "dualpipev v", m: llama3_8b(), c: gpuCluster(8), w: Workload{16, 8192}, s: "pp=8,schedule=dualpipev,v=2",
			want: []string{"v=2 needs a schedule with virtual stages (interleaved)"}},
		{name: "zero without dp", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "fsdp=8,zero=1",
			want: []string{"zero=1 shards across dp, but dp=1"}},
		{name: "zero range", m: llama3_8b(), c: gpuCluster(8), w: w8b, st: &Strategy{Degree: Degrees{DP: 8, FSDP: 1, TP: 1, CP: 1, PP: 1, EP: 1}, Zero: 3, MB: 1, Schedule: OneFOneB, V: 1, Recompute: RecomputeNone},
			want: []string{"zero=3 is not a ZeRO stage for dp"}},
		{name: "sp without tp", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "dp=8,sp=true",
			want: []string{"sp=true needs tp > 1"}},
		{name: "names", m: llama3_8b(), c: gpuCluster(8), w: w8b, st: &Strategy{Degree: Degrees{DP: 8, FSDP: 1, TP: 1, CP: 1, PP: 1, EP: 1}, MB: 1, Schedule: "zb", V: 1, Recompute: "some"},
			want: []string{`schedule "zb" is unknown`, `recompute "some" is unknown`}},
		{name: "zero degree", m: llama3_8b(), c: gpuCluster(8), w: w8b, st: &Strategy{Degree: Degrees{DP: 8, FSDP: 1, TP: 0, CP: 1, PP: 1, EP: 1}, MB: 0, Schedule: OneFOneB, V: 1, Recompute: RecomputeNone},
			want: []string{"tp=0 must be a positive integer", "mb=0 must be a positive integer"}},
		{name: "batch zero", m: llama3_8b(), c: gpuCluster(8), w: Workload{0, 8192}, s: "dp=8",
			want: []string{"batch=0 must be a positive number of sequences"}},
		{name: "unknown axis", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "tp=8,mesh=tp:gpux",
			want: []string{`the mesh gives tp axis "gpux", which cluster h100-8 does not have (axes: gpu (8))`}},
		{name: "share divides axis", m: llama3_8b(), c: gpuCluster(16), w: w8b, s: "tp=8,dp=2,mesh=tp:gpu*3",
			want: []string{"the mesh share gpu*3 of tp does not divide axis gpu of size 8"}},
		{name: "shares multiply to degree", m: llama3_8b(), c: gpuCluster(16), w: w8b, s: "tp=8,dp=2,mesh=tp:gpu*4;dp:node*2",
			want: []string{"the mesh shares of tp (gpu*4) multiply to 4, not to tp=8"}},
		{name: "axis oversubscribed", m: llama3_8b(), c: gpuCluster(16), w: w8b, s: "tp=8,dp=2,mesh=tp:gpu;dp:gpu*2",
			want: []string{"axis gpu has 8 chips but the mesh gives dp a share of 2 on top of 8"}},
		{name: "ep outside dp shares", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=8,dp=2,ep=2,etp=8,mesh=tp:gpu;dp:node;ep:gpu*2",
			want: []string{"the ep share gpu*2 does not lie within the dp and fsdp shares of axis gpu"}},
		{name: "ep on tp shares", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=8,dp=2,ep=2,mesh=tp:gpu;dp:node;ep:gpu*2"},
		{name: "ep outside tp shares", m: mixtral(), c: gpuCluster(16), w: Workload{32, 4096}, s: "tp=4,pp=2,dp=2,ep=8,mesh=tp:gpu*4;pp:gpu*2;dp:node;ep:gpu*8",
			want: []string{"the ep share gpu*8 does not lie within the dp, fsdp and tp shares of axis gpu, which span 4 of its chips"}},
		{name: "partial mesh completed", m: llama3_8b(), c: gpuCluster(16), w: w8b, s: "tp=2,dp=8,mesh=tp:node"},
		{name: "fp8 without an fp8 peak", m: llama3_8b(), c: gpuCluster(8), w: w8b, s: "tp=8,precision=fp8",
			want: []string{"precision=fp8: the chip has no FP8 matmul speed-up (peak_fp8_flops is 0): use precision=bf16"}},
		{name: "fp8", m: llama3_8b(), c: fp8Cluster(8), w: w8b, s: "tp=8,precision=fp8"},
		{name: "precision name", m: llama3_8b(), c: gpuCluster(8), w: w8b, st: &Strategy{Degree: Degrees{DP: 8, FSDP: 1, TP: 1, CP: 1, PP: 1, EP: 1}, MB: 1, Schedule: OneFOneB, V: 1, Recompute: RecomputeNone, Precision: "int4"},
			want: []string{`precision "int4" is unknown: use bf16, fp8 or int8`}},
		{name: "int8 without an int8 peak", m: llama3_8b(), c: fp8Cluster(8), w: w8b, s: "tp=8,precision=int8",
			want: []string{"precision=int8: the h100 has no int8 matmul speed-up (peak_int8_ops is 0): use precision=bf16"}},
		{name: "int8", m: llama3_8b(), c: int8Cluster(8), w: w8b, s: "tp=8,precision=int8"},
		{name: "fp8 on an int8 chip", m: llama3_8b(), c: int8Cluster(8), w: w8b, s: "tp=8,precision=fp8",
			want: []string{"use precision=int8 or bf16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Strategy
			if tt.st != nil {
				s = *tt.st
			} else {
				var err error
				if s, err = Parse(tt.s); err != nil {
					t.Fatalf("Parse(%q) error: %v", tt.s, err)
				}
			}
			err := s.Validate(tt.m, tt.c, tt.w)
			errs := joined(err)
			if len(errs) != len(tt.want) {
				t.Errorf("Validate(%q) = %v, want %d errors %q", tt.s, err, len(tt.want), tt.want)
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Validate(%q) = %v, want it to contain %q", tt.s, err, w)
				}
			}
			for _, e := range errs {
				if !strings.HasPrefix(e.Error(), "space: ") {
					t.Errorf("error %q lacks the space: prefix", e)
				}
			}
		})
	}
}

func TestValidateJoinsEveryRule(t *testing.T) {
	s, _ := Parse("tp=3,pp=64,mb=5,zero=1,schedule=gpipe,v=2")
	err := s.Validate(llama3_8b(), gpuCluster(8), Workload{Batch: 30, SeqLen: 8192})
	if n := len(joined(err)); n < 5 {
		t.Errorf("Validate joined %d errors, want at least 5: %v", n, err)
	}
	if errors.Unwrap(err) != nil {
		t.Errorf("Validate should return an errors.Join, not a wrapped error")
	}
}

func TestStageLayers(t *testing.T) {
	tests := []struct {
		layers, pp int
		split      Split
		want       []int // layers per rank
	}{
		{126, 16, Split{}, []int{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}}, // Llama 3 405B: lighter first and last stages
		// Llama 3.1 405B at pp=8: Megatron-Bridge's split, (126+2)/8 = 16
		// with the embedding and the loss counted as layers.
		{126, 8, Split{}, []int{15, 16, 16, 16, 16, 16, 16, 15}},
		{126, 8, Split{First: 16, Last: 14}, []int{16, 16, 16, 16, 16, 16, 16, 14}},
		{126, 8, Split{First: 14, Last: 16}, []int{14, 16, 16, 16, 16, 16, 16, 16}},
		{80, 4, Split{}, []int{20, 20, 20, 20}},
		{80, 4, Split{First: 20, Last: 20}, []int{20, 20, 20, 20}}, // the default, explicit
		{32, 3, Split{}, []int{11, 11, 10}},
		{10, 2, Split{}, []int{5, 5}},
		{11, 2, Split{}, []int{6, 5}},
		{11, 2, Split{First: 4, Last: 7}, []int{4, 7}},
		{32, 1, Split{}, []int{32}},
		{61, 16, Split{}, []int{3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3}},
		// DeepSeek-V3 at pp=16 as Megatron-Bridge lays it out: the last
		// stage one layer with the MTP module and the loss.
		{61, 16, Split{Last: 1}, []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1}},
		{61, 16, Split{First: 4, Last: 1}, []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1}},
		{61, 4, Split{First: 16, Last: 13}, []int{16, 16, 16, 13}},
		// Qwen3-235B, 94 layers at pp=8: 11, six of 12, 11.
		{94, 8, Split{}, []int{11, 12, 12, 12, 12, 12, 12, 11}},
		{94, 8, Split{First: 12, Last: 10}, []int{12, 12, 12, 12, 12, 12, 12, 10}},
		{94, 8, Split{First: 10}, []int{10, 12, 12, 12, 12, 12, 12, 12}},
	}
	for _, tt := range tests {
		if err := tt.split.Check(tt.layers, tt.pp); err != nil || !tt.split.Fits(tt.layers, tt.pp) {
			t.Errorf("%s over %d layers, pp=%d: %v", tt.split, tt.layers, tt.pp, err)
		}
		at := 0
		for r, want := range tt.want {
			first, n := tt.split.StageLayers(tt.layers, tt.pp, r)
			if first != at || n != want {
				t.Errorf("StageLayers(%d, %d, %d) = %d, %d; want %d, %d", tt.layers, tt.pp, r, first, n, at, want)
			}
			at += want
		}
		if at != tt.layers {
			t.Errorf("test case %d/%d sums to %d", tt.layers, tt.pp, at)
		}
		at = 0
		for r, count := range tt.want {
			for l := at; l < at+count; l++ {
				if got := tt.split.RankOf(tt.layers, tt.pp, l); got != r {
					t.Errorf("RankOf(%d, %d, %d) = %d, want %d", tt.layers, tt.pp, l, got, r)
				}
			}
			at += count
		}
		var starts [4]int
		k := tt.split.CountStarts(tt.layers, tt.pp, starts[:])
		for r := 1; r < len(tt.want); r++ {
			isStart := slices.Contains(starts[:k], r)
			if (tt.want[r] != tt.want[r-1] || r == len(tt.want)-1) && !isStart {
				t.Errorf("CountStarts(%d, %d) = %v misses rank %d", tt.layers, tt.pp, starts[:k], r)
			}
		}
		if got := tt.split.MaxStageLayers(tt.layers, tt.pp); got != slices.Max(tt.want) {
			t.Errorf("MaxStageLayers(%d, %d) = %d, want %d", tt.layers, tt.pp, got, slices.Max(tt.want))
		}
		if got := tt.split.MinStageLayers(tt.layers, tt.pp); got != slices.Min(tt.want) {
			t.Errorf("MinStageLayers(%d, %d) = %d, want %d", tt.layers, tt.pp, got, slices.Min(tt.want))
		}
	}
}

func TestSchedules(t *testing.T) {
	tests := []struct {
		s          Schedule
		p, v, m    int
		bubble     float64
		first      float64
		last       float64
		minMicrobs int
	}{
		{OneFOneB, 8, 1, 32, 7, 8, 1, 1},
		{OneFOneB, 8, 1, 3, 7, 3, 1, 1},
		{GPipe, 4, 1, 16, 3, 16, 16, 1},
		// p·(1 + (p-1)/(p·v)) = 8·1.4375 = 11.5; last ((v-1)p+1)/v = 9/2.
		{Interleaved, 8, 2, 64, 3.5, 11.5, 4.5, 8},
		{Interleaved, 8, 2, 2, 3.5, 2, 2, 8},
		{Interleaved, 8, 1, 64, 7, 8, 1, 8},
		{OneFOneB, 1, 1, 32, 0, 1, 1, 1},
		// (p-1)(T_F+T_B-T_W) = 7·(1+1-1) at equal passes: 7/3 of one
		// micro-batch's time, a third of 1F1B's 7 [ZB §2.1]; 1F1B's memory.
		{ZBH1, 8, 1, 32, 7.0 / 3, 8, 1, 8},
		// (p-1)/2·(T_F+T_B-T_W) = 3.5 passes, 3.5/3 micro-batches; p = 8
		// micro-batches on every rank, first and last [ZB §6].
		{ZBV, 8, 1, 32, 3.5 / 3, 8, 8, 15},
		// Too few micro-batches: the first rank holds (4 + 1)/2.
		{ZBV, 8, 1, 4, 3.5 / 3, 2.5, 4, 15},
		// (p/2-1)(F&B+B-3W) = 3·(3+2-3) = 6 passes at F = W = 1, B = 2
		// (full backward), F&B = F+B = 3 [DSV3 Table 2]: 2 micro-batches;
		// p+1 = 9 chunks of one of the rank's two stages = 4.5.
		{DualPipe, 8, 1, 32, 2, 4.5, 4.5, 16},
		// DualPipe of 2p = 16 stages on 8 ranks: (16/2-1)·2 = 14 chunk
		// passes = 7 of a rank's, 7/3 micro-batches; 2p+1 = 17 chunks = 8.5.
		{DualPipeV, 8, 1, 32, 7.0 / 3, 8.5, 8.5, 16},
	}
	for _, tt := range tests {
		if got := tt.s.BubbleStages(tt.p, tt.v); math.Abs(got-tt.bubble) > 1e-12 {
			t.Errorf("%s.BubbleStages(%d, %d) = %v, want %v", tt.s, tt.p, tt.v, got, tt.bubble)
		}
		if got := tt.s.InFlight(0, tt.p, tt.v, tt.m); got != tt.first {
			t.Errorf("%s.InFlight(first, p=%d, v=%d, m=%d) = %v, want %v", tt.s, tt.p, tt.v, tt.m, got, tt.first)
		}
		if got := tt.s.InFlight(tt.p-1, tt.p, tt.v, tt.m); got != tt.last {
			t.Errorf("%s.InFlight(last, p=%d, v=%d, m=%d) = %v, want %v", tt.s, tt.p, tt.v, tt.m, got, tt.last)
		}
		if got := tt.s.MinMicrobatches(tt.p); got != tt.minMicrobs {
			t.Errorf("%s.MinMicrobatches(%d) = %v, want %v", tt.s, tt.p, got, tt.minMicrobs)
		}
	}
	for _, tt := range []struct {
		p, v int
		want float64
	}{{8, 2, 1.4375}, {8, 3, 1 + 7.0/24}, {35, 3, 1 + 34.0/105}, {8, 1, 1}, {1, 4, 1}} {
		if got := InterleaveFactor(tt.p, tt.v); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("InterleaveFactor(%d, %d) = %v, want %v", tt.p, tt.v, got, tt.want)
		}
	}
}

func TestNumMicrobatches(t *testing.T) {
	s, _ := Parse("dp=128,tp=8,pp=16,mb=2")
	if got := s.NumMicrobatches(Workload{Batch: 2048}); got != 8 {
		t.Errorf("NumMicrobatches = %d, want 8", got)
	}
	if got := s.NumMicrobatches(Workload{Batch: 100}); got != 0 {
		t.Errorf("NumMicrobatches(batch 100) = %d, want 0", got)
	}
}

// TestBubbleFormulas pins each schedule's bubble to its paper's formula at
// unequal passes, T_F = 1, T_B = 1.5, T_W = 0.5 on p = 8 stages, an
// overlapped pair hiding nothing (T_FB = T_F + T_B + T_W = 3).
func TestBubbleFormulas(t *testing.T) {
	const tF, tB, tW = 1.0, 1.5, 0.5
	for _, tt := range []struct {
		s    Schedule
		want float64
	}{
		{OneFOneB, 7 * 3},                 // (p-1)(T_F+T_B+T_W) [NARA]
		{Interleaved, 7 * 3 / 2.0},        // with v = 2 below
		{ZBH1, 7 * (1 + 1.5 - 0.5)},       // (p-1)(T_F+T_B-T_W) = 14 [ZB §2.1]
		{ZBV, 3.5 * (1 + 1.5 - 0.5)},      // half of ZB-H1's: 7
		{DualPipe, 3 * (3 + 2 - 3*0.5)},   // (p/2-1)(F&B+B-3W), B = T_B+T_W = 2: 10.5 [DSV3 Table 2]
		{DualPipeV, 7 * (1.5 + 1 - 0.75)}, // 16 chunks of half: F&B 1.5, B 1, W 0.25: 12.25
		{GPipe, 7 * 3},                    // as 1F1B
	} {
		b := tt.s.Rules().Bubble(8, 2)
		got := b.F*tF + b.B*tB + b.W*tW + b.FB*(tF+tB+tW)
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: bubble %+v = %v passes, want %v", tt.s, b, got, tt.want)
		}
	}
}

func TestScheduleRules(t *testing.T) {
	for _, tt := range []struct {
		s        Schedule
		place    Placement
		overlaps Overlap
		searched bool
		chunks   int
	}{
		{OneFOneB, PlaceLinear, 0, true, 1}, {GPipe, PlaceLinear, 0, true, 1}, {Interleaved, PlaceLinear, 0, true, 3},
		{ZBH1, PlaceLinear, 0, false, 1}, {ZBV, PlaceV, 0, false, 2},
		{DualPipe, PlaceMirror, OverlapExpertA2A, false, 1}, {DualPipeV, PlaceV, OverlapExpertA2A, false, 2},
	} {
		r := tt.s.Rules()
		if r.Placement() != tt.place || r.Overlaps() != tt.overlaps || r.Searched() != tt.searched || r.VirtualStages(3) != tt.chunks {
			t.Errorf("%s: placement %d, overlaps %d, searched %v, chunks %d; want %d, %d, %v, %d", tt.s,
				r.Placement(), r.Overlaps(), r.Searched(), r.VirtualStages(3), tt.place, tt.overlaps, tt.searched, tt.chunks)
		}
	}
	for _, tt := range []struct {
		s             Schedule
		p, m, layers  int
		fits          bool
		overlapped    float64
		headInFlight  float64
		lastInFlight  float64
		firstInFlight float64
	}{
		// m - 3p/2 + 1 = 120 - 24 + 1 = 97 of DeepSeek-V3's 120 micro-batches.
		{DualPipe, 16, 120, 61, true, 97, 1, 8.5, 8.5},
		{DualPipe, 16, 31, 61, false, 8, 1, 8.5, 8.5}, // below 2p, and odd
		{DualPipe, 6, 12, 61, true, 4, 1, 3.5, 3.5},
		{DualPipe, 5, 12, 61, false, 5.5, 1, 3, 3}, // odd pp
		// 2m - 3p + 1 chunk pairs = m - 3p/2 + 1/2 micro-batches.
		{DualPipeV, 8, 16, 32, true, 4.5, 1, 8.5, 8.5},
		{DualPipeV, 8, 16, 15, false, 4.5, 1, 8.5, 8.5}, // 16 chunks of 15 layers
		{ZBV, 8, 15, 16, true, 0, 1, 8, 8},
		{ZBV, 8, 14, 16, false, 0, 1, 8, 7.5},
		{ZBH1, 8, 8, 32, true, 0, 1, 1, 8},
		{OneFOneB, 8, 1, 32, true, 0, 1, 1, 1},
		{ZBH1, 1, 8, 32, false, 0, 1, 1, 1}, // needs a pipeline
		{OneFOneB, 1, 8, 32, true, 0, 1, 1, 1},
	} {
		r := tt.s.Rules()
		if got := r.Fits(tt.p, tt.m, tt.layers); got != tt.fits {
			t.Errorf("%s.Fits(p=%d, m=%d, layers=%d) = %v, want %v", tt.s, tt.p, tt.m, tt.layers, got, tt.fits)
		}
		if got := r.OverlappedMicrobatches(tt.p, tt.m); got != tt.overlapped {
			t.Errorf("%s.OverlappedMicrobatches(%d, %d) = %v, want %v", tt.s, tt.p, tt.m, got, tt.overlapped)
		}
		if got := r.HeadInFlight(tt.p, 1, tt.m); got != tt.headInFlight {
			t.Errorf("%s.HeadInFlight(%d, 1, %d) = %v, want %v", tt.s, tt.p, tt.m, got, tt.headInFlight)
		}
		if got := r.InFlight(tt.p-1, tt.p, 1, tt.m); got != tt.lastInFlight {
			t.Errorf("%s.InFlight(last, %d, 1, %d) = %v, want %v", tt.s, tt.p, tt.m, got, tt.lastInFlight)
		}
		if got := r.InFlight(0, tt.p, 1, tt.m); got != tt.firstInFlight {
			t.Errorf("%s.InFlight(0, %d, 1, %d) = %v, want %v", tt.s, tt.p, tt.m, got, tt.firstInFlight)
		}
	}
	for _, name := range []string{"zbh1", "zb-h1", "zbv", "zb-v", "dualpipe", "dualpipev", "dualpipe-v", "1f1b"} {
		if _, ok := LookupSchedule(name); !ok {
			t.Errorf("LookupSchedule(%q) found nothing", name)
		}
	}
	if _, ok := LookupSchedule("zb"); ok {
		t.Error(`LookupSchedule("zb") found a schedule`)
	}
}

func TestChunkLayers(t *testing.T) {
	tests := []struct {
		layers, pp, v int
		split         Split
		want          [][]int // per rank, its chunks' layers in order
	}{
		// Llama 3.1 405B, pp=8, v=8: 16 layers a rank in chunks of 2; the
		// first chunk of rank 0 and the last of rank 7 hold one (Megatron-
		// Bridge: (126+2)/64 = 2 with the embedding and the loss).
		{126, 8, 8, Split{}, [][]int{
			{1, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2},
			{2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 1}}},
		// pp=16, v=8: (126+2)/128 = 1, the first chunk of rank 0 holds only
		// the embedding and the last of rank 15 only the output layer
		// (Megatron-Bridge's GB200 MXFP8 recipe of 26.02 to 26.06).
		{126, 16, 8, Split{}, [][]int{
			{0, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1},
			{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1},
			{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1},
			{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 0}}},
		// DeepSeek-V3, pp=4, v=4, first=16,last=13: rank 3's 13 in 4, 3, 3, 3.
		{61, 4, 4, Split{First: 16, Last: 13}, [][]int{{4, 4, 4, 4}, {4, 4, 4, 4}, {4, 4, 4, 4}, {4, 3, 3, 3}}},
		{10, 1, 3, Split{}, [][]int{{3, 3, 4}}},
	}
	for _, tt := range tests {
		for r, chunks := range tt.want {
			for j, want := range chunks {
				if got := tt.split.ChunkLayers(tt.layers, tt.pp, tt.v, r, j); got != want {
					t.Errorf("%q ChunkLayers(%d, %d, %d, %d, %d) = %d, want %d", tt.split, tt.layers, tt.pp, tt.v, r, j, got, want)
				}
			}
		}
	}
}

func TestSplitCheck(t *testing.T) {
	tests := []struct {
		layers, pp int
		split      Split
		want       string // "" when valid
	}{
		{126, 8, Split{First: 15, Last: 15}, ""},
		{126, 8, Split{First: 14, Last: 14}, "space: first=14,last=14 with pp=8 leaves 98 of the 126 layers for the other 6 stages, which do not share them evenly: make 126 minus first and last a multiple of 6 (e.g. first=15,last=15)"},
		{126, 8, Split{First: 120}, "space: first=120 with pp=8 leaves 6 of the 126 layers for the other 7 stages, fewer than one each: lower first or last (e.g. first=15,last=15)"},
		{11, 2, Split{First: 4, Last: 4}, "space: first=4,last=4 with pp=2 puts 8 of the 11 layers on the two stages: first+last must be 11 (e.g. first=6,last=5)"},
		{32, 1, Split{Last: 3}, "space: last=3 sets the layers of a pipeline stage, but pp=1: set pp > 1 or drop first and last"},
		{32, 1, Split{}, ""},
	}
	for _, tt := range tests {
		err := tt.split.Check(tt.layers, tt.pp)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q.Check(%d, %d) = %q, want %q", tt.split, tt.layers, tt.pp, got, tt.want)
		}
		if tt.split.Fits(tt.layers, tt.pp) != (tt.want == "") {
			t.Errorf("%q.Fits(%d, %d) = %t, want %t", tt.split, tt.layers, tt.pp, !(tt.want == ""), tt.want == "")
		}
	}
}

func TestSplits(t *testing.T) {
	tests := []struct {
		layers, pp int
		want       []Split
	}{
		{128, 8, nil}, // divides: every rank 16
		// 126/8: middle 16, rest 30: halved is the default (15, 15).
		{126, 8, []Split{{First: 16, Last: 14}, {First: 14, Last: 16}}},
		// 61/16: middle 4, rest 5: 3+2, 4+1 (Megatron-Bridge's), 1+4.
		{61, 16, []Split{{First: 3, Last: 2}, {First: 4, Last: 1}, {First: 1, Last: 4}}},
		// 61/4: middle 16, rest 29.
		{61, 4, []Split{{First: 15, Last: 14}, {First: 16, Last: 13}, {First: 13, Last: 16}}},
		{94, 8, []Split{{First: 12, Last: 10}, {First: 10, Last: 12}}},
		{5, 1, nil},
	}
	for _, tt := range tests {
		got := Splits(tt.layers, tt.pp)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Splits(%d, %d) = %v, want %v", tt.layers, tt.pp, got, tt.want)
		}
		for _, sp := range got {
			if !sp.Fits(tt.layers, tt.pp) {
				t.Errorf("Splits(%d, %d) offers %v, which does not fit", tt.layers, tt.pp, sp)
			}
		}
	}
}

// FuzzSplit: no split panics; a split that fits gives every rank at least
// one layer, the layers add up, and RankOf finds each layer's rank.
func FuzzSplit(f *testing.F) {
	f.Add(126, 8, 0, 0)
	f.Add(126, 8, 16, 14)
	f.Add(61, 16, 0, 1)
	f.Add(11, 2, 4, 7)
	f.Add(5, 9, 1, 1)
	f.Add(-3, 0, -1, 2)
	f.Fuzz(func(t *testing.T, n, p, first, last int) {
		if n < -1000 || n > 1000 || p < -10 || p > 64 {
			return
		}
		sp := Split{First: first, Last: last}
		_ = sp.Check(n, p)
		if !sp.Fits(n, p) || n < max(p, 1) {
			return
		}
		at := 0
		for r := range max(p, 1) {
			start, c := sp.StageLayers(n, p, r)
			if start != at || c < 1 {
				t.Fatalf("%v over %d layers, pp=%d: rank %d at %d with %d layers, want at %d with at least 1", sp, n, p, r, start, c, at)
			}
			for l := start; l < start+c; l++ {
				if got := sp.RankOf(n, p, l); got != r {
					t.Fatalf("%v RankOf(%d, %d, %d) = %d, want %d", sp, n, p, l, got, r)
				}
			}
			at += c
		}
		if at != n {
			t.Fatalf("%v over %d layers, pp=%d: ranks hold %d", sp, n, p, at)
		}
	})
}

// TestInterleavedHeadInFlight: the interleaved schedule's last rank holds
// one micro-batch of output-layer activations once its warm-up of
// (v-1)·p chunks is over, and all m when every chunk is in the warm-up.
func TestInterleavedHeadInFlight(t *testing.T) {
	r := Interleaved.Rules()
	for _, tt := range []struct {
		p, v, m int
		want    float64
	}{
		{4, 5, 16, 1},  // 80 chunks, 16 of warm-up
		{8, 4, 128, 1}, // DeepSeek-V3 on 1,024 H100: 24 of warm-up
		{4, 2, 4, 1},   // 8 chunks, 4 of warm-up
		{4, 2, 2, 2},   // 4 chunks, all in the warm-up
		{4, 1, 16, 1},  // one chunk: 1F1B's last rank
	} {
		if got := r.HeadInFlight(tt.p, tt.v, tt.m); got != tt.want {
			t.Errorf("HeadInFlight(p=%d, v=%d, m=%d) = %v, want %v", tt.p, tt.v, tt.m, got, tt.want)
		}
	}
}
