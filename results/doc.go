// Package results turns the planner's values into what the plan command
// prints: JSON data-transfer objects with the contract's snake_case field
// names, and aligned text tables with human units.
//
// # JSON
//
// The DTOs ([Model], [Cluster], [Result], [Plan]) are separate from the
// library types so that the wire format stays fixed when internal structs
// change. Every size ending in _gb is in 10^9 bytes, every time in seconds.
//
// # Tables
//
// The Write*Table functions render with text/tabwriter and the unit helpers
// [Count], [Bytes], [FLOPRate] and [Seconds], e.g. 70.6B, 95.7 GB,
// 459 TFLOP/s and 12.3 s.
//
// # Reports
//
// [Plan.Write] and [WriteExplain] render the formats of --format: table,
// json, csv ([CSVColumns], one row per strategy), md (a Markdown review
// summary) and html (one self-contained page whose SVG charts are drawn with
// html/template: a scatter of the front with one <circle data-point> per row
// and stacked bars of time and memory). [Training] adds the days,
// chip-hours and cost to train (--tokens, --price); [ClusterOption] and
// [MarkClusterFront] compare clusters on (days, cost); [Emit] writes a
// strategy as Megatron-LM, MaxText, torchtitan or DeepSpeed configuration.
package results
