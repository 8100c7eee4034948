// Package planner is the application: it turns a problem as a user states
// it ([Request]: a model, a cluster, a workload, a --fix string and a
// framework profile) into the plan `plan` prints, through the one
// planning path ([Solve]: search.Run, then results.PlanOf), and evaluates
// one given strategy in full ([Explain]). It also holds the planning
// policy that the command line and sweeps share: the default global batch
// ([DefaultBatchTokens], [Workload]), planning over a list or range of
// clusters ([Clusters]), on the smallest cluster of a family that fits
// ([MinChips]) and under several frameworks ([Frameworks]).
//
// The command (cmd) and the sweep runner (sweep) are wiring above it: they
// read flags and files, draw progress and write outputs.
package planner
