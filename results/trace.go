package results

import (
	"fmt"
	"io"

	"github.com/meshplan/meshplan/timeline"
)

// Timeline lays out e's step per pipeline rank and stream (package
// timeline); e must have been evaluated with its step traced
// (planner.Explain).
func Timeline(e Evaluation) (*timeline.Timeline, error) {
	t, err := timeline.Build(e.Time, e.Strategy, e.Workload)
	if err != nil {
		return nil, fmt.Errorf("results: the timeline of %s: %w", e.Strategy.String(), err)
	}
	return t, nil
}

// WriteExplainTrace writes e's step as Chrome/Perfetto trace-event JSON
// (`plan explain --format trace`): one process per pipeline rank, one
// thread per stream, loadable in ui.perfetto.dev and chrome://tracing.
func WriteExplainTrace(w io.Writer, e Evaluation) error {
	t, err := Timeline(e)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("%s on %s: %s", e.Model.Name, e.Cluster.Name, e.Strategy.String())
	return t.WriteTrace(w, title)
}
