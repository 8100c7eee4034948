package space

import (
	"slices"
	"strings"
)

// The MoE token dispatchers (Strategy.Dispatcher).
const (
	// DispatcherAllToAll is the plain AllToAll of the routed copies:
	// every (token, expert) copy crosses the links on its own
	// (Megatron-Core's --moe-token-dispatcher-type alltoall, torchtitan's
	// expert_parallel_comm_backend "standard").
	DispatcherAllToAll = "alltoall"
	// DispatcherDeepEP is DeepEP's dispatch and combine: a token crosses
	// the network once per node holding one of its experts and fans out
	// over NVLink there (Megatron-Core's --moe-token-dispatcher-type flex
	// with --moe-flex-dispatcher-backend deepep, torchtitan's "deepep").
	DispatcherDeepEP = "deepep"
	// DispatcherHybridEP is NVIDIA's HybridEP, the same per-node
	// deduplication over the network with the NVLink domain (a GB200
	// NVL72 rack) as the node (--moe-flex-dispatcher-backend hybridep).
	DispatcherHybridEP = "hybridep"
)

// Dispatchers lists the MoE token dispatchers, the values of the
// strategy key dispatcher (Strategy.Dispatcher).
func Dispatchers() []string {
	return []string{DispatcherAllToAll, DispatcherDeepEP, DispatcherHybridEP}
}

// NodeDedup reports whether dispatcher d sends a token over the network
// once per node holding one of its experts whatever the routing (DeepEP,
// HybridEP). The default ("") does so only for group-limited routing,
// DeepSeek-V3's node-limited dispatch; the plain AllToAll never.
func NodeDedup(d string) bool { return d == DispatcherDeepEP || d == DispatcherHybridEP }

// dispatcherKey is the strategy key dispatcher (Strategy.Dispatcher).
func dispatcherKey(knob func(string, func(*Strategy, string) error, func(*Strategy) string, func(*Strategy) bool) keySpec) keySpec {
	return knob("dispatcher", func(st *Strategy, val string) error {
		v := strings.ToLower(val)
		if !slices.Contains(Dispatchers(), v) {
			return unknownErr("space: dispatcher", val, Dispatchers())
		}
		st.Dispatcher = v
		return nil
	}, func(st *Strategy) string { return st.Dispatcher }, func(st *Strategy) bool { return st.Dispatcher == "" })
}
