// Package cmd is the plan command line: cobra commands and viper
// configuration over the library packages. It parses flags, a config file
// and PLAN_ environment variables, calls model, profiles, space, cost,
// memory and search, and hands the values to results to print.
//
// # Commands
//
//	plan --model M --cluster C [--batch N | --batch-tokens N] [--seq S] [--fix SPEC]
//	     [--search auto|exhaustive|evolve] [--seed 1] [--top K]
//	plan explain --model M --cluster C --batch N [--seq S] --strategy SPEC
//	plan models [NAME|FILE...]
//	plan clusters [NAME|FILE...]
//
// Every command takes --format table|json, --out FILE (written atomically)
// and --config FILE.
//
// # Configuration
//
// Every flag that names a [Config] field can also come from a YAML file
// given with --config (keys as in Config's mapstructure tags, e.g.
// batch_tokens) or from an environment variable PLAN_KEY (PLAN_MODEL,
// PLAN_BATCH_TOKENS, ...). A flag given on the command line wins over the
// environment, which wins over the file, which wins over [DefaultConfig].
// An unknown key in the file is an error.
//
// # Exit codes
//
//   - 0: success.
//   - 1: the input was understood but no strategy fits (a *search.NoFitError),
//     or an internal error (a failure of the planner itself, including a
//     recovered panic, reported as one sentence without a stack trace).
//   - 2: bad input: an unknown preset, a malformed or unknown-key file, an
//     impossible number, a bad flag, or a strategy that does not divide.
//
// Errors are printed once, to stderr, as "plan: ..." (a list of violated
// rules follows on indented lines).
package cmd
