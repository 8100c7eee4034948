package goodput

import "strings"

// Sourced is a default value with where it comes from, in words: a
// publication, a datasheet, or "assumed" with the reason.
type Sourced struct {
	// Value is the default in the unit of the name it is returned under.
	Value float64
	// Source names the publication or says that it is assumed.
	Source string
}

// Llama 3 405B's pre-training: 466 job interruptions (47 planned, 419
// unexpected) in a 54-day snapshot on 16,384 H100, Llama Team, "The Llama 3
// Herd of Models" (2024), §3.3.4; it reports more than 90% effective
// training time.
const (
	llama3Interruptions = 466
	llama3Days          = 54
	llama3GPUs          = 16384
)

// Llama3InterruptionsPerChipDay is Llama 3 405B's interruption rate per
// chip-day: 466 / (54 · 16,384) = 5.27e-4.
const Llama3InterruptionsPerChipDay = float64(llama3Interruptions) / (llama3Days * llama3GPUs)

// InterruptionsPerChipDay returns the default interruption rate of one chip
// of family (profiles.Chip.Family), per chip-day, with its source. Only
// GPU runs have published counts; every other family takes Llama 3's rate
// and says so.
func InterruptionsPerChipDay(family string) Sourced {
	llama3 := "Llama 3 405B: 466 interruptions in 54 days on 16,384 H100 (Llama Team 2024, §3.3.4)"
	switch {
	case family == "nvidia-hopper":
		return Sourced{Llama3InterruptionsPerChipDay, llama3}
	case family == "nvidia-ampere":
		// Llama 3's rate; OPT-175B's >= 35 / (992 · 60) = 5.9e-4 agrees.
		return Sourced{Llama3InterruptionsPerChipDay, llama3 + "; OPT-175B's at least 35 restarts in about 60 days on 992 A100 (Zhang et al. 2022, §2.5) give a similar 5.9e-4"}
	case strings.HasPrefix(family, "tpu"):
		return Sourced{Llama3InterruptionsPerChipDay, "assumed: no published interruption count for TPU slices; Llama 3's H100 rate"}
	}
	return Sourced{Llama3InterruptionsPerChipDay, "assumed: no published interruption count for this family; Llama 3's H100 rate"}
}

// Llama 3's checkpoint storage: Tectonic sustains 2 TB/s (7 TB/s peak) for
// the 16,384-GPU job (Llama Team 2024, §3.3.1), so 2e12 / 16,384 = 122 MB/s
// per GPU.
const llama3StorageBytesPerS = 2e12

// StorageBytesPerSPerChip is the default storage bandwidth per chip for
// writing and reading checkpoints, with its source: Llama 3's sustained
// 2 TB/s shared by 16,384 GPUs.
func StorageBytesPerSPerChip() Sourced {
	return Sourced{llama3StorageBytesPerS / llama3GPUs, "Llama 3's Tectonic: 2 TB/s sustained for 16,384 GPUs (Llama Team 2024, §3.3.1)"}
}

// RestartSeconds is the default time from an interruption to the first
// useful step besides the checkpoint's read: detection, rescheduling,
// start-up, communicator initialisation and warm-up.
func RestartSeconds() Sourced {
	return Sourced{10 * 60, "assumed: 10 minutes; Llama 3 gives no restart time, and its >90% effective time needs restarts of this order"}
}

// Async returns whether framework (a framework profile's name) checkpoints
// asynchronously by default, with the reason: only MaxText does, through
// Orbax (async_checkpointing: True in its base.yml). Megatron-LM
// (--async-save) and torchtitan (checkpoint.async_mode) can, but not by
// default; DeepSpeed and the generic profile write while the step waits.
func Async(framework string) (bool, string) {
	switch framework {
	case "maxtext":
		return true, "MaxText checkpoints asynchronously with Orbax by default (async_checkpointing: True)"
	case "megatron":
		return false, "Megatron-LM writes synchronously unless --async-save is given"
	case "torchtitan":
		return false, "torchtitan writes synchronously unless checkpoint.async_mode is set"
	}
	return false, "synchronous: the step waits for the whole write"
}
