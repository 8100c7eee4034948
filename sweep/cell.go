package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"strings"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Cell is one plan of a sweep, in canonical form: the model and cluster as
// the configuration names them, the global batch in sequences, the
// sequence length resolved (the model's seq_len when the configuration
// gives none) and the fix string in canonical key order. It is the "cell"
// object of every output line.
type Cell struct {
	Model   string `json:"model"`
	Cluster string `json:"cluster"`
	Batch   int    `json:"batch"`
	Seq     int    `json:"seq"`
	Fix     string `json:"fix"`
}

// Key returns the cell's identity: the canonical (model, cluster, batch,
// seq, fix) tuple as a JSON array. Two cells with the same key are the
// same plan.
func (c Cell) Key() string {
	b, _ := json.Marshal([]any{c.Model, c.Cluster, c.Batch, c.Seq, c.Fix})
	return string(b)
}

// String names the cell for people, e.g.
// "llama3-8b on h100-8, batch 16 x 8192, fix tp=1".
func (c Cell) String() string {
	s := fmt.Sprintf("%s on %s, batch %d x %d", c.Model, c.Cluster, c.Batch, c.Seq)
	if c.Fix != "" {
		s += ", fix " + c.Fix
	}
	return s
}

// valid reports what is wrong with a cell read from a file, or nil.
func (c Cell) valid() error {
	switch {
	case c.Model == "":
		return errors.New("cell.model is empty")
	case c.Cluster == "":
		return errors.New("cell.cluster is empty")
	case c.Batch <= 0:
		return fmt.Errorf("cell.batch %d is not positive", c.Batch)
	case c.Seq <= 0:
		return fmt.Errorf("cell.seq %d is not positive", c.Seq)
	}
	return nil
}

// Grid is an expanded sweep: its cells in grid order, the framework
// profile of every cell and the models, clusters and fixes they name,
// loaded once.
type Grid struct {
	// Cells are the sweep's cells: the grid's (models outermost, then
	// clusters, batches, seqs, fix innermost), then the explicit cells.
	Cells []Cell
	// Search is the configuration's search settings.
	Search Search
	// Training is the configuration's training section: what every
	// cell's plan adds to train on a number of tokens.
	Training Training
	// Framework is the framework profile every cell is planned with (the
	// configuration's framework key, framework.Default when it has none).
	// Its name is each plan's "framework"; a Grid built by hand may leave
	// it zero (the default profile's name, the default model's options).
	Framework framework.Profile
	// Warnings are the assumptions made reading the models of the sweep:
	// one line per assumption of a config.json whose model_type the
	// planner does not know (model.LoadWarnings), prefixed by the model.
	Warnings []string

	models   map[string]model.Spec
	clusters map[string]profiles.Cluster
	fixes    map[string]space.Fix
}

// Expand loads the framework profile and every model and cluster of c,
// canonicalises the fix strings and lists the cells in grid order. Every
// unknown name, bad file, bad fix or repeated cell is reported, joined.
func Expand(c Config) (*Grid, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := &Grid{
		Search:   c.Search,
		Training: c.Training,
		models:   map[string]model.Spec{},
		clusters: map[string]profiles.Cluster{},
		fixes:    map[string]space.Fix{},
	}
	var errs []error
	fw := strings.TrimSpace(c.Framework)
	if fw == "" {
		fw = framework.Default
	}
	if p, err := framework.Load(fw); err != nil {
		errs = append(errs, fmt.Errorf("framework %q: %s", fw, text.OneLine(strings.TrimPrefix(err.Error(), "framework: "))))
	} else {
		g.Framework = p
	}
	loadModel := func(where, name string) (model.Spec, bool) {
		name = strings.TrimSpace(name)
		if m, ok := g.models[name]; ok {
			return m, true
		}
		m, warnings, err := model.LoadWarnings(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %s", where, name, text.OneLine(err.Error())))
			return model.Spec{}, false
		}
		for _, w := range warnings {
			g.Warnings = append(g.Warnings, name+": "+w)
		}
		g.models[name] = m
		return m, true
	}
	loadCluster := func(where, name string) bool {
		name = strings.TrimSpace(name)
		if _, ok := g.clusters[name]; ok {
			return true
		}
		cl, err := profiles.Load(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %s", where, name, text.OneLine(err.Error())))
			return false
		}
		g.clusters[name] = cl
		return true
	}
	canonFix := func(where, s string) (string, bool) {
		f, err := space.ParseFix(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %s", where, s, text.OneLine(err.Error())))
			return "", false
		}
		k := f.String()
		g.fixes[k] = f
		return k, true
	}
	seqOf := func(where string, m model.Spec, seq int) (int, bool) {
		if seq > 0 {
			return seq, true
		}
		if m.SeqLen <= 0 {
			errs = append(errs, fmt.Errorf("%s: model %s has no seq_len: give seqs", where, m.Name))
			return 0, false
		}
		return m.SeqLen, true
	}

	fixes := c.Fix
	if len(fixes) == 0 {
		fixes = []string{""}
	}
	var canon []string
	okFix := true
	for _, f := range fixes {
		k, ok := canonFix("fix", f)
		okFix = okFix && ok
		canon = append(canon, k)
	}
	okClusters := true
	for _, cl := range c.Clusters {
		okClusters = loadCluster("clusters", cl) && okClusters
	}
	seqs := c.Seqs
	if len(seqs) == 0 {
		seqs = []int{0}
	}
	for _, mn := range c.Models {
		m, ok := loadModel("models", mn)
		if !ok || !okClusters || !okFix {
			continue
		}
		for _, cl := range c.Clusters {
			for _, b := range c.Batches {
				for _, s := range seqs {
					seq, ok := seqOf("models "+mn, m, s)
					if !ok {
						continue
					}
					for _, f := range canon {
						g.Cells = append(g.Cells, Cell{Model: mn, Cluster: cl, Batch: b, Seq: seq, Fix: f})
					}
				}
			}
		}
	}
	for i, cs := range c.Cells {
		where := fmt.Sprintf("cells[%d]", i)
		m, okM := loadModel(where+".model", cs.Model)
		okC := loadCluster(where+".cluster", cs.Cluster)
		f, okF := canonFix(where+".fix", cs.Fix)
		if !okM || !okC || !okF {
			continue
		}
		seq, ok := seqOf(where, m, cs.Seq)
		if !ok {
			continue
		}
		g.Cells = append(g.Cells, Cell{Model: strings.TrimSpace(cs.Model), Cluster: strings.TrimSpace(cs.Cluster), Batch: cs.Batch, Seq: seq, Fix: f})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	seen := make(map[string]int, len(g.Cells))
	repeats := 0
	for i, cell := range g.Cells {
		if j, ok := seen[cell.Key()]; ok {
			if repeats++; repeats <= MaxListed {
				errs = append(errs, fmt.Errorf("cell %d (%s) repeats cell %d: every cell of a sweep must differ", i, cell, j))
			}
			continue
		}
		seen[cell.Key()] = i
	}
	if repeats > MaxListed {
		errs = append(errs, fmt.Errorf("and %d more repeated cells", repeats-MaxListed))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(g.Cells) == 0 {
		return nil, errors.New("the sweep configuration has no cells")
	}
	return g, nil
}
