package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// stageKinds describes n layers from first of m by kind ("9 chunked moe +
// 3 full moe"; the attention named when any of them is not full), with the
// embedding or output layer a first or last stage holds.
func stageKinds(m model.Spec, ranges [][2]int, isFirst, isLast bool) string {
	type kind struct {
		t model.LayerType
		n int
	}
	var kinds []kind
	n := 0
	for _, rg := range ranges {
		for i := rg[0]; i < rg[1]; i++ {
			n++
			t := m.LayerTypeAt(i)
			found := false
			for j := range kinds {
				if kinds[j].t == t {
					kinds[j].n++
					found = true
				}
			}
			if !found {
				kinds = append(kinds, kind{t, 1})
			}
		}
	}
	local := false
	for _, k := range kinds {
		local = local || k.t.Attention != model.AttnFull
	}
	var parts []string
	for _, k := range kinds {
		name := "dense"
		if k.t.MoE {
			name = "moe"
		}
		if local {
			name = k.t.Attention.String() + " " + name
		}
		parts = append(parts, fmt.Sprintf("%d %s", k.n, name))
	}
	text := fmt.Sprintf("%d: %s", n, strings.Join(parts, " + "))
	if isFirst {
		text += ", embedding"
	}
	if isLast {
		text += ", output layer"
	}
	return text
}

// WriteExplainTable writes the full breakdown of one strategy for
// `plan explain`: the inputs, the traced program op by op in sharding
// notation with the collective each op causes, the step-time and memory
// breakdowns, and every collective of the step.
func WriteExplainTable(w io.Writer, e Evaluation) error {
	return writeExplainTable(w, e, Training{})
}

// writeExplainTable is WriteExplainTable with a TIME TO TRAIN section when
// t is not zero.
func writeExplainTable(w io.Writer, e Evaluation, t Training) error {
	r := NewTrainingResult(e, t)
	c := e.Model.Counts()
	ew := &errWriter{w: w}
	ew.printf("model     %s: %s params (%s active), %d layers, hidden %d\n",
		Label(e.Model.Name), Count(float64(c.Total)), Count(float64(c.Active)), e.Model.Layers, e.Model.Hidden)
	ew.printf("cluster   %s: %d x %s, %s and %s per chip\n",
		Label(e.Cluster.Name), e.Cluster.Chips(), Label(e.Cluster.Chip.Name),
		FLOPRate(e.Cluster.Chip.PeakBF16FLOPs), Bytes(e.Cluster.Chip.HBMBytes))
	ew.printf("mesh      %s\n", Mesh(e.Cluster.Axes))
	ew.printf("batch     %s\n", e.Batch().Text())
	ew.printf("framework %s\n", Label(e.FrameworkName()))
	ew.printf("strategy  %s\n", r.Strategy.Spec)
	ew.printf("          %d micro-batch(es) of %d sequence(s) per data-parallel replica, %d replica(s)\n",
		r.Strategy.NumMicrobatches, r.Strategy.MB, e.Strategy.Replicas())
	if ew.err != nil {
		return ew.err
	}

	if len(e.Time.Ops) > 0 {
		ew.printf("\nPROGRAM (per chip, one call; A[B_{dp}, D] means dimension B of A is split over the dp chips;\n")
		ew.printf("{U_dp} marks a partial sum over them; an op's collective follows it, AXES gives its mesh axes)\n")
		tw := newTable(ew)
		fmt.Fprintln(tw, "PASS\tFLOPS\tTIME\tAXES\tOP")
		block := ""
		for _, op := range e.Time.Ops {
			if op.Block != block && op.Block != "" {
				block = op.Block
				fmt.Fprintf(tw, "\t\t\t\t[%s]\n", block)
			}
			axes := "-"
			if op.Collective.Count > 0 {
				axes = axesText(op.Collective.Axes)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", op.Pass, FLOPs(op.FLOPs), Seconds(op.Seconds), axes, op.Text)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	if pp := e.Strategy.Degree[space.PP]; pp > 1 {
		ew.printf("\nPIPELINE STAGES (layers each rank holds, by kind; the busiest sets the step)\n")
		tw := newTable(ew)
		loop := e.Strategy.LoopChunks()
		held := make([][][2]int, pp) // each rank's runs of layers, in the order it runs its chunks
		e.Strategy.Split.VisitChunks(e.Model.Layers, pp, loop, func(r, from, to int) {
			if to > from {
				held[r] = append(held[r], [2]int{from, to})
			}
		})
		for r := 0; r < pp; r++ {
			chunks := ""
			if v := e.Strategy.VirtualStages(); e.Strategy.Schedule.Virtual() && v > 1 {
				var cs []string
				for j := range v {
					cs = append(cs, strconv.Itoa(e.Strategy.Split.ChunkLayers(e.Model.Layers, pp, v, r, j)))
				}
				chunks = "\tchunks " + strings.Join(cs, "+")
			}
			var rs []string
			for _, rg := range held[r] {
				if rg[1]-rg[0] == 1 {
					rs = append(rs, strconv.Itoa(rg[0]))
				} else {
					rs = append(rs, fmt.Sprintf("%d-%d", rg[0], rg[1]-1))
				}
			}
			fmt.Fprintf(tw, "rank %d\tlayers %s\t%s%s\n", r, strings.Join(rs, ","), stageKinds(e.Model, held[r], r == 0, r == pp-1), chunks)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	ew.printf("\nTIME PER STEP\n")
	tw := newTable(ew)
	fmt.Fprintf(tw, "compute\t%s\n", Seconds(r.Time.ComputeS))
	fmt.Fprintf(tw, "  matmuls\t%s\n", Seconds(r.Time.MatmulS))
	if r.Time.MatmulTailS > 0 {
		fmt.Fprintf(tw, "    of which per-call tails\t%s (t₀ per GEMM call, not FLOPs: %s of the matmuls)\n", Seconds(r.Time.MatmulTailS), Percent(r.Time.MatmulTailS/r.Time.MatmulS))
	}
	fmt.Fprintf(tw, "  attention kernels\t%s\n", Seconds(r.Time.AttentionS))
	if r.Time.ScanS > 0 {
		fmt.Fprintf(tw, "  state-space scans\t%s\n", Seconds(r.Time.ScanS))
	}
	fmt.Fprintf(tw, "  memory-bound passes\t%s\n", Seconds(r.Time.MemoryBoundS))
	fmt.Fprintf(tw, "  optimizer step\t%s\n", Seconds(r.Time.OptimizerS))
	fmt.Fprintf(tw, "exposed communication\t%s\n", Seconds(r.Time.ExposedCommS))
	if r.Time.ExposedA2AS > 0 {
		fmt.Fprintf(tw, "  MoE all-to-all\t%s\n", Seconds(r.Time.ExposedA2AS))
	}
	if r.Time.CollectiveSMS > 0 {
		fmt.Fprintf(tw, "  SMs held by overlapped collectives\t%s\n", Seconds(r.Time.CollectiveSMS))
	}
	if r.Time.ExposedOffloadS > 0 {
		fmt.Fprintf(tw, "  host-link copies (offload)\t%s\n", Seconds(r.Time.ExposedOffloadS))
	}
	fmt.Fprintf(tw, "pipeline bubble\t%s\n", Seconds(r.Time.BubbleS))
	fmt.Fprintf(tw, "step\t%s\n", Seconds(r.StepTimeS))
	if r.StepTimeSRange != nil && r.StepTimeSRange95 != nil {
		b := e.Band()
		fmt.Fprintf(tw, "band\t80%%: %s to %s, 95%%: %s to %s (%s)\n", Seconds(r.StepTimeSRange[0]), Seconds(r.StepTimeSRange[1]),
			Seconds(r.StepTimeSRange95[0]), Seconds(r.StepTimeSRange95[1]), b.Basis())
	}
	fmt.Fprintf(tw, "throughput\t%s tokens/s, %s tokens/s per chip\n", Count(r.TokensPerS), Count(r.TokensPerSPerChip))
	fmt.Fprintf(tw, "MFU\t%s (model FLOPs %s per step)\n", Percent(r.MFU), FLOPs(e.Time.ModelFLOPs))
	fmt.Fprintf(tw, "HFU\t%s (hardware FLOPs %s per step)\n", Percent(r.HFU), FLOPs(e.Time.HardwareFLOPs))
	if err := tw.Flush(); err != nil {
		return err
	}

	if r.Days != nil {
		ew.printf("\nTIME TO TRAIN ON %s TOKENS\n", Count(t.Tokens))
		tw := newTable(ew)
		fmt.Fprintf(tw, "days\t%s\n", Days(*r.Days))
		fmt.Fprintf(tw, "chip-hours\t%s\n", Count(*r.ChipHours))
		if r.Cost != nil {
			fmt.Fprintf(tw, "cost\t%s at %s per chip-hour\n", Money(*r.Cost), strconv.FormatFloat(t.PricePerChipHour, 'f', -1, 64))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		writeBudgetExplain(ew, r)
	}

	ew.printf("\nMEMORY PER CHIP\n")
	tw = newTable(ew)
	for _, c := range []struct {
		label, component string
		bytes            float64
	}{
		{"parameters", memory.Params, e.Memory.ParamsBytes},
		{"gradients", memory.Grads, e.Memory.GradsBytes},
		{"optimizer state", memory.Optimizer, e.Memory.OptimizerBytes},
		{"activations", memory.Activations, e.Memory.ActivationsBytes},
		{"buffers", memory.Buffers, e.Memory.BuffersBytes},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", c.label, Bytes(c.bytes))
		// The parts of a component, when it has more than one.
		var parts []memory.Part
		for _, q := range e.MemoryParts {
			if q.Component == c.component {
				parts = append(parts, q)
			}
		}
		if len(parts) > 1 {
			for _, q := range parts {
				fmt.Fprintf(tw, "  %s\t%s\n", q.Name, Bytes(q.Bytes))
			}
		}
	}
	verdict := "fits"
	if !r.Fits {
		verdict = "does NOT fit"
	}
	fmt.Fprintf(tw, "total\t%s of %s usable: %s\n", Bytes(e.Memory.TotalBytes()), Bytes(e.UsableBytes), verdict)
	if a, st := e.Memory.HostActivationsBytes, e.Memory.HostStatesBytes; a+st > 0 {
		// What the offloads keep in the host's memory, outside the total.
		fmt.Fprintf(tw, "host memory\t%s of %s a chip (offloaded activations %s, model states %s)\n",
			Bytes(a+st), Bytes(e.Cluster.Chip.HostDRAMBytesFor(e.Cluster.Chips())), Bytes(a), Bytes(st))
	}
	fmt.Fprintf(tw, "out-of-memory risk\t%s (%s)\n", Percent(r.OOMRisk), e.oomBasis())
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(r.Collectives) > 0 {
		ew.printf("\nCOLLECTIVES PER STEP\n")
		tw = newTable(ew)
		fmt.Fprintln(tw, "OP\tAXES\tBYTES\tCOUNT\tTIME\tOVERLAPPED\tWHY")
		for _, c := range r.Collectives {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%t\t%s\n",
				c.Op, axesText(c.Axes), Bytes(c.Bytes), c.Count, Seconds(c.TimeS), c.Overlapped, c.Why)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return ew.err
}

func axesText(axes []string) string {
	if len(axes) == 0 {
		return "-"
	}
	return strings.Join(axes, ",")
}

// errWriter remembers the first write error so that a renderer can check
// once at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (ew *errWriter) Write(p []byte) (int, error) {
	if ew.err != nil {
		return 0, ew.err
	}
	n, err := ew.w.Write(p)
	ew.err = err
	return n, err
}

func (ew *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(ew, format, args...)
}
