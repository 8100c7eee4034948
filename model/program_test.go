package model

import (
	"math"
	"slices"
	"testing"
)

// savedBytes is what one layer of kind k keeps for one unsharded sequence
// of seq tokens under pol.
func savedBytes(p *Program, k int, seq float64, pol Policy) float64 {
	sz := p.Sizes(1, seq)
	total := 0.0
	for _, t := range p.Saved(p.Kinds[k].Blocks, pol) {
		total += p.FullBytes(t, &sz) * p.KeptBytes(pol, t) / p.ElemBytes(t)
	}
	return total
}

func gpt3Spec() Spec {
	s := Spec{Name: "gpt3", Layers: 96, Hidden: 12288, Heads: 96, FFN: GELU, Vocab: 51200, SeqLen: 2048,
		TiedEmbeddings: true, Norm: LayerNorm, Bias: true}
	s.Normalize()
	return s
}

func policy(t *testing.T, name string) Policy {
	t.Helper()
	p, ok := LookupPolicy(name)
	if !ok {
		t.Fatalf("no policy %q", name)
	}
	return p
}

// TestSavedActivations pins the activations the program's layers save to
// the hand results of docs/formulas.md §2.2: Korthikanti et al. 2022
// Table 2 (34·s·b·h + 5·a·s²·b per GPT layer, 2·s·b·h under full
// recompute) and the modern block s·b·(8h + 4q + 4kv + 6F).
func TestSavedActivations(t *testing.T) {
	const s = 2048.0
	h := 12288.0
	a := 96.0
	l70, _ := Preset("llama3-70b")
	mix, _ := Preset("mixtral-8x7b")
	tests := []struct {
		name   string
		spec   Spec
		o      ProgramOptions
		kind   int
		seq    float64
		policy string
		want   float64
	}{
		{"gpt3 selective", gpt3Spec(), ProgramOptions{}, 0, s, RecomputeSelective, 34 * s * h},
		{"gpt3 none noflash", gpt3Spec(), ProgramOptions{Kernels: Kernels{Attention: AttentionMaterialized}}, 0, s, RecomputeNone, 34*s*h + 5*a*s*s},
		{"gpt3 none flash", gpt3Spec(), ProgramOptions{}, 0, s, RecomputeNone, 34*s*h + 4*s*a},
		{"gpt3 selective noflash", gpt3Spec(), ProgramOptions{Kernels: Kernels{Attention: AttentionMaterialized}}, 0, s, RecomputeSelective, 34 * s * h},
		{"gpt3 full", gpt3Spec(), ProgramOptions{}, 0, s, RecomputeFull, 2 * s * h},
		// Llama 3 70B, s = 8192: 8192·(8·8192 + 4·8192 + 4·1024 + 6·28672) = 2,248,146,944.
		{"llama70b selective", l70, ProgramOptions{}, 0, 8192, RecomputeSelective, 2248146944},
		// norm_act keeps neither norm's output (4h) nor the SwiGLU's (2F),
		// and keeps the flash kernel's log-sum-exp (4 bytes per head):
		// 8192·(4·8192 + 4·8192 + 4·1024 + 4·28672) + 8192·64·4.
		{"llama70b norm_act", l70, ProgramOptions{}, 0, 8192, RecomputeNormAct, 1509949440 + 2097152},
		{"llama70b none noflash", l70, ProgramOptions{Kernels: Kernels{Attention: AttentionMaterialized}}, 0, 8192, RecomputeNone, 2248146944 + 2*64*8192*8192},
		// Mixtral MoE layer, s = 4096: norms 8·s·h, attention 4·s·(q+kv),
		// router probabilities 4·s·E, routed copies k·s·(4h + 6·Fe).
		{"mixtral moe selective", mix, ProgramOptions{}, 1, 4096, RecomputeSelective, 134217728 + 83886080 + 131072 + 838860800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProgram(tt.spec, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			got := savedBytes(p, tt.kind, tt.seq, policy(t, tt.policy))
			if math.Abs(got-tt.want) > 1e-9*tt.want {
				t.Errorf("saved = %.6g, want %.6g (ratio %.6f)", got, tt.want, got/tt.want)
			}
		})
	}
}

// TestProgramWellFormed checks every block: each tensor an op reads is the
// block's input, a weight, a virtual tensor, a gradient, or written by an
// earlier op; and every weight has a gradient.
func TestProgramWellFormed(t *testing.T) {
	for _, name := range Names() {
		s, _ := Preset(name)
		for _, o := range []ProgramOptions{{}, {Kernels: Kernels{Attention: AttentionMaterialized}}} {
			p, err := NewProgram(s, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for bi, blk := range p.Blocks {
				written := []int{blk.Input}
				if blk.Name == "attention" {
					written = append(written, p.Blocks[p.Kinds[0].Blocks[1]].Input)
				}
				for _, op := range blk.Fwd {
					for _, in := range []int{op.A, op.B} {
						if in < 0 {
							continue
						}
						tt := p.Tensors[in]
						if tt.Weight || tt.Class == ClassVirtual || slices.Contains(written, in) {
							continue
						}
						t.Errorf("%s block %s: op %s reads %s before anything writes it", name, blk.Name, op.Name, tt.Name)
					}
					written = append(written, op.C)
					written = append(written, op.Writes...)
				}
				for _, w := range blk.Weights {
					if p.Tensors[w].Grad < 0 {
						t.Errorf("%s block %d: weight %s has no gradient", name, bi, p.Tensors[w].Name)
					}
				}
			}
			if got := p.NumLayers(); got != s.Layers {
				t.Errorf("%s: stack has %d layers, want %d", name, got, s.Layers)
			}
		}
	}
}

// TestProgramParams checks that the program's weights count the model's
// parameters exactly (model.Counts, docs/formulas.md §1.1).
func TestProgramParams(t *testing.T) {
	for _, name := range Names() {
		s, _ := Preset(name)
		total := programWeights(MustProgram(s, ProgramOptions{}))
		want := float64(s.Counts().Total)
		if math.Abs(total/want-1) > 1e-12 {
			t.Errorf("%s: program weights %.6g, Counts().Total %.6g", name, total, want)
		}
	}
}

// programWeights sums the parameters of p's weights over the layers that
// hold them (a shared block's once), with the embedding and the output
// layer.
func programWeights(p *Program) float64 {
	sz := p.Sizes(1, 1)
	var total float64
	count := make([]int, len(p.Kinds))
	p.CountLayers(0, p.NumLayers(), count)
	seen := map[int]bool{}
	for k, kind := range p.Kinds {
		for _, b := range kind.Blocks {
			for _, w := range p.Blocks[b].Weights {
				switch {
				case !p.Tensors[w].Shared:
					total += float64(count[k]) * p.Params(w, &sz)
				case count[k] > 0 && !seen[w]:
					// A shared block's weights once (Zamba2).
					seen[w] = true
					total += p.Params(w, &sz)
				}
			}
		}
	}
	for _, b := range []int{p.Embedding, p.Output} {
		for _, w := range p.Blocks[b].Weights {
			total += p.Params(w, &sz)
		}
	}
	return total
}

func TestCapFactor(t *testing.T) {
	p := MustProgram(gpt3Spec(), ProgramOptions{})
	l70, _ := Preset("llama3-70b")
	q := MustProgram(l70, ProgramOptions{})
	tests := []struct {
		p    *Program
		d    Dim
		n    int
		want float64
	}{
		{p, DimK, 8, 1},
		{q, DimK, 8, 1},
		{q, DimK, 16, 2}, // 8 KV heads over 16 chips: each holds one
		{q, DimH, 16, (8192.0/16 + 2048.0/8) * 16 / (8192 + 2048)}, // q split 16 ways, kv 8 ways
		{q, DimQ, 16, 1},
	}
	for _, tt := range tests {
		if got := tt.p.CapFactor(tt.d, tt.n); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("CapFactor(%v, %d) = %v, want %v", tt.d, tt.n, got, tt.want)
		}
	}
}
