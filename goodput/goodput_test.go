package goodput

import (
	"math"
	"testing"
)

// near reports whether got is within a relative 1e-9 of want.
func near(got, want float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}

func TestYoungDaly(t *testing.T) {
	tests := []struct {
		name          string
		delta, mtbi   float64
		wantIntervalS float64
	}{
		// sqrt(2·10·3600) − 10 = sqrt(72000) − 10 = 268.328157 − 10.
		{"an hour between interruptions, 10 s writes", 10, 3600, 258.32815729997475},
		// sqrt(2·50·20000) − 50 = sqrt(2e6) − 50 = 1414.2135624 − 50.
		{"Daly's example scale", 50, 20000, 1364.213562373095},
		{"free checkpoint", 0, 3600, 0},
		{"write longer than 2M: M", 100, 40, 40},
		{"never interrupted", 10, math.Inf(1), math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := YoungDaly(tt.delta, tt.mtbi); !near(got, tt.wantIntervalS) && got != tt.wantIntervalS {
				t.Errorf("YoungDaly(%g, %g) = %.12g, want %.12g", tt.delta, tt.mtbi, got, tt.wantIntervalS)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name string
		job  Job
		want Estimate
	}{
		{
			// 1000 chips at 0.0864 per chip-day: 86400/(0.0864·1000) = 1000 s
			// between interruptions. 2 GB at 1 GB/s: δ = 2 s. τ = sqrt(2·2·1000) − 2
			// = 61.245553 s: 61 steps of 1 s. Segment 63 s; lost 100 + 2 + 31.5 =
			// 133.5 s. Goodput (61/63)·(1 − 133.5/1000) = 0.968254·0.8665 = 0.838992.
			name: "synchronous",
			job: Job{Chips: 1000, StepSeconds: 1, InterruptionsPerChipDay: 0.0864, CheckpointBytesPerChip: 2e9,
				StorageBytesPerSPerChip: 1e9, RestartSeconds: 100},
			want: Estimate{MeanSecondsBetweenInterruptions: 1000, WriteSeconds: 2, ReadSeconds: 2, BlockingSeconds: 2,
				IntervalSteps: 61, IntervalSeconds: 61, LostSecondsPerInterruption: 133.5,
				CheckpointFraction: 2.0 / 63, InterruptionFraction: 0.1335, Goodput: 61.0 / 63 * 0.8665},
		},
		{
			// As above, but asynchronous with a 20 GB/s snapshot: δ = 0.1 s, w = 2 s.
			// τ = sqrt(2·0.1·1000) − 0.1 = 14.042136: 14 steps of 1 s (≥ w − δ = 1.9).
			// Segment 14.1 s; lost 100 + 2 + 7.05 + 2 = 111.05 s. Goodput
			// (14/14.1)·(1 − 0.11105).
			name: "asynchronous",
			job: Job{Chips: 1000, StepSeconds: 1, InterruptionsPerChipDay: 0.0864, CheckpointBytesPerChip: 2e9,
				StorageBytesPerSPerChip: 1e9, SnapshotBytesPerSPerChip: 20e9, RestartSeconds: 100},
			want: Estimate{MeanSecondsBetweenInterruptions: 1000, WriteSeconds: 2, ReadSeconds: 2, BlockingSeconds: 0.1,
				IntervalSteps: 14, IntervalSeconds: 14, LostSecondsPerInterruption: 111.05,
				CheckpointFraction: 0.1 / 14.1, InterruptionFraction: 0.11105, Goodput: 14 / 14.1 * (1 - 0.11105)},
		},
		{
			// Steps longer than τ: one step per checkpoint. τ_opt = 61.2 s, steps of
			// 100 s: 1 step. Segment 102 s; lost 100 + 2 + 51 = 153 s. Goodput
			// (100/102)·(1 − 0.153).
			name: "long steps",
			job: Job{Chips: 1000, StepSeconds: 100, InterruptionsPerChipDay: 0.0864, CheckpointBytesPerChip: 2e9,
				StorageBytesPerSPerChip: 1e9, RestartSeconds: 100},
			want: Estimate{MeanSecondsBetweenInterruptions: 1000, WriteSeconds: 2, ReadSeconds: 2, BlockingSeconds: 2,
				IntervalSteps: 1, IntervalSeconds: 100, LostSecondsPerInterruption: 153,
				CheckpointFraction: 2.0 / 102, InterruptionFraction: 0.153, Goodput: 100.0 / 102 * 0.847},
		},
		{
			// Interrupted faster than it restarts: M = 86400/(86.4·10) = 100 s < restart.
			name: "no progress",
			job: Job{Chips: 10, StepSeconds: 1, InterruptionsPerChipDay: 86.4, CheckpointBytesPerChip: 1e9,
				StorageBytesPerSPerChip: 1e9, RestartSeconds: 600},
			want: Estimate{MeanSecondsBetweenInterruptions: 100, WriteSeconds: 1, ReadSeconds: 1, BlockingSeconds: 1,
				IntervalSteps: 13, IntervalSeconds: 13, LostSecondsPerInterruption: 608,
				CheckpointFraction: 1.0 / 14, InterruptionFraction: 1, Goodput: 0},
		},
		{
			name: "never interrupted",
			job:  Job{Chips: 8, StepSeconds: 1, CheckpointBytesPerChip: 1e9, StorageBytesPerSPerChip: 1e9},
			want: Estimate{MeanSecondsBetweenInterruptions: math.Inf(1), WriteSeconds: 1, ReadSeconds: 1, BlockingSeconds: 1, Goodput: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Plan(tt.job)
			if err != nil {
				t.Fatalf("Plan(%+v): %v", tt.job, err)
			}
			w := tt.want
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"M", got.MeanSecondsBetweenInterruptions, w.MeanSecondsBetweenInterruptions},
				{"write", got.WriteSeconds, w.WriteSeconds},
				{"read", got.ReadSeconds, w.ReadSeconds},
				{"blocking", got.BlockingSeconds, w.BlockingSeconds},
				{"interval steps", float64(got.IntervalSteps), float64(w.IntervalSteps)},
				{"interval", got.IntervalSeconds, w.IntervalSeconds},
				{"lost", got.LostSecondsPerInterruption, w.LostSecondsPerInterruption},
				{"checkpoint fraction", got.CheckpointFraction, w.CheckpointFraction},
				{"interruption fraction", got.InterruptionFraction, w.InterruptionFraction},
				{"goodput", got.Goodput, w.Goodput},
			} {
				if !near(c.got, c.want) && c.got != c.want {
					t.Errorf("Plan(%s) %s = %.12g, want %.12g", tt.name, c.what, c.got, c.want)
				}
			}
		})
	}
}

func TestPlanRejects(t *testing.T) {
	ok := Job{Chips: 8, StepSeconds: 1, StorageBytesPerSPerChip: 1e9}
	tests := []struct {
		name string
		edit func(*Job)
	}{
		{"no chips", func(j *Job) { j.Chips = 0 }},
		{"zero step", func(j *Job) { j.StepSeconds = 0 }},
		{"NaN step", func(j *Job) { j.StepSeconds = math.NaN() }},
		{"negative rate", func(j *Job) { j.InterruptionsPerChipDay = -1 }},
		{"infinite checkpoint", func(j *Job) { j.CheckpointBytesPerChip = math.Inf(1) }},
		{"zero storage", func(j *Job) { j.StorageBytesPerSPerChip = 0 }},
		{"negative snapshot", func(j *Job) { j.SnapshotBytesPerSPerChip = -1 }},
		{"negative restart", func(j *Job) { j.RestartSeconds = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := ok
			tt.edit(&j)
			if _, err := Plan(j); err == nil {
				t.Errorf("Plan(%+v) = nil error, want one", j)
			}
		})
	}
}

func TestCheckpointBytesPerChip(t *testing.T) {
	tests := []struct {
		name                string
		params, opt         float64
		pReplicas, oReplica int
		want                float64
	}{
		// Llama 3 405B at tp=8, pp=16, dp=128, ZeRO-1: 405e9/128 params per
		// chip at 2 bytes over 128 replicas, 12 bytes of optimizer state per
		// parameter sharded over dp: 6.328e9/128 + 37.97e9/128.
		{"llama3 layout", 405e9 / 128 * 2, 405e9 / 128 * 12 / 128, 128, 1, 405e9/128*2/128 + 405e9/128*12/128},
		{"no replicas", 10, 20, 1, 1, 30},
		{"zero replicas count as one", 10, 20, 0, 0, 30},
		{"replicated optimizer", 10, 20, 2, 4, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckpointBytesPerChip(tt.params, tt.opt, tt.pReplicas, tt.oReplica); !near(got, tt.want) {
				t.Errorf("CheckpointBytesPerChip = %g, want %g", got, tt.want)
			}
		})
	}
}

func TestRunEnergy(t *testing.T) {
	h100, _ := ChipPower("h100")
	tests := []struct {
		name                         string
		p                            Power
		busy, pue                    float64
		chips                        int
		wallS                        float64
		wantChipW, wantPerChipW, mwh float64
	}{
		// H100: idle 0.3·700 = 210 W; at busy 0.8: 210 + 490·0.8 = 602 W. Host
		// (10200 − 5600)/8 = 575 W. (602 + 575)·1.1 = 1294.7 W per chip.
		// 16384 chips for a day: 1294.7·16384·86400 J = 1.8328e12 J = 509.1 MWh.
		{"h100 day", h100, 0.8, 1.1, 16384, 86400, 602, 1294.7, 1294.7 * 16384 * 86400 / 3.6e9},
		// Full load, PUE 1: (700 + 575) W for an hour = 1.275 kWh = 1.275e-3 MWh.
		{"full load hour", h100, 1, 1, 1, 3600, 700, 1275, 1.275e-3},
		// Idle: 210 W + host 0, PUE 1.5: 315 W for 1000 s on 2 chips = 630 kJ.
		{"idle no host", Power{ChipWatts: 700, IdleFraction: 0.3}, 0, 1.5, 2, 1000, 210, 315, 630e3 / 3.6e9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := RunEnergy(tt.p, tt.busy, tt.pue, tt.chips, tt.wallS)
			if err != nil {
				t.Fatal(err)
			}
			if !near(e.ChipWatts, tt.wantChipW) || !near(e.WattsPerChip, tt.wantPerChipW) || !near(e.MWh, tt.mwh) {
				t.Errorf("RunEnergy = %+v, want chip %g W, %g W per chip, %g MWh", e, tt.wantChipW, tt.wantPerChipW, tt.mwh)
			}
		})
	}
	for _, bad := range []struct {
		name string
		p    Power
		busy float64
		pue  float64
	}{
		{"zero watts", Power{IdleFraction: 0.3}, 0.5, 1.1},
		{"busy above one", h100, 1.5, 1.1},
		{"pue below one", h100, 0.5, 0.9},
		{"NaN busy", h100, math.NaN(), 1.1},
	} {
		if _, err := RunEnergy(bad.p, bad.busy, bad.pue, 8, 10); err == nil {
			t.Errorf("RunEnergy(%s) = nil error, want one", bad.name)
		}
	}
}

func TestDefaults(t *testing.T) {
	// 466 / (54 · 16384) = 466 / 884736.
	if r := InterruptionsPerChipDay("nvidia-hopper"); !near(r.Value, 466.0/884736) || r.Source == "" {
		t.Errorf("InterruptionsPerChipDay(hopper) = %+v, want 5.267e-4 with a source", r)
	}
	// 2e12 / 16384 = 122,070,312.5 B/s.
	if s := StorageBytesPerSPerChip(); !near(s.Value, 122070312.5) {
		t.Errorf("StorageBytesPerSPerChip = %g, want 122070312.5", s.Value)
	}
	for _, f := range []string{"tpu-v5p", "amd-cdna3"} {
		if r := InterruptionsPerChipDay(f); r.Source[:7] != "assumed" {
			t.Errorf("InterruptionsPerChipDay(%s) source %q, want it to say assumed", f, r.Source)
		}
	}
	if _, ok := ChipPower("my-chip"); ok {
		t.Errorf("ChipPower(my-chip) found a power for an unknown chip")
	}
	if a, _ := Async("maxtext"); !a {
		t.Errorf("Async(maxtext) = false, want true")
	}
}
