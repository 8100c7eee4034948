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
package results
