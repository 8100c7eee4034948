package cmd

import (
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/text"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/meshplan/meshplan/internal/settings"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
)

// MaxBatch bounds --batch (sequences) and, with model.MaxSeqLen, --batch-tokens:
// larger numbers are typos, not training runs (Llama 3 405B's largest batch
// was 16M tokens, 2048 sequences).
const MaxBatch = 10_000_000

// MaxPrice bounds --price, the price of one chip for one hour: a million
// in any currency is a typo or a price per something else (an H100 rents
// for a few dollars an hour), and it keeps every cost a readable number.
const MaxPrice = 1e6

// MinPrice is the smallest --price: a millionth of a currency unit per
// chip-hour. A smaller one is a typo, and would print as hundreds of
// digits.
const MinPrice = 1e-6

// Config is every setting a flag, the --config file or a PLAN_ environment
// variable can give. The mapstructure tag is the key in the file; the
// environment variable is PLAN_ followed by the key in upper case.
type Config struct {
	// Model is a preset name, a YAML file or a Hugging Face config.json.
	Model string `mapstructure:"model"`
	// Cluster is a cluster name (e.g. v5p-256, 2xv5p-256, h100-1024) or a YAML file.
	Cluster string `mapstructure:"cluster"`
	// Batch is the global batch in sequences; 0 means from BatchTokens.
	Batch int `mapstructure:"batch"`
	// BatchTokens is the global batch in tokens, rounded to whole
	// sequences; 0 with Batch 0 means DefaultBatchTokens of the cluster.
	BatchTokens int `mapstructure:"batch_tokens"`
	// Seq is the sequence length in tokens; 0 means the model's seq_len.
	Seq int `mapstructure:"seq"`
	// Strategy is the strategy string `plan explain` evaluates.
	Strategy string `mapstructure:"strategy"`
	// Fix is a partial strategy string every searched strategy agrees with.
	Fix string `mapstructure:"fix"`
	// Search is the search method: auto, exhaustive or evolve.
	Search string `mapstructure:"search"`
	// Seed seeds the evolutionary search.
	Seed int64 `mapstructure:"seed"`
	// Objective chooses the recommended strategy: balanced (within the
	// model's error band of the fastest, the least out-of-memory risk),
	// time, memory or cost (needs Price).
	Objective string `mapstructure:"objective"`
	// MaxOOMRisk is the out-of-memory risk above which no row is
	// recommended, a probability.
	MaxOOMRisk float64 `mapstructure:"max_oom_risk"`
	// Top limits the printed Pareto front to its K fastest rows; 0 prints all.
	Top int `mapstructure:"top"`
	// Format is the output format: table, json, csv, md or html (plan and
	// explain; the other commands print table or json).
	Format string `mapstructure:"format"`
	// Tokens is the number of training tokens (--tokens: 15T, 300B, 2e12);
	// empty means no time to train.
	Tokens string `mapstructure:"tokens"`
	// Price is the price of one chip for one hour (--price); 0 means no cost.
	Price float64 `mapstructure:"price"`
	// Emit names the framework whose launch configuration to print instead
	// of the plan: megatron, maxtext, torchtitan or deepspeed; empty prints
	// the plan.
	Emit string `mapstructure:"emit"`
	// MinChips asks for the smallest cluster of --cluster's family on which
	// the model fits.
	MinChips bool `mapstructure:"min_chips"`
	// Out is the output file; empty means stdout.
	Out string `mapstructure:"out"`
	// Quiet turns the progress bar off.
	Quiet bool `mapstructure:"quiet"`
	// Framework is the training framework's profile: a built-in name or a
	// YAML file; empty means the default, generic.
	Framework string `mapstructure:"framework"`

	// Goodput adds, with Tokens, the time to train with interruptions,
	// checkpoints and restarts, and the energy of the run (budget.go).
	Goodput bool `mapstructure:"goodput"`
	// InterruptionsPerChipDay, CheckpointBandwidth (10^9 bytes/s per chip),
	// RestartMinutes, ChipWatts, PUE and EnergyPrice (per kWh) override the
	// budget's defaults; zero keeps the default (EnergyPrice: no energy cost).
	InterruptionsPerChipDay float64 `mapstructure:"interruptions_per_chip_day"`
	CheckpointBandwidth     float64 `mapstructure:"checkpoint_bandwidth"`
	RestartMinutes          float64 `mapstructure:"restart_minutes"`
	ChipWatts               float64 `mapstructure:"chip_watts"`
	PUE                     float64 `mapstructure:"pue"`
	EnergyPrice             float64 `mapstructure:"energy_price"`
	// Deadline is the wall time the run must finish in (90d, 2160h, 13w);
	// with Tokens it plans the sizes of the cluster's family.
	Deadline string `mapstructure:"deadline"`
}

// DefaultConfig returns the defaults of every setting.
func DefaultConfig() Config {
	return Config{Search: "auto", Seed: 1, Format: "table", Objective: search.ObjectiveBalanced, MaxOOMRisk: search.DefaultMaxOOMRisk}
}

// Output formats. Only plan and explain print csv, md and html.
const (
	formatTable = results.FormatTable
	formatJSON  = results.FormatJSON
)

// explicitZeros reports a zero given on purpose for a count whose zero
// value means "not given" (--batch, --batch-tokens, --seq, --price): from a flag, the
// environment or the config file. Such a zero is bad input, not a default.
func explicitZeros(cmd *cobra.Command, v *viper.Viper, cfg *Config) error {
	var errs []error
	for _, n := range []struct {
		key, what string
		v         int
	}{{"batch", "sequences", cfg.Batch}, {"batch_tokens", "tokens", cfg.BatchTokens}, {"seq", "tokens", cfg.Seq}} {
		if n.v != 0 {
			continue
		}
		flag := flagOfKey(n.key)
		f := cmd.Flags().Lookup(flag)
		inEnv := os.Getenv("PLAN_"+strings.ToUpper(n.key)) != "" // viper ignores empty variables too
		if (f != nil && f.Changed) || inEnv || v.InConfig(n.key) {
			errs = append(errs, fmt.Errorf("--%s must be a positive number of %s, got 0 (leave it out for the default)", flag, n.what))
		}
	}
	if cfg.Price == 0 {
		f := cmd.Flags().Lookup("price")
		if (f != nil && f.Changed) || os.Getenv("PLAN_PRICE") != "" || v.InConfig("price") {
			errs = append(errs, errors.New("--price must be a positive price per chip-hour, got 0 (leave it out for no cost)"))
		}
	}
	return errors.Join(errs...)
}

// tableOrJSONOnly returns the commands that print only table or json.
func tableOrJSONOnly() []string { return []string{"models", "clusters", "validate", "calibrate"} }

// Validate reports every setting that is out of range, joined.
func (c Config) Validate() error {
	var errs []error
	for _, n := range []struct {
		flag string
		v    int
	}{{"batch", c.Batch}, {"batch-tokens", c.BatchTokens}, {"seq", c.Seq}, {"top", c.Top}} {
		if n.v < 0 {
			errs = append(errs, fmt.Errorf("--%s must not be negative, got %d", n.flag, n.v))
		}
	}
	if c.Batch > MaxBatch {
		errs = append(errs, fmt.Errorf("--batch %d is more than %d sequences", c.Batch, MaxBatch))
	}
	if c.BatchTokens > MaxBatch*model.MaxSeqLen {
		errs = append(errs, fmt.Errorf("--batch-tokens %d is more than %d tokens", c.BatchTokens, MaxBatch*model.MaxSeqLen))
	}
	if c.Seq > model.MaxSeqLen {
		errs = append(errs, fmt.Errorf("--seq %d is longer than %d tokens", c.Seq, model.MaxSeqLen))
	}
	if c.Batch > 0 && c.BatchTokens > 0 {
		errs = append(errs, fmt.Errorf("give --batch (%d sequences) or --batch-tokens (%d tokens), not both", c.Batch, c.BatchTokens))
	}
	if !slices.Contains(search.Objectives(), c.Objective) {
		errs = append(errs, fmt.Errorf("--objective must be %s, got %q", orList(search.Objectives()), c.Objective))
	} else if c.Objective == search.ObjectiveCost && c.Price <= 0 {
		errs = append(errs, errors.New("--objective cost needs --price (and --tokens): the cost is the chip-hours to train times the price of one"))
	}
	if !(c.MaxOOMRisk >= 0 && c.MaxOOMRisk <= 1) {
		errs = append(errs, fmt.Errorf("--max-oom-risk must be a probability from 0 to 1 (e.g. 0.1 for 10%%), got %g", c.MaxOOMRisk))
	}
	if !slices.Contains([]string{"auto", "exhaustive", "evolve"}, c.Search) {
		errs = append(errs, fmt.Errorf("--search must be auto, exhaustive or evolve, got %q", c.Search))
	}
	if !slices.Contains(results.ExplainFormats(), c.Format) {
		errs = append(errs, fmt.Errorf("--format must be %s, got %q", orList(results.Formats()), c.Format))
	}
	if c.Tokens != "" {
		if _, err := results.ParseCount(c.Tokens); err != nil {
			errs = append(errs, fmt.Errorf("--tokens: %w", err))
		}
	}
	if c.Price < 0 || math.IsNaN(c.Price) || math.IsInf(c.Price, 0) {
		errs = append(errs, fmt.Errorf("--price must be a positive price per chip-hour, got %g", c.Price))
	} else if c.Price > 0 && c.Price < MinPrice {
		errs = append(errs, fmt.Errorf("--price %g is less than %g per chip-hour: give the price of one chip for one hour", c.Price, MinPrice))
	} else if c.Price > MaxPrice {
		errs = append(errs, fmt.Errorf("--price %g is more than %.0f per chip-hour: give the price of one chip for one hour", c.Price, float64(MaxPrice)))
	} else if c.Price > 0 && c.Tokens == "" {
		errs = append(errs, fmt.Errorf("--price %g needs --tokens: the cost is for training on that many tokens", c.Price))
	}
	errs = append(errs, c.validateBudget()...)
	if c.Emit != "" && !slices.Contains(results.Frameworks(), c.Emit) {
		errs = append(errs, fmt.Errorf("--emit must be %s, got %q", orList(results.Frameworks()), c.Emit))
	}
	return errors.Join(errs...)
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Training returns the --tokens and --price of c; the zero Training when
// --tokens is not given. c must have passed Validate.
func (c Config) Training() results.Training {
	if c.Tokens == "" {
		return results.Training{}
	}
	n, _ := results.ParseCount(c.Tokens)
	return results.Training{Tokens: n, PricePerChipHour: c.Price, Budget: c.budget()}
}

// flagOfKey maps each Config key to its flag name.
func flagOfKey(key string) string { return strings.ReplaceAll(key, "_", "-") }

// configKeys returns the Config keys with their default values.
func configKeys() (map[string]any, error) {
	m := map[string]any{}
	if err := mapstructure.Decode(DefaultConfig(), &m); err != nil {
		return nil, fmt.Errorf("decoding the default configuration: %w", err)
	}
	return m, nil
}

// configErrors names each field that could not be read by where its value
// came from: the environment variable PLAN_KEY when it is set, else the
// --config file's key (flags are checked when they are parsed).
func configErrors(v *viper.Viper, fes []*settings.FieldError) error {
	errs := make([]error, len(fes))
	for i, fe := range fes {
		env := "PLAN_" + strings.ToUpper(fe.Field)
		switch {
		case os.Getenv(env) != "":
			errs[i] = fmt.Errorf("%s: %w", env, fe.Err)
		case v.ConfigFileUsed() != "":
			errs[i] = fmt.Errorf("--config %s: %w", v.ConfigFileUsed(), fe)
		default:
			errs[i] = fe
		}
	}
	return errors.Join(errs...)
}

// newConfigViper returns a viper holding every Config key at its default
// (defaults, from configKeys) that reads PLAN_ environment variables
// (spf13/viper#761: every key is registered as a default so that the
// environment reaches Unmarshal).
func newConfigViper(defaults map[string]any) *viper.Viper {
	v := viper.New()
	for k, val := range defaults {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix("PLAN")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()
	return v
}

// readConfigFile reads data, the YAML of the --config file path, into v.
// A document that is not YAML, or a key that is not one of defaults', is
// bad input naming the file.
func readConfigFile(v *viper.Viper, path string, data []byte, defaults map[string]any) error {
	v.SetConfigFile(path)
	if err := settings.ReadYAML(v, data); err != nil {
		return badInputf("--config %s: %w", path, err)
	}
	var unknown []string
	for _, k := range v.AllKeys() {
		if _, ok := defaults[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		known := slices.Sorted(maps.Keys(defaults))
		return badInputf("--config %s: unknown key %q (known keys: %s)", path, unknown[0], strings.Join(known, ", "))
	}
	return nil
}

// decodeConfig reads every setting of v into a Config; a value of the
// wrong kind, or a number that is not whole, is bad input naming the
// field and where it came from.
func decodeConfig(v *viper.Viper) (Config, error) {
	var cfg Config
	if err := v.UnmarshalExact(&cfg, viper.DecodeHook(settings.DecodeHook())); err != nil {
		return Config{}, badInput(configErrors(v, settings.FieldErrors(err)))
	}
	return cfg, nil
}

// loadConfig fills a.cfg for command cmd: defaults, then the --config file,
// then PLAN_ environment variables, then the flags set on the command line
// (flags are bound key by key so that UnmarshalExact does not see --help
// or --config).
func (a *app) loadConfig(cmd *cobra.Command) error {
	defaults, err := configKeys()
	if err != nil {
		return err
	}
	v := newConfigViper(defaults)
	if f := cmd.Flags().Lookup("config"); f != nil && f.Value.String() != "" {
		path := f.Value.String()
		data, err := bounded.ReadFile(path, bounded.ConfigBytes)
		if err != nil {
			return badInputf("--config %s: cannot read it: %s", path, text.OneLine(err.Error()))
		}
		if err := readConfigFile(v, path, data, defaults); err != nil {
			return err
		}
	}
	for k := range defaults {
		if f := cmd.Flags().Lookup(flagOfKey(k)); f != nil {
			if err := v.BindPFlag(k, f); err != nil {
				return fmt.Errorf("binding --%s: %w", f.Name, err)
			}
		}
	}
	cfg, err := decodeConfig(v)
	if err != nil {
		return err
	}
	if err := errors.Join(explicitZeros(cmd, v, &cfg), cfg.Validate()); err != nil {
		return badInput(err)
	}
	if cfg.Format == results.FormatTrace && cmd.Name() != "explain" {
		return badInputf("--format trace is for plan explain only (the timeline of one strategy's step)")
	}
	if slices.Contains(tableOrJSONOnly(), cmd.Name()) && cfg.Format != formatTable && cfg.Format != formatJSON {
		return badInputf("--format must be table or json for plan %s, got %q", cmd.Name(), cfg.Format)
	}
	a.cfg = cfg
	return nil
}
