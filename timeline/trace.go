package timeline

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// TraceMeta is what a trace says about itself in its otherData: the
// inputs, the totals of its first rank (those of explain) and what was
// folded.
type TraceMeta struct {
	// Title names the model, cluster and strategy.
	Title string `json:"title"`
	// Schedule, Stages, Microbatches and Chunks are the timeline's.
	Schedule     string `json:"schedule"`
	Stages       int    `json:"pp"`
	Microbatches int    `json:"micro_batches"`
	Chunks       int    `json:"chunks_per_micro_batch"`
	// Ranks are the pipeline ranks drawn.
	Ranks []int `json:"ranks_drawn"`
	// StepSeconds, ComputeSeconds, ExposedCommSeconds, ExposedA2ASeconds
	// and BubbleSeconds are the totals of a rank's events.
	StepSeconds        float64 `json:"step_s"`
	ComputeSeconds     float64 `json:"compute_s"`
	ExposedCommSeconds float64 `json:"exposed_comm_s"`
	ExposedA2ASeconds  float64 `json:"exposed_a2a_s"`
	BubbleSeconds      float64 `json:"bubble_s"`
	// Folding says what was summarised ("" for nothing).
	Folding string `json:"folding,omitempty"`
	// Note says how the ranks are drawn.
	Note string `json:"note"`
}

// traceFile is the Chrome trace-event JSON object form
// (docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
type traceFile struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
	OtherData       TraceMeta    `json:"otherData"`
}

// traceEvent is one trace event: "X" (complete: ts and dur in
// microseconds) or "M" (metadata: a process's or thread's name or order).
type traceEvent struct {
	Name string     `json:"name"`
	Cat  string     `json:"cat,omitempty"`
	Ph   string     `json:"ph"`
	Ts   float64    `json:"ts"`
	Dur  *float64   `json:"dur,omitempty"`
	Pid  int        `json:"pid"`
	Tid  int        `json:"tid"`
	Args *traceArgs `json:"args,omitempty"`
}

// traceArgs are an event's arguments: a metadata event's name or order,
// a slice's exposure, repeat, bytes and link.
type traceArgs struct {
	Name           string   `json:"name,omitempty"`
	SortIndex      *int     `json:"sort_index,omitempty"`
	Exposed        *bool    `json:"exposed,omitempty"`
	ExposedSeconds *float64 `json:"exposed_s,omitempty"`
	Repeat         int      `json:"repeat,omitempty"`
	Microbatches   string   `json:"micro_batches,omitempty"`
	Bytes          *float64 `json:"bytes,omitempty"`
	Calls          *float64 `json:"calls,omitempty"`
	Link           string   `json:"link,omitempty"`
	Collectives    string   `json:"collectives,omitempty"`
}

// micros converts seconds to the trace's microseconds, rounded to a
// nanosecond so that the file stays short and reads the same every time.
func micros(s float64) float64 { return math.Round(s*1e6*1e3) / 1e3 }

// WriteTrace writes the timeline as Chrome/Perfetto trace-event JSON (the
// object form, displayTimeUnit "ms"): one process per pipeline rank (pid =
// rank), one thread per stream (tid = Stream), named by "M" events, and one
// "X" event per slice with its exposure, bytes and link in args; meta
// goes into otherData with the first rank's totals and the folding.
func (t *Timeline) WriteTrace(w io.Writer, title string) error {
	f := traceFile{DisplayTimeUnit: "ms", TraceEvents: []traceEvent{}}
	meta := TraceMeta{Title: title, Schedule: string(t.Schedule), Stages: t.Stages, Microbatches: t.Microbatches,
		Chunks: t.Chunk, Ranks: t.Ranks, Folding: t.Folding, Note: t.Note}
	if len(t.Ranks) > 0 {
		tot := t.TotalsOf(t.Ranks[0])
		meta.StepSeconds, meta.ComputeSeconds, meta.ExposedCommSeconds = tot.StepSeconds, tot.ComputeSeconds, tot.ExposedCommSeconds
		meta.ExposedA2ASeconds, meta.BubbleSeconds = tot.ExposedA2ASeconds, tot.BubbleSeconds
	}
	f.OtherData = meta
	for i, r := range t.Ranks {
		idx := i
		f.TraceEvents = append(f.TraceEvents,
			traceEvent{Name: "process_name", Ph: "M", Pid: r, Args: &traceArgs{Name: fmt.Sprintf("pipeline rank %d", r)}},
			traceEvent{Name: "process_sort_index", Ph: "M", Pid: r, Args: &traceArgs{SortIndex: &idx}})
		used := map[Stream]bool{}
		for _, e := range t.Events {
			if e.Rank == r {
				used[e.Stream] = true
			}
		}
		for _, s := range Streams() {
			if !used[s] {
				continue
			}
			si := int(s)
			f.TraceEvents = append(f.TraceEvents,
				traceEvent{Name: "thread_name", Ph: "M", Pid: r, Tid: int(s), Args: &traceArgs{Name: s.String()}},
				traceEvent{Name: "thread_sort_index", Ph: "M", Pid: r, Tid: int(s), Args: &traceArgs{SortIndex: &si}})
		}
	}
	for _, e := range t.Events {
		dur := micros(e.DurSeconds)
		te := traceEvent{Name: e.Name, Cat: e.Cat, Ph: "X", Ts: micros(e.StartSeconds), Dur: &dur, Pid: e.Rank, Tid: int(e.Stream)}
		a := &traceArgs{Repeat: e.Repeat, Microbatches: e.Microbatches}
		if e.Stream != StreamCompute {
			exposed := e.ExposedSeconds > 0
			x := e.ExposedSeconds
			a.Exposed, a.ExposedSeconds = &exposed, &x
			if e.Bytes > 0 {
				b, c := math.Round(e.Bytes), math.Round(e.Calls*1000)/1000
				a.Bytes, a.Calls = &b, &c
			}
			a.Link, a.Collectives = e.Link, e.What
		}
		if *a != (traceArgs{}) {
			te.Args = a
		}
		f.TraceEvents = append(f.TraceEvents, te)
	}
	enc := json.NewEncoder(w)
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("timeline: writing the trace: %w", err)
	}
	return nil
}
