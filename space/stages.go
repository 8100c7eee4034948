package space

import "slices"

// StageLayers returns the first layer and the number of layers of pipeline
// rank r of p for a stack of n layers. Layers need not divide evenly: each
// rank gets n/p layers and the n mod p extra layers go to the middle ranks
// first, then to the first and the last, which also carry the embedding and
// the output layer ([LLAMA3 §3.3.2]: fewer layers on the first and last
// stages). With the interleaved schedule each rank's layers are split into
// v chunks; the totals per rank are the same. With p <= 1 rank 0 holds all.
func StageLayers(n, p, r int) (first, count int) {
	if p <= 1 {
		return 0, n
	}
	r = min(max(r, 0), p-1)
	base, extra := n/p, n%p
	mid := min(extra, p-2)
	first = base * r
	if r >= 1 {
		first += btoi(extra-mid >= 1) + min(r-1, mid)
	}
	return first, stageCount(n, p, r)
}

// stageCount is the number of layers of rank r (see StageLayers).
func stageCount(n, p, r int) int {
	base, extra := n/p, n%p
	mid := min(extra, p-2) // extra layers the middle ranks take, one each
	switch {
	case r == 0:
		return base + btoi(extra-mid >= 1)
	case r == p-1:
		return base + btoi(extra-mid >= 2)
	default:
		return base + btoi(r <= mid)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MaxStageLayers is the most layers a rank of p holds for n layers.
func MaxStageLayers(n, p int) int {
	if p <= 1 {
		return n
	}
	return (n + p - 1) / p
}

// RankOf returns the pipeline rank of p that holds layer l (0-based) of n
// (see StageLayers).
func RankOf(n, p, l int) int {
	if p <= 1 {
		return 0
	}
	base, extra := n/p, n%p
	mid := min(extra, p-2)
	c0 := base + btoi(extra-mid >= 1)
	if l < c0 {
		return 0
	}
	l -= c0
	if l < mid*(base+1) {
		return 1 + l/(base+1)
	}
	l -= mid * (base + 1)
	return min(mid+1+l/max(base, 1), p-1)
}

// CountStarts writes into dst the first ranks of the runs of ranks that
// hold the same number of layers (at most 4: the first rank, the middle
// ranks with an extra layer, the other middle ranks, the last rank) and
// returns how many it wrote (dst needs room for 4).
func CountStarts(n, p int, dst []int) int {
	if p <= 1 {
		dst[0] = 0
		return 1
	}
	mid := min(n%p, p-2)
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
// can be the busiest of p holding n layers whose kind changes at the layers
// kindStarts: the first rank of every run of ranks with the same number of
// layers, and the ranks where a run of layers of one kind ends and the
// next begins. Every other rank holds the same layers as the rank before it
// and, every schedule's in-flight count falling with the rank, no more
// micro-batches in flight.
func CandidateRanks(n, p int, kindStarts []int, dst []int) []int {
	if p > 1 && len(kindStarts) >= p {
		// A stack whose kind changes at least once per rank (an alternating
		// pattern): every rank is a candidate.
		for r := range p {
			dst = append(dst, r)
		}
		return dst
	}
	var starts [4]int
	k := CountStarts(n, p, starts[:])
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
		r := RankOf(n, p, l)
		add(r)
		add(r + 1)
	}
	return dst
}
