// Package cmd is the plan command line: cobra commands and viper
// configuration over the library packages. It parses flags, a config file
// and PLAN_ environment variables, calls model, profiles, space, cost,
// memory and search, and hands the values to results to print.
//
// # Commands
//
//	plan --model M --cluster C[,C...|C..C] [--batch N | --batch-tokens N] [--seq S]
//	     [--fix SPEC] [--search auto|exhaustive|evolve] [--seed 1] [--top K]
//	     [--tokens N [--price P]] [--min-chips] [--emit FRAMEWORK]
//	plan explain --model M --cluster C --batch N [--seq S] --strategy SPEC
//	plan models [NAME|FILE...]
//	plan clusters [NAME|FILE...]
//	plan validate [--runs FILE] [--cluster C]
//	plan calibrate [--runs FILE] --cluster C [--out profile.yaml]
//	plan sweep --config sweep.yaml --out DIR [--shard I/N] [--resume]
//	plan merge DIR... --out FILE
//
// plan and plan explain take --format table|json|csv|md|html, the other
// commands table|json. Every command takes --out FILE (written atomically)
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
