package timeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// CheckTrace validates data as trace-event JSON of the object form the way
// WriteTrace writes it, and returns its otherData: a traceEvents array and
// displayTimeUnit "ms" or "ns"; every event a string name and ph, integer
// pid and tid; a complete event ("X") a finite ts and dur, dur not
// negative, within [0, step_s]; a metadata event ("M") one of
// process_name, thread_name (args.name a string), process_sort_index and
// thread_sort_index (args.sort_index an integer); and no two complete
// events of one pid and tid overlapping (the format's rule for a thread's
// complete events that do not nest). Times may be off by 2 ns, the
// rounding of WriteTrace.
func CheckTrace(data []byte) (TraceMeta, error) {
	var f struct {
		TraceEvents     []map[string]json.RawMessage `json:"traceEvents"`
		DisplayTimeUnit *string                      `json:"displayTimeUnit"`
		OtherData       TraceMeta                    `json:"otherData"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return TraceMeta{}, fmt.Errorf("trace: not a JSON object: %w", err)
	}
	if f.TraceEvents == nil {
		return TraceMeta{}, errors.New("trace: no traceEvents array")
	}
	if f.DisplayTimeUnit == nil || *f.DisplayTimeUnit != "ms" && *f.DisplayTimeUnit != "ns" {
		return TraceMeta{}, errors.New(`trace: displayTimeUnit must be "ms" or "ns"`)
	}
	const tol = 0.002 // microseconds
	stepUs := f.OtherData.StepSeconds * 1e6
	type span struct{ ts, end float64 }
	lanes := map[[2]int][]span{}
	for i, ev := range f.TraceEvents {
		var name, ph string
		if err := field(ev, "name", &name); err != nil {
			return f.OtherData, fmt.Errorf("trace: event %d: %w", i, err)
		}
		if err := field(ev, "ph", &ph); err != nil {
			return f.OtherData, fmt.Errorf("trace: event %d (%s): %w", i, name, err)
		}
		var pid, tid float64
		if err := field(ev, "pid", &pid); err != nil || pid != math.Trunc(pid) {
			return f.OtherData, fmt.Errorf("trace: event %d (%s): pid must be an integer", i, name)
		}
		if err := field(ev, "tid", &tid); err != nil || tid != math.Trunc(tid) {
			return f.OtherData, fmt.Errorf("trace: event %d (%s): tid must be an integer", i, name)
		}
		var args map[string]json.RawMessage
		if raw, ok := ev["args"]; ok {
			if err := json.Unmarshal(raw, &args); err != nil {
				return f.OtherData, fmt.Errorf("trace: event %d (%s): args must be an object", i, name)
			}
		}
		if raw, ok := ev["cat"]; ok {
			var cat string
			if err := json.Unmarshal(raw, &cat); err != nil {
				return f.OtherData, fmt.Errorf("trace: event %d (%s): cat must be a string", i, name)
			}
		}
		switch ph {
		case "X":
			var ts, dur float64
			if err := field(ev, "ts", &ts); err != nil {
				return f.OtherData, fmt.Errorf("trace: event %d (%s): %w", i, name, err)
			}
			if err := field(ev, "dur", &dur); err != nil {
				return f.OtherData, fmt.Errorf("trace: event %d (%s): %w", i, name, err)
			}
			if dur < 0 || ts < 0 || math.IsInf(ts+dur, 0) {
				return f.OtherData, fmt.Errorf("trace: event %d (%s): ts %g dur %g", i, name, ts, dur)
			}
			if ts+dur > stepUs+tol {
				return f.OtherData, fmt.Errorf("trace: event %d (%s) ends at %g µs, after the step's %g µs", i, name, ts+dur, stepUs)
			}
			k := [2]int{int(pid), int(tid)}
			lanes[k] = append(lanes[k], span{ts, ts + dur})
		case "M":
			switch name {
			case "process_name", "thread_name":
				var s string
				if err := field(args, "name", &s); err != nil {
					return f.OtherData, fmt.Errorf("trace: event %d (%s): args: %w", i, name, err)
				}
			case "process_sort_index", "thread_sort_index":
				var n float64
				if err := field(args, "sort_index", &n); err != nil || n != math.Trunc(n) {
					return f.OtherData, fmt.Errorf("trace: event %d (%s): args.sort_index must be an integer", i, name)
				}
			default:
				return f.OtherData, fmt.Errorf("trace: event %d: unknown metadata event %q", i, name)
			}
		default:
			return f.OtherData, fmt.Errorf("trace: event %d (%s): phase %q, want X or M", i, name, ph)
		}
	}
	keys := make([][2]int, 0, len(lanes))
	for k := range lanes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		spans := lanes[k]
		sort.Slice(spans, func(i, j int) bool { return spans[i].ts < spans[j].ts })
		for i := 1; i < len(spans); i++ {
			if spans[i].ts < spans[i-1].end-tol {
				return f.OtherData, fmt.Errorf("trace: pid %d tid %d: the event at %g µs starts before the one at %g µs ends (%g µs)",
					k[0], k[1], spans[i].ts, spans[i-1].ts, spans[i-1].end)
			}
		}
	}
	return f.OtherData, nil
}

// field decodes the required field key of ev into v.
func field(ev map[string]json.RawMessage, key string, v any) error {
	raw, ok := ev[key]
	if !ok {
		return fmt.Errorf("no %q", key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	return nil
}
