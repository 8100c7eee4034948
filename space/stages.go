package space

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
