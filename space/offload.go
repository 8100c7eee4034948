package space

import (
	"fmt"
	"strconv"
	"strings"
)

// Host offload of model states (Strategy.Offload): what the chips leave
// in their host's memory between optimizer steps.
const (
	// OffloadNone keeps every model state in HBM (the default; "" too).
	OffloadNone = "none"
	// OffloadOptimizer keeps the optimizer state (fp32 master weights and
	// moments) in host memory and runs the optimizer step on the host:
	// Megatron-Core's --optimizer-cpu-offload (a fraction of it with
	// --optimizer-offload-fraction), DeepSpeed's ZeRO-Offload
	// (offload_optimizer), ColossalAI's HybridAdam under Gemini.
	OffloadOptimizer = "optimizer"
	// OffloadParamsOptimizer also keeps the parameters there, gathered
	// to the chip a layer at a time: DeepSpeed's ZeRO-Infinity
	// (offload_param with stage 3), ColossalAI Gemini's cpu placement,
	// PyTorch FSDP's CPUOffload(offload_params=True).
	OffloadParamsOptimizer = "params+optimizer"
)

// Offloads returns the offload kinds in the order the contract lists them.
func Offloads() []string { return []string{OffloadNone, OffloadOptimizer, OffloadParamsOptimizer} }

// OffloadKind returns s's offload kind, OffloadNone for "".
func (s *Strategy) OffloadKind() string {
	if s.Offload == "" {
		return OffloadNone
	}
	return s.Offload
}

// HostOptimizerFraction is the share of the optimizer state s keeps in
// host memory: 0 without offload, OffloadFraction (1 when unset) under
// OffloadOptimizer, 1 under OffloadParamsOptimizer.
func (s *Strategy) HostOptimizerFraction() float64 {
	switch s.OffloadKind() {
	case OffloadOptimizer:
		if s.OffloadFraction > 0 {
			return s.OffloadFraction
		}
		return 1
	case OffloadParamsOptimizer:
		return 1
	}
	return 0
}

// offloadKeys are the strategy keys offload and offload_fraction.
func offloadKeys(knob func(string, func(*Strategy, string) error, func(*Strategy) string, func(*Strategy) bool) keySpec) []keySpec {
	return []keySpec{
		knob("offload", func(st *Strategy, val string) error {
			v := strings.ToLower(val)
			switch v {
			case OffloadNone:
				st.Offload = ""
			case OffloadOptimizer, OffloadParamsOptimizer:
				st.Offload = v
			default:
				return unknownErr("space: offload", val, Offloads())
			}
			return nil
		}, func(st *Strategy) string { return st.OffloadKind() }, func(st *Strategy) bool { return st.Offload == "" }),
		knob("offload_fraction", func(st *Strategy, val string) error {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || !(f > 0 && f <= 1) {
				return fmt.Errorf("space: offload_fraction=%s must be a fraction in (0, 1] (the share of the optimizer state in host memory)", val)
			}
			st.OffloadFraction = f
			if f == 1 {
				st.OffloadFraction = 0 // the default
			}
			return nil
		}, func(st *Strategy) string { return strconv.FormatFloat(st.HostOptimizerFraction(), 'g', -1, 64) },
			func(st *Strategy) bool { return st.OffloadFraction == 0 }),
	}
}

// validateOffload reports an offload the layout cannot run: a fraction
// without optimizer offload, and parameters offloaded from replicas that
// are not sharded (ZeRO-Infinity's parameter offload is ZeRO stage 3's:
// each chip gathers its layers from the host shards).
func (s *Strategy) validateOffload(add func(format string, args ...any)) {
	if s.OffloadFraction > 0 && s.Offload != OffloadOptimizer {
		add("offload_fraction=%g needs offload=optimizer: only the optimizer state is split between host and chip", s.OffloadFraction)
	}
	if s.Offload == OffloadParamsOptimizer && s.Degree[DP] > 1 {
		add("offload=params+optimizer with dp=%d: parameters are offloaded from ZeRO-3 shards, so use fsdp=%d instead of dp", s.Degree[DP], s.Degree[DP]*s.Degree[FSDP])
	}
}
