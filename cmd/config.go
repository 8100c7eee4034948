package cmd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// DefaultBatchTokens is the global batch, in tokens, used when neither
// --batch nor --batch-tokens is given: 4Mi tokens (4,194,304), rounded to
// the nearest whole number of sequences and at least one.
const DefaultBatchTokens = 4 << 20

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
	// sequences; 0 with Batch 0 means DefaultBatchTokens.
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
	// Top limits the printed Pareto front to its K fastest rows; 0 prints all.
	Top int `mapstructure:"top"`
	// Format is the output format: table or json.
	Format string `mapstructure:"format"`
	// Out is the output file; empty means stdout.
	Out string `mapstructure:"out"`
	// Quiet turns the progress bar off.
	Quiet bool `mapstructure:"quiet"`
}

// DefaultConfig returns the defaults of every setting.
func DefaultConfig() Config {
	return Config{Search: "auto", Seed: 1, Format: "table"}
}

// Output formats.
const (
	formatTable = "table"
	formatJSON  = "json"
)

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
	if c.Batch > 0 && c.BatchTokens > 0 {
		errs = append(errs, fmt.Errorf("give --batch (%d sequences) or --batch-tokens (%d tokens), not both", c.Batch, c.BatchTokens))
	}
	if !slices.Contains([]string{"auto", "exhaustive", "evolve"}, c.Search) {
		errs = append(errs, fmt.Errorf("--search must be auto, exhaustive or evolve, got %q", c.Search))
	}
	if !slices.Contains([]string{formatTable, formatJSON}, c.Format) {
		errs = append(errs, fmt.Errorf("--format must be table or json, got %q", c.Format))
	}
	return errors.Join(errs...)
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

// loadConfig fills a.cfg for command cmd: defaults, then the --config file,
// then PLAN_ environment variables, then the flags set on the command line
// (spf13/viper#761: every key is registered as a default so that the
// environment reaches Unmarshal; flags are bound key by key so that
// UnmarshalExact does not see --help or --config).
func (a *app) loadConfig(cmd *cobra.Command) error {
	v := viper.New()
	defaults, err := configKeys()
	if err != nil {
		return err
	}
	for k, val := range defaults {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix("PLAN")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()

	if f := cmd.Flags().Lookup("config"); f != nil && f.Value.String() != "" {
		path := f.Value.String()
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return badInputf("--config %s: %s", path, oneLine(err.Error()))
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
	}
	for k := range defaults {
		if f := cmd.Flags().Lookup(flagOfKey(k)); f != nil {
			if err := v.BindPFlag(k, f); err != nil {
				return fmt.Errorf("binding --%s: %w", f.Name, err)
			}
		}
	}
	var cfg Config
	if err := v.UnmarshalExact(&cfg); err != nil {
		return badInputf("reading the configuration: %s", oneLine(err.Error()))
	}
	if err := cfg.Validate(); err != nil {
		return badInput(err)
	}
	a.cfg = cfg
	return nil
}
