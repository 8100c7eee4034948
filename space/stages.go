package space

import (
	"fmt"
	"slices"

	"github.com/meshplan/meshplan/model"
)

// Split is how a pipeline spreads the decoder layers over its ranks: the
// strategy string's first and last keys. First and Last are the decoder
// layers of the first and the last pipeline rank, 0 when not set; the
// ranks not set share the rest evenly, which must divide exactly
// (Megatron-Core's --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers [MEG-UNEVEN]). The zero Split is the
// default rule of StageLayers. The embedding sits on the first rank and
// the output layer and the multi-token-prediction modules on the last,
// whatever the split.
type Split struct {
	First, Last int
}

// Explicit reports whether sp sets a rank's layers (first or last).
func (sp Split) Explicit() bool { return sp.First > 0 || sp.Last > 0 }

// String formats sp as strategy keys: "first=15,last=15", "" for the
// default split.
func (sp Split) String() string {
	switch {
	case sp.First > 0 && sp.Last > 0:
		return fmt.Sprintf("first=%d,last=%d", sp.First, sp.Last)
	case sp.First > 0:
		return fmt.Sprintf("first=%d", sp.First)
	case sp.Last > 0:
		return fmt.Sprintf("last=%d", sp.Last)
	}
	return ""
}

// stageRuns are the layers of the ranks of a pipeline as runs of ranks
// holding the same number: rank 0 holds c0, ranks 1..n1 hold c1, ranks
// n1+1..p-2 hold c2 and rank p-1 holds cl.
type stageRuns struct {
	p, c0, c1, n1, c2, cl int
}

// runs returns the runs of ranks of sp for n layers on p > 1 ranks.
func (sp Split) runs(n, p int) stageRuns {
	if !sp.Explicit() {
		// Each rank gets n/p layers and the n mod p extra layers go to the
		// middle ranks first, then to the first and the last, which also
		// carry the embedding and the output layer ([LLAMA3 §3.3.2]: fewer
		// layers on the first and last stages).
		base, extra := n/p, n%p
		mid := min(extra, p-2)
		return stageRuns{p: p, c0: base + btoi(extra-mid >= 1), c1: base + 1, n1: mid, c2: base, cl: base + btoi(extra-mid >= 2)}
	}
	// The ranks first and last leave unset share the rest evenly
	// [MEG-UNEVEN] (Validate refuses a rest that does not divide).
	rest, left := sp.rest(n, p)
	k := 0
	if left > 0 {
		k = max(rest, 0) / left
	}
	r := stageRuns{p: p, c0: k, c1: k, n1: p - 2, c2: k, cl: k}
	if sp.First > 0 {
		r.c0 = sp.First
	}
	if sp.Last > 0 {
		r.cl = sp.Last
	}
	return r
}

// count is the number of layers of rank r.
func (sr stageRuns) count(r int) int {
	switch {
	case r == 0:
		return sr.c0
	case r == sr.p-1:
		return sr.cl
	case r <= sr.n1:
		return sr.c1
	}
	return sr.c2
}

// start is the first layer of rank r.
func (sr stageRuns) start(r int) int {
	if r == 0 {
		return 0
	}
	return sr.c0 + sr.c1*min(r-1, sr.n1) + sr.c2*max(0, r-1-sr.n1)
}

// MaxVirtualStages is the most virtual pipeline stages (pp*v chunks) a
// schedule with virtual stages can cut n decoder layers into: one decoder
// layer a chunk, and two chunks more when the first holds only the
// embedding and the last only the output layer, as Megatron-Core counts
// them under account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split (Megatron-Bridge's Llama 3.1 405B
// recipes run its 126 layers at pp 16 and v 8 so: NVIDIA-NeMo/Megatron-Bridge
// v0.4.2 src/megatron/bridge/recipes/llama/llama3.py:1132-1133) and
// torchtitan's module_fqns_per_model_part allows. The default split then
// gives the first and the last rank one layer fewer than the middle ones,
// and ChunkLayers leaves exactly those two chunks without a decoder layer.
func MaxVirtualStages(n int) int { return n + 2 }

// StageLayers returns the first layer and the number of layers of pipeline
// rank r of p for a stack of n layers under the default split. Layers need
// not divide evenly: each rank gets n/p layers and the n mod p extra layers
// go to the middle ranks first, then to the first and the last, which also
// carry the embedding and the output layer ([LLAMA3 §3.3.2]: fewer layers
// on the first and last stages). With the interleaved schedule each rank's
// layers are split into v chunks (ChunkLayers); the totals per rank are the
// same. With p <= 1 rank 0 holds all.
func StageLayers(n, p, r int) (first, count int) { return Split{}.StageLayers(n, p, r) }

// StageLayers returns the first layer and the number of layers of pipeline
// rank r of p for a stack of n layers under split sp (the package function
// for the default split).
func (sp Split) StageLayers(n, p, r int) (first, count int) {
	if p <= 1 {
		return 0, n
	}
	r = min(max(r, 0), p-1)
	sr := sp.runs(n, p)
	return sr.start(r), sr.count(r)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MaxStageLayers is the most layers a rank of p holds for n layers under
// the default split.
func MaxStageLayers(n, p int) int { return Split{}.MaxStageLayers(n, p) }

// MaxStageLayers is the most layers a rank of p holds for n layers under sp.
func (sp Split) MaxStageLayers(n, p int) int {
	if p <= 1 {
		return n
	}
	sr := sp.runs(n, p)
	m := max(sr.c0, sr.cl)
	if sr.n1 > 0 {
		m = max(m, sr.c1)
	}
	if p-2-sr.n1 > 0 {
		m = max(m, sr.c2)
	}
	return m
}

// MinStageLayers is the fewest layers a rank of p holds for n layers under sp.
func (sp Split) MinStageLayers(n, p int) int {
	if p <= 1 {
		return n
	}
	sr := sp.runs(n, p)
	m := min(sr.c0, sr.cl)
	if sr.n1 > 0 {
		m = min(m, sr.c1)
	}
	if p-2-sr.n1 > 0 {
		m = min(m, sr.c2)
	}
	return m
}

// ShortOfChunks reports the first rank of p, and its layers, that holds
// too few of n layers under sp to cut them into v chunks of at least one
// layer, as the interleaved schedule needs: a middle rank needs v layers,
// the first and the last v-1, their first (last) chunk holding only the
// embedding (the output layer), as MaxVirtualStages counts the chunks and
// ChunkLayers fills them. It is false when every rank has enough.
func (sp Split) ShortOfChunks(n, p, v int) (rank, layers int, short bool) {
	if p <= 1 || v <= 1 {
		return 0, 0, false
	}
	sr := sp.runs(n, p)
	for r := range p {
		need := v
		if r == 0 || r == p-1 {
			need = v - 1
		}
		if c := sr.count(r); c < need {
			return r, c, true
		}
	}
	return 0, 0, false
}

// ChunkLayers is the number of layers of chunk j (0-based, in the order
// the rank runs them) of rank r of p when each rank's layers are split
// into v chunks (virtual stages) under sp: as even as whole layers allow,
// the lighter chunks first on every rank but the last, whose lighter
// chunks come last: the first virtual stage carries the embedding and the
// last one the output layer (Megatron-Core's account for the embedding and
// the loss in the split [MEG-UNEVEN]).
func (sp Split) ChunkLayers(n, p, v, r, j int) int {
	v = max(v, 1)
	_, c := sp.StageLayers(n, p, r)
	base, extra := c/v, c%v
	if p > 1 && r == p-1 {
		return base + btoi(j < extra)
	}
	return base + btoi(j >= v-extra)
}

// VisitChunks calls visit for every chunk of a pipeline of p ranks holding
// n layers under sp, each rank's layers cut into v chunks (ChunkLayers)
// that run in a loop: virtual stage i is chunk i/p of rank i mod p and
// takes the layers [from, to) that follow those of virtual stage i-1, so a
// rank holds every p-th run of layers, not one run (Megatron-Core's
// interleaved offsets, NVIDIA/Megatron-LM@d98e8a64
// megatron/core/transformer/transformer_layer.py:156, 202:
// vp_stage·total_virtual_chunks + pp_rank·layers per chunk, and the
// --pipeline-model-parallel-layout the megatron emitter writes, stage
// j·p+r for chunk j of rank r; torchtitan's "loop" stage ids,
// pytorch/torchtitan@b5bcd76c torchtitan/distributed/pipeline_parallel.py:558-559).
// Chunks without a layer are visited too (from == to). With v <= 1 or
// p <= 1 each rank's StageLayers is its one chunk.
func (sp Split) VisitChunks(n, p, v int, visit func(rank, from, to int)) {
	p, v = max(p, 1), max(v, 1)
	if p == 1 {
		visit(0, 0, n)
		return
	}
	sr := sp.runs(n, p)
	at := 0
	for i := range p * v {
		r, j := i%p, i/p
		// ChunkLayers, with the ranks' runs computed once.
		c := sr.count(r)
		base, extra := c/v, c%v
		if r == p-1 {
			c = base + btoi(j < extra)
		} else {
			c = base + btoi(j >= v-extra)
		}
		visit(r, at, at+c)
		at += c
	}
}

// LoopCounts returns dst (grown) holding the layers of each of prog's
// layer kinds that every rank of a pipeline of p ranks holds when its
// layers run as loop chunks of loop under sp (VisitChunks): rank r's at
// [r·nk, (r+1)·nk) for nk kinds. The multi-token-prediction modules are
// not counted.
func (sp Split) LoopCounts(prog *model.Program, p, loop int, dst []int) []int {
	nk := len(prog.Kinds)
	dst = slices.Grow(dst[:0], (p+1)*nk)[:(p+1)*nk]
	clear(dst)
	one := dst[p*nk:] // one chunk's counts
	sp.VisitChunks(prog.NumLayers(), p, loop, func(r, from, to int) {
		if to <= from {
			return
		}
		prog.CountLayers(from, to, one)
		for k, c := range one {
			dst[r*nk+k] += c
		}
	})
	return dst[:p*nk]
}

// RankOf returns the pipeline rank of p that holds layer l (0-based) of n
// under the default split (see StageLayers).
func RankOf(n, p, l int) int { return Split{}.RankOf(n, p, l) }

// RankOf returns the pipeline rank of p that holds layer l (0-based) of n
// under sp.
func (sp Split) RankOf(n, p, l int) int {
	if p <= 1 {
		return 0
	}
	sr := sp.runs(n, p)
	if l < sr.c0 {
		return 0
	}
	l -= sr.c0
	if l < sr.n1*sr.c1 {
		return 1 + l/max(sr.c1, 1)
	}
	l -= sr.n1 * sr.c1
	return min(sr.n1+1+l/max(sr.c2, 1), p-1)
}

// CountStarts writes into dst the first ranks of the runs of ranks that
// hold the same number of layers under the default split (at most 4: the
// first rank, the middle ranks with an extra layer, the other middle
// ranks, the last rank) and returns how many it wrote (dst needs room for
// 4).
func CountStarts(n, p int, dst []int) int { return Split{}.CountStarts(n, p, dst) }

// CountStarts is the package function CountStarts under sp.
func (sp Split) CountStarts(n, p int, dst []int) int {
	if p <= 1 {
		dst[0] = 0
		return 1
	}
	mid := sp.runs(n, p).n1
	k := 0
	for _, r := range [4]int{0, 1, mid + 1, p - 1} {
		if r < p && (k == 0 || r > dst[k-1]) {
			dst[k] = r
			k++
		}
	}
	return k
}

// CandidateRanks appends to dst, ascending and once each, the ranks that
// can be the busiest of p holding n layers (default split) whose kind
// changes at the layers kindStarts: the first rank of every run of ranks
// with the same number of layers, and the ranks where a run of layers of
// one kind ends and the next begins. Every other rank holds the same
// layers as the rank before it and, every schedule's in-flight count
// falling with the rank, no more micro-batches in flight.
func CandidateRanks(n, p int, kindStarts []int, dst []int) []int {
	return Split{}.CandidateRanks(n, p, kindStarts, dst)
}

// LoopCandidateRanks is CandidateRanks for ranks whose layers run as loop
// chunks (Strategy.LoopChunks, VisitChunks): with more than one chunk a
// rank and a change of layer kind, every rank is a candidate (each holds
// every p-th run of layers, so any may hold more of a kind); else
// CandidateRanks.
func (sp Split) LoopCandidateRanks(n, p, loop int, kindStarts []int, dst []int) []int {
	if loop > 1 && p > 1 && len(kindStarts) > 0 {
		for r := range p {
			dst = append(dst, r)
		}
		return dst
	}
	return sp.CandidateRanks(n, p, kindStarts, dst)
}

// CandidateRanks is the package function CandidateRanks under sp.
func (sp Split) CandidateRanks(n, p int, kindStarts []int, dst []int) []int {
	if p > 1 && len(kindStarts) >= p {
		// A stack whose kind changes at least once per rank (an alternating
		// pattern): every rank is a candidate.
		for r := range p {
			dst = append(dst, r)
		}
		return dst
	}
	var starts [4]int
	k := sp.CountStarts(n, p, starts[:])
	add := func(r int) {
		if r < 0 || r >= max(p, 1) {
			return
		}
		i, found := slices.BinarySearch(dst, r)
		if !found {
			dst = slices.Insert(dst, i, r)
		}
	}
	for _, r := range starts[:k] {
		add(r)
	}
	for _, l := range kindStarts {
		r := sp.RankOf(n, p, l)
		add(r)
		add(r + 1)
	}
	return dst
}

// rest returns the layers of n and the ranks of p that first and last
// leave to the other ranks.
func (sp Split) rest(n, p int) (layers, ranks int) {
	layers, ranks = n, p
	if sp.First > 0 {
		layers, ranks = layers-sp.First, ranks-1
	}
	if sp.Last > 0 {
		layers, ranks = layers-sp.Last, ranks-1
	}
	return layers, ranks
}

// Fits reports whether sp splits n layers over p ranks (Check says why
// not); the default split always does.
func (sp Split) Fits(n, p int) bool {
	if !sp.Explicit() {
		return true
	}
	if sp.First < 0 || sp.Last < 0 || p < 2 {
		return false
	}
	rest, left := sp.rest(n, p)
	if left == 0 {
		return rest == 0
	}
	return rest >= left && rest%left == 0
}

// Check reports, in one sentence naming the key and what would work,
// why sp does not split n layers over p pipeline ranks: first or last
// without a pipeline, more layers than there are, a rank left without
// layers, or a rest the other ranks cannot share evenly. nil for the
// default split.
func (sp Split) Check(n, p int) error {
	if !sp.Explicit() {
		return nil
	}
	if sp.First < 0 || sp.Last < 0 {
		return fmt.Errorf("space: %s must give positive layer counts", sp)
	}
	if p < 2 {
		return fmt.Errorf("space: %s sets the layers of a pipeline stage, but pp=%d: set pp > 1 or drop first and last", sp, p)
	}
	rest, left := sp.rest(n, p)
	good := balancedSplit(n, p)
	switch {
	case left == 0 && rest != 0:
		return fmt.Errorf("space: %s with pp=2 puts %d of the %d layers on the two stages: first+last must be %d (e.g. %s)", sp, n-rest, n, n, good)
	case left > 0 && rest < left:
		return fmt.Errorf("space: %s with pp=%d leaves %d of the %d layers for the other %d stages, fewer than one each: lower first or last (e.g. %s)", sp, p, max(rest, 0), n, left, good)
	case left > 0 && rest%left != 0:
		return fmt.Errorf("space: %s with pp=%d leaves %d of the %d layers for the other %d stages, which do not share them evenly: make %d minus first and last a multiple of %d (e.g. %s)", sp, p, rest, n, left, n, left, good)
	}
	return nil
}

// balancedSplit is a valid split of n layers over p > 1 ranks for
// messages: the middle ranks ceil(n/p) each, the rest halved between the
// first and the last (first the larger half).
func balancedSplit(n, p int) Split {
	if p < 2 || n < p {
		return Split{}
	}
	k := (n + p - 1) / p
	rest := n - (p-2)*k
	for rest < 2 && k > 1 {
		k--
		rest = n - (p-2)*k
	}
	return Split{First: (rest + 1) / 2, Last: rest / 2}
}

// Splits returns the explicit splits the search offers for n layers on p
// ranks beside the default one: none when p divides n (every rank holds
// n/p); else, with ceil(n/p) layers on each middle rank, the rest halved
// between the first and the last rank, all of it but ceil(n/p) on the last
// (lightest last: it also holds the output layer and the
// multi-token-prediction modules, as Megatron-Bridge's DeepSeek-V3 layouts
// do [MB-DSV3]), and on the first; each only when every end rank holds at
// least one and at most ceil(n/p) layers, and when it differs from the
// default split. At most three.
func Splits(n, p int) []Split {
	if p < 2 || n%p == 0 || n < p {
		return nil
	}
	k := (n + p - 1) / p
	rest := n - (p-2)*k
	var out []Split
	for _, c := range [3]Split{{First: (rest + 1) / 2, Last: rest / 2}, {First: k, Last: rest - k}, {First: rest - k, Last: k}} {
		if c.First < 1 || c.Last < 1 || c.First > k || c.Last > k || slices.Contains(out, c) || sameAsDefault(c, n, p) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// sameAsDefault reports whether split c gives every rank of p the layers
// the default split gives it.
func sameAsDefault(c Split, n, p int) bool {
	a, b := c.runs(n, p), Split{}.runs(n, p)
	for r := range p {
		if a.count(r) != b.count(r) {
			return false
		}
	}
	return true
}
