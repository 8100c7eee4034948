package space

import (
	"errors"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// Space is the set of strategies for one model, cluster and workload, as a
// mixed-radix product of independent choices (genes). Every gene vector
// decodes to a strategy or is reported invalid; the order is deterministic.
type Space struct {
	// unexported: choice lists built by New.
	cards []int
}

// New builds the space of model m on cluster c for workload w. fix is a
// partial strategy (the `--fix` string, parsed by ParseFix) that every
// strategy must agree with; the zero Fix restricts nothing.
func New(m model.Spec, c profiles.Cluster, w Workload, fix Fix) (*Space, error) {
	return nil, errors.New("space: not implemented")
}

// Fix is a partial strategy: the keys a user pinned with --fix.
type Fix struct {
	// Set has one entry per key given, e.g. "tp" -> "8".
	Set map[string]string
}

// Cardinalities returns the number of choices of each gene.
func (sp *Space) Cardinalities() []int { return sp.cards }

// Size is the number of gene vectors: the product of Cardinalities.
func (sp *Space) Size() int64 {
	n := int64(1)
	for _, c := range sp.cards {
		n *= int64(c)
	}
	return n
}

// Decode writes the strategy for genes into dst (placed, with Mesh filled)
// and reports whether it is valid. It does not allocate on the hot path.
func (sp *Space) Decode(genes []int, dst *Strategy) bool { return false }

// DecodeIndex decodes the i-th gene vector in mixed-radix order (the first
// gene varies slowest), 0 <= i < Size.
func (sp *Space) DecodeIndex(i int64, genes []int, dst *Strategy) bool { return false }
