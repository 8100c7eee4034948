package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestFP8Program checks which ops an FP8 recipe runs in fp8 and what the
// layer keeps: the projections read fp8 copies of their inputs (1 byte)
// and keep those; the router, the output layer and the attention core stay
// bf16; blockwise dispatches fp8 tokens [DSV3 §3.3.1-3.3.2].
func TestFP8Program(t *testing.T) {
	mix, _ := Preset("mixtral-8x7b")
	for _, name := range []string{FP8Delayed, FP8Tensorwise, FP8Blockwise, FP8MX, FP8Torchao} {
		r, ok := LookupFP8Recipe(name)
		if !ok {
			t.Fatalf("no recipe %s", name)
		}
		p, err := NewProgram(mix, ProgramOptions{FP8: &r})
		if err != nil {
			t.Fatal(err)
		}
		var fp8, bf16 []string
		bwd8 := 0
		for _, blk := range p.Blocks {
			for _, o := range blk.Fwd {
				if o.Kind != Einsum {
					continue
				}
				if o.FP8 {
					fp8 = append(fp8, o.Name)
					if p.Tensors[o.A].Class != ClassFP8 || !p.Tensors[o.B].FP8Copy {
						t.Errorf("%s: fp8 %s reads %s (class %d), weight copy %v", name, o.Name, p.Tensors[o.A].Name, p.Tensors[o.A].Class, p.Tensors[o.B].FP8Copy)
					}
				} else {
					bf16 = append(bf16, o.Name)
				}
			}
			for _, o := range blk.Bwd {
				// A backward einsum is named d<forward>/d<operand>.
				fwdName, _, _ := strings.Cut(strings.TrimPrefix(o.Name, "d"), "/")
				isFP8 := slices.ContainsFunc(blk.Fwd, func(f Op) bool { return f.Name == fwdName && f.FP8 })
				if o.Kind == Einsum && o.FP8 {
					bwd8++
				}
				if o.Kind == Einsum && isFP8 != o.FP8 {
					t.Errorf("%s: backward %s has FP8 %v, its forward %s %v", name, o.Name, o.FP8, fwdName, isFP8)
				}
			}
		}
		if bwd8 != 2*len(fp8) {
			t.Errorf("%s: %d fp8 backward matmuls, want dA and dB of each of the %d forward ones", name, bwd8, len(fp8))
		}
		slices.Sort(fp8)
		if want := []string{"expert_in", "expert_out", "ffn_in", "ffn_out", "out", "qkv"}; !slices.Equal(fp8, want) {
			t.Errorf("%s: fp8 matmuls %v, want %v", name, fp8, want)
		}
		for _, keep := range []string{"router", "logits", "scores", "attend", "embed"} {
			if !slices.Contains(bf16, keep) {
				t.Errorf("%s: %s is not a bf16 matmul (bf16: %v)", name, keep, bf16)
			}
		}
		dispatchFP8 := false
		for _, o := range p.Blocks[p.Kinds[1].Blocks[1]].Fwd {
			if o.Name == "dispatch" {
				dispatchFP8 = p.Tensors[o.A].Class == ClassFP8
			}
		}
		if dispatchFP8 != (name == FP8Blockwise) {
			t.Errorf("%s: dispatch in fp8 = %v", name, dispatchFP8)
		}
	}
}

// TestFP8Saved pins what a Llama 3 70B layer keeps under selective
// recompute with fp8 projections, against bf16's s·(8h + 4q + 4kv + 6F)
// (TestSavedActivations): the inputs of qkv and ffn_in (h each) and of the
// output and down projections (q, F) are kept as 1-byte fp8 copies; the
// attention output's bf16 copy, which the re-run flash kernel makes again
// for its backward [FA2], is not kept, since the output projection saves
// the fp8 copy only: s·(6h + 3q + 4kv + 5F) = 8192·221,184 bytes.
func TestFP8Saved(t *testing.T) {
	l70, _ := Preset("llama3-70b")
	r, _ := LookupFP8Recipe(FP8Delayed)
	p, err := NewProgram(l70, ProgramOptions{FP8: &r})
	if err != nil {
		t.Fatal(err)
	}
	got := savedBytes(p, 0, 8192, policy(t, RecomputeSelective))
	if want := 8192.0 * (6*8192 + 3*8192 + 4*1024 + 5*28672); math.Abs(got-want) > 1e-9*want {
		t.Errorf("fp8 saved = %.6g, want %.6g", got, want)
	}
	// The quantisation passes: QuantizeBytes per element of each distinct
	// projection input forward, of each projection output's gradient backward.
	var fwd, bwd float64
	for _, b := range p.Kinds[0].Blocks {
		blk := &p.Blocks[b]
		for _, o := range blk.Fwd {
			if o.Kind == Elementwise && len(o.Name) > 9 && o.Name[:9] == "quantize_" {
				fwd += o.Bytes * p.ElemBytes(o.A)
				bwd += o.BwdBytes * p.ElemBytes(o.A)
			}
		}
	}
	if fwd != 4*4 || bwd != 4*4 {
		t.Errorf("quantisation bytes per element: forward %v, backward %v; want 4 passes of 4 bytes each way", fwd, bwd)
	}
	if _, err := NewProgram(l70, ProgramOptions{FP8: &FP8Recipe{Name: "x", QuantizeBytes: -1}}); err == nil {
		t.Error("a negative quantize_bytes was accepted")
	}
	if _, err := NewProgram(l70, ProgramOptions{FP8: &FP8Recipe{Name: "x", QuantizeBytes: 4, RecastBytes: 65}}); err == nil {
		t.Error("recast_bytes = 65 was accepted")
	}
}

// TestFP8TorchaoSaved pins torchao's tensorwise recipe on a Llama 3 70B
// layer under selective recompute: the forward keeps each fp8 matmul's bf16
// input, not its fp8 copy (matmul_with_hp_or_float8_args saves input_hp,
// pytorch/ao@36027d82d1ad9949597ea16002ff4940374b1b94
// torchao/float8/float8_linear.py), so against delayed's s·(6h + 3q + 4kv
// + 5F) (TestFP8Saved) xn and xn2 are kept in 2 bytes (+h each), the
// attention output in bf16, which the output projection saves, instead of
// its fp8 copy (+q) and the SwiGLU output in bf16 (+F): s·(8h + 4q + 4kv +
// 6F), bf16's own
// (TestSavedActivations). Per element the quantisations move, forward, 5
// bytes for each of the 4 distinct projection inputs (amax 2, read 2,
// write 1); backward, 5 to cast each input again and 8 for each of the 4
// output gradients (one amax read, two casts of 2 + 1).
func TestFP8TorchaoSaved(t *testing.T) {
	l70, _ := Preset("llama3-70b")
	r, _ := LookupFP8Recipe(FP8Torchao)
	p, err := NewProgram(l70, ProgramOptions{FP8: &r})
	if err != nil {
		t.Fatal(err)
	}
	const s, h, q, kv, f = 8192.0, 8192.0, 8192.0, 1024.0, 28672.0
	if got, want := savedBytes(p, 0, s, policy(t, RecomputeSelective)), s*(8*h+4*q+4*kv+6*f); math.Abs(got-want) > 1e-9*want {
		t.Errorf("torchao saved = %.6g, want %.6g", got, want)
	}
	var fwd, recast, grad float64
	for _, b := range p.Kinds[0].Blocks {
		for _, o := range p.Blocks[b].Fwd {
			switch {
			case strings.HasPrefix(o.Name, "quantize_d"):
				fwd += o.Bytes * p.ElemBytes(o.A)
				grad += o.BwdBytes * p.ElemBytes(o.A)
			case strings.HasPrefix(o.Name, "quantize_"):
				fwd += o.Bytes * p.ElemBytes(o.A)
				recast += o.BwdBytes * p.ElemBytes(o.A)
			}
		}
	}
	if fwd != 4*5 || recast != 4*5 || grad != 4*8 {
		t.Errorf("torchao bytes per element: forward %v, recast %v, gradient %v; want 20, 20, 32", fwd, recast, grad)
	}
}

// TestSeparateProjectionsCalls checks which einsums stand for separate
// matmuls under Kernels.SeparateProjections: a SwiGLU Llama's qkv (q, k, v:
// 3) and ffn_in (gate, up: 2), a GELU model's qkv only; the input-gradient
// einsum carries the count, the weight-gradient one does not; and
// SplitProjections, whose casts count the sum, marks none.
func TestSeparateProjectionsCalls(t *testing.T) {
	l8, _ := Preset("llama3-8b")
	gpt, _ := Preset("gpt3-175b")
	for _, tc := range []struct {
		name            string
		spec            Spec
		split, separate bool
		want            map[string]int
	}{
		{"llama separate", l8, false, true, map[string]int{"qkv": 3, "ffn_in": 2, "dqkv/dxn": 3, "dffn_in/dxn2": 2, "dqkv/dWqkv": 0, "out": 0}},
		{"gelu separate", gpt, false, true, map[string]int{"qkv": 3, "ffn_in": 0, "dqkv/dxn": 3}},
		{"llama fused", l8, false, false, map[string]int{"qkv": 0, "ffn_in": 0, "dqkv/dxn": 0}},
		{"llama split", l8, true, true, map[string]int{"qkv": 0, "ffn_in": 0, "dqkv/dxn": 0}},
	} {
		k := FusedKernels()
		k.SplitProjections, k.SeparateProjections = tc.split, tc.separate
		p, err := NewProgram(tc.spec, ProgramOptions{Kernels: k})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, b := range p.Kinds[0].Blocks {
			for _, ops := range [][]Op{p.Blocks[b].Fwd, p.Blocks[b].Bwd} {
				for _, o := range ops {
					if _, ok := tc.want[o.Name]; ok && o.Kind == Einsum {
						got[o.Name] = o.Calls
					}
				}
			}
		}
		for name, want := range tc.want {
			if g, ok := got[name]; !ok || g != want {
				t.Errorf("%s: %s has Calls %d (found %v), want %d", tc.name, name, g, ok, want)
			}
		}
	}
}

// TestNVFP4Saved pins the nvfp4 recipe on a Llama 3 70B layer under
// selective recompute: the saved fp8 copies of the four distinct projection
// inputs (xn and xn2, h each; the attention output, q; the SwiGLU output,
// F) take 0.5 + 1/16 bytes an element instead of 1 (a 4-bit E2M1 value and
// an E4M3 scale per 16), so against delayed's s·(6h + 3q + 4kv + 5F)
// (TestFP8Saved) each of them saves 0.4375 bytes: s·(6h + 3q + 4kv + 5F -
// 0.4375·(2h + q + F)). Each quantisation moves 2 + 2 + 2·0.5625 = 5.125
// bytes an element each way (amax, cast, rowwise and columnwise copies).
func TestNVFP4Saved(t *testing.T) {
	l70, _ := Preset("llama3-70b")
	r, ok := LookupFP8Recipe(FP4NV)
	if !ok || !r.FP4 || r.Bytes() != 0.5625 {
		t.Fatalf("nvfp4 recipe %+v, %v: want FP4 at 0.5625 bytes an element", r, ok)
	}
	p, err := NewProgram(l70, ProgramOptions{FP8: &r})
	if err != nil {
		t.Fatal(err)
	}
	if b := p.ClassBytes(ClassFP8); b != 0.5625 {
		t.Errorf("ClassFP8 bytes %v, want 0.5625", b)
	}
	got := savedBytes(p, 0, 8192, policy(t, RecomputeSelective))
	want := 8192.0 * (6*8192 + 3*8192 + 4*1024 + 5*28672 - 0.4375*(2*8192+8192+28672))
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("nvfp4 saved = %.6g, want %.6g", got, want)
	}
	var fwd float64
	for _, b := range p.Kinds[0].Blocks {
		for _, o := range p.Blocks[b].Fwd {
			if o.Kind == Elementwise && strings.HasPrefix(o.Name, "quantize_") && o.Bytes > 0 {
				fwd += o.Bytes * p.ElemBytes(o.A)
			}
		}
	}
	if math.Abs(fwd-4*5.125) > 1e-9 {
		t.Errorf("forward quantisation bytes per element %v, want 4 passes of 5.125", fwd)
	}
	if _, err := NewProgram(l70, ProgramOptions{FP8: &FP8Recipe{Name: "x", QuantizeBytes: 4, ElementBytes: 3}}); err == nil {
		t.Error("element_bytes = 3 was accepted")
	}
}
