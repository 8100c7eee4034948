package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/meshplan/meshplan/internal/settings"
	"github.com/meshplan/meshplan/search"
)

// Search methods a sweep accepts, as plan's --search flag spells them.
var searchMethods = []string{"auto", "exhaustive", "evolve"}

// Config is a sweep configuration: a grid (the product of Models, Clusters,
// Batches, Seqs and Fix, in that nesting order, Fix innermost), explicit
// Cells, or both (the grid's cells first), and the framework profile and
// search settings every cell uses. The mapstructure tags are the keys of the YAML file; the
// environment variable of a key is PLAN_ followed by the key in upper case
// with _ for . (PLAN_MODELS, PLAN_SEARCH_SEED, ...), a list given as
// comma-separated values.
type Config struct {
	// Models are preset names, YAML files or Hugging Face config.json files.
	Models []string `mapstructure:"models"`
	// Clusters are cluster names (e.g. v5p-256, h100-64) or YAML files.
	Clusters []string `mapstructure:"clusters"`
	// Batches are global batches in sequences per step.
	Batches []int `mapstructure:"batches"`
	// Seqs are sequence lengths in tokens; empty means each model's seq_len.
	Seqs []int `mapstructure:"seqs"`
	// Fix are partial strategy strings (plan's --fix); empty means one
	// unconstrained search per cell, and "" in the list is unconstrained.
	Fix []string `mapstructure:"fix"`
	// Cells are explicit cells, run after the grid's.
	Cells []CellSpec `mapstructure:"cells"`
	// Framework is the training framework profile of every cell, as plan's
	// --framework takes it: a built-in name (framework.Names) or a YAML
	// file; empty means framework.Default.
	Framework string `mapstructure:"framework"`
	// Search holds the settings of every cell's search.
	Search Search `mapstructure:"search"`
	// Training is what every cell's plan adds to train on a number of
	// tokens: days, chip-hours, cost and, with goodput, the goodput and
	// energy of every row.
	Training Training `mapstructure:"training"`
}

// CellSpec is one explicit cell of a Config. Seq 0 means the model's
// seq_len.
type CellSpec struct {
	Model   string `mapstructure:"model" json:"model"`
	Cluster string `mapstructure:"cluster" json:"cluster"`
	Batch   int    `mapstructure:"batch" json:"batch"`
	Seq     int    `mapstructure:"seq" json:"seq"`
	Fix     string `mapstructure:"fix" json:"fix"`
}

// Search is the search settings of every cell, as plan's --search, --seed
// and --top flags.
type Search struct {
	// Method is auto, exhaustive or evolve.
	Method string `mapstructure:"method" json:"method"`
	// Seed seeds the evolutionary search.
	Seed int64 `mapstructure:"seed" json:"seed"`
	// Top keeps the K fastest rows of each cell's Pareto front, or down to
	// its recommended row when that is slower (DefaultTop unless set); 0
	// keeps the whole front.
	Top int `mapstructure:"top" json:"top"`
	// Objective chooses each cell's recommended row, as plan's --objective:
	// balanced (the default), time or memory (cost needs a price, which a
	// sweep has not).
	Objective string `mapstructure:"objective" json:"objective,omitempty"`
}

// String says the settings in words, as the sweep file's keys: "method
// auto, seed 1, top 5, objective balanced" (top 0 is "top all", an empty
// objective the default, balanced).
func (s Search) String() string {
	top := "all"
	if s.Top > 0 {
		top = fmt.Sprint(s.Top)
	}
	objective := s.Objective
	if objective == "" {
		objective = "balanced"
	}
	return fmt.Sprintf("method %s, seed %d, top %s, objective %s", s.Method, s.Seed, top, objective)
}

// DefaultTop is the number of rows of each cell's Pareto front a sweep
// keeps unless search.top says otherwise: a whole front can take hundreds
// of kilobytes a cell, which over MaxCells cells is tens of gigabytes.
const DefaultTop = 10

// MaxCells is the most cells one sweep configuration may hold. A larger
// grid is refused before anything is loaded or written, naming its count:
// split it into several configurations of fewer values.
const MaxCells = 100_000

// DefaultConfig returns the defaults: an empty grid, the default framework
// profile (Framework empty) and plan's search defaults (auto, seed 1) with
// the DefaultTop fastest rows of each cell's front kept.
func DefaultConfig() Config {
	return Config{Search: Search{Method: "auto", Seed: 1, Top: DefaultTop}}
}

// CellCount returns the number of cells of c before repeats are found:
// the product of the grid's list lengths (an absent seqs or fix counts
// once) plus the explicit cells. A count past math.MaxInt64 is
// math.MaxInt64 with overflow true.
func (c Config) CellCount() (count int64, overflow bool) {
	grid := len(c.Models) > 0 || len(c.Clusters) > 0 || len(c.Batches) > 0 || len(c.Seqs) > 0 || len(c.Fix) > 0
	if grid {
		count = 1
		for _, n := range []int{len(c.Models), len(c.Clusters), len(c.Batches), max(len(c.Seqs), 1), max(len(c.Fix), 1)} {
			if n != 0 && count > math.MaxInt64/int64(n) {
				return math.MaxInt64, true
			}
			count *= int64(n)
		}
	}
	if count > math.MaxInt64-int64(len(c.Cells)) {
		return math.MaxInt64, true
	}
	return count + int64(len(c.Cells)), false
}

// gridSize is the message of a configuration of more than MaxCells cells.
func (c Config) gridSize() string {
	n, overflow := c.CellCount()
	count := fmt.Sprintf("%d", n)
	if overflow {
		count = fmt.Sprintf("more than %d", n)
	}
	return fmt.Sprintf("the sweep has %s cells (%d models x %d clusters x %d batches x %d seqs x %d fixes, plus %d explicit cells), more than the %d one configuration may hold: "+
		"split it into several configurations with fewer values (one per model, or fewer batches or seqs), and run each with --shard I/N on several machines if it is still long",
		count, len(c.Models), len(c.Clusters), len(c.Batches), max(len(c.Seqs), 1), max(len(c.Fix), 1), len(c.Cells), MaxCells)
}

// defaultKeys returns DefaultConfig as a nested map, keyed as the file.
func defaultKeys() (map[string]any, error) {
	m := map[string]any{}
	if err := mapstructure.Decode(DefaultConfig(), &m); err != nil {
		return nil, fmt.Errorf("sweep: decoding the default configuration: %w", err)
	}
	return m, nil
}

// NewViper returns a viper instance for a sweep configuration: every key of
// Config registered with its default (so that PLAN_ environment variables
// reach Decode, spf13/viper#761) and environment variables PLAN_KEY, with
// _ for the dot of a nested key. Callers bind flags key by key (e.g.
// v.BindPFlag("search.seed", ...)), read a file with ReadConfig, then Decode.
func NewViper() (*viper.Viper, error) {
	v := viper.New()
	defaults, err := defaultKeys()
	if err != nil {
		return nil, err
	}
	for k, val := range defaults {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix("PLAN")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	return v, nil
}

// ReadConfig reads the YAML configuration r (named name in errors), at
// most bounded.ConfigBytes of it, into v and rejects keys that Config does
// not have.
func ReadConfig(v *viper.Viper, name string, r io.Reader) error {
	data, err := bounded.Read(r, bounded.ConfigBytes)
	if err != nil {
		return fmt.Errorf("%s: cannot read it: %w", name, err)
	}
	if err := settings.ReadYAML(v, data); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	known := map[string]bool{}
	nv, err := NewViper()
	if err != nil {
		return err
	}
	for _, k := range nv.AllKeys() {
		known[k] = true
	}
	var unknown []string
	for _, k := range v.AllKeys() {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%s: unknown key %q (known keys: %s)", name, unknown[0], strings.Join(slices.Sorted(maps.Keys(known)), ", "))
	}
	return nil
}

// Decode decodes v strictly into a Config and validates it.
func Decode(v *viper.Viper) (Config, error) {
	var c Config
	if err := v.UnmarshalExact(&c, viper.DecodeHook(settings.DecodeHook())); err != nil {
		return Config{}, fieldErrors(settings.FieldErrors(err))
	}
	for i := range c.Models {
		c.Models[i] = strings.TrimSpace(c.Models[i])
	}
	for i := range c.Clusters {
		c.Clusters[i] = strings.TrimSpace(c.Clusters[i])
	}
	for i := range c.Fix {
		c.Fix[i] = strings.TrimSpace(c.Fix[i])
	}
	c.Framework = strings.TrimSpace(c.Framework)
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// fieldErrors names each field that could not be read: by its environment
// variable when that is set (PLAN_BATCHES, PLAN_SEARCH_SEED), else by its
// key in the file ("batches[0]", "cells[1].batch").
func fieldErrors(fes []*settings.FieldError) error {
	errs := make([]error, len(fes))
	for i, fe := range fes {
		key, _, _ := strings.Cut(fe.Field, "[")
		env := "PLAN_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
		if os.Getenv(env) != "" {
			errs[i] = fmt.Errorf("%s: %w", env, fe.Err)
		} else {
			errs[i] = fe
		}
	}
	return errors.Join(errs...)
}

// ParseConfig parses a YAML sweep configuration with the PLAN_ environment
// applied, as `plan sweep --config` does without flags. name names the
// data in errors.
func ParseConfig(name string, data []byte) (Config, error) {
	v, err := NewViper()
	if err != nil {
		return Config{}, err
	}
	if err := ReadConfig(v, name, bytes.NewReader(data)); err != nil {
		return Config{}, err
	}
	return Decode(v)
}

// Validate reports every setting that is missing or out of range, joined.
// It does not load models or clusters; Expand does. A configuration of
// more than MaxCells cells is that one error alone.
func (c Config) Validate() error {
	if n, _ := c.CellCount(); n > MaxCells {
		return errors.New(c.gridSize())
	}
	errs := c.Training.validate()
	grid := len(c.Models) > 0 || len(c.Clusters) > 0 || len(c.Batches) > 0 || len(c.Seqs) > 0 || len(c.Fix) > 0
	if grid || len(c.Cells) == 0 {
		for _, l := range []struct {
			key string
			n   int
			why string
		}{
			{"models", len(c.Models), "a preset name, a YAML file or a config.json"},
			{"clusters", len(c.Clusters), "a name such as v5p-256 or h100-64, or a YAML file"},
			{"batches", len(c.Batches), "a global batch in sequences"},
		} {
			if l.n == 0 {
				if len(c.Cells) == 0 {
					errs = append(errs, fmt.Errorf("%s: give at least one (%s), or list explicit cells", l.key, l.why))
				} else {
					errs = append(errs, fmt.Errorf("%s: the grid needs at least one (%s) when any of models, clusters, batches, seqs or fix is given", l.key, l.why))
				}
			}
		}
	}
	for _, m := range c.Models {
		if m == "" {
			errs = append(errs, errors.New("models: an entry is empty"))
		}
	}
	for _, cl := range c.Clusters {
		if cl == "" {
			errs = append(errs, errors.New("clusters: an entry is empty"))
		}
	}
	for _, b := range c.Batches {
		if b <= 0 {
			errs = append(errs, fmt.Errorf("batches: %d is not a positive number of sequences", b))
		}
	}
	for _, s := range c.Seqs {
		if s <= 0 {
			errs = append(errs, fmt.Errorf("seqs: %d is not a positive number of tokens", s))
		}
	}
	for i, cs := range c.Cells {
		if strings.TrimSpace(cs.Model) == "" {
			errs = append(errs, fmt.Errorf("cells[%d].model is required", i))
		}
		if strings.TrimSpace(cs.Cluster) == "" {
			errs = append(errs, fmt.Errorf("cells[%d].cluster is required", i))
		}
		if cs.Batch <= 0 {
			errs = append(errs, fmt.Errorf("cells[%d].batch must be a positive number of sequences, got %d", i, cs.Batch))
		}
		if cs.Seq < 0 {
			errs = append(errs, fmt.Errorf("cells[%d].seq must not be negative, got %d", i, cs.Seq))
		}
	}
	if !slices.Contains(searchMethods, c.Search.Method) {
		errs = append(errs, fmt.Errorf("search.method must be auto, exhaustive or evolve, got %q", c.Search.Method))
	}
	if c.Search.Top < 0 {
		errs = append(errs, fmt.Errorf("search.top must not be negative, got %d", c.Search.Top))
	}
	switch c.Search.Objective {
	case "", search.ObjectiveBalanced, search.ObjectiveTime, search.ObjectiveMemory:
	case search.ObjectiveCost:
		errs = append(errs, errors.New("search.objective cost needs a price per chip-hour, which a sweep has not: use balanced, time or memory"))
	default:
		errs = append(errs, fmt.Errorf("search.objective must be balanced, time or memory, got %q", c.Search.Objective))
	}
	return errors.Join(errs...)
}
