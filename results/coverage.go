package results

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/meshplan/meshplan/profiles"
)

// Coverages are the bands' coverage reports plan validate prints, nil
// where absent: Fixed, the intervals of an explained strategy on each run's
// published layout (always, with time rows), and Searched, the intervals of
// the best plan the search finds under each run's published degrees
// (plan validate --searched).
type Coverages struct {
	Fixed, Searched *profiles.CoverageReport
}

// write prints each report present (WriteCoverage), fixed first.
func (c Coverages) write(w io.Writer) error {
	if err := WriteCoverage(w, c.Fixed); err != nil {
		return err
	}
	return WriteCoverage(w, c.Searched)
}

// WriteCoverage prints how often the 80% and 95% intervals the planner
// draws (profiles.Bands.StepTimeBand) contain a measured run when drawn
// without the run's own source, per chip family, kind of chip, for the
// mixture-of-experts runs and the dense ones (where there are MoE runs)
// and for all, with the range of counts an honest 80% interval gives by
// chance (profiles.ChanceRange80) and where the count stands against it:
// the check of the band's honesty (docs/uncertainty.md). Nothing without
// runs.
func WriteCoverage(w io.Writer, c *profiles.CoverageReport) error {
	if c == nil || c.All.Runs == 0 {
		return nil
	}
	ew := &errWriter{w: w}
	ew.printf("\nband coverage (%s): each run's interval drawn without its own source, as plan draws one for a source it has not seen\n", c.Regime)
	if ew.err != nil {
		return ew.err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\truns\tin 80%\tcoverage\tin 95%\tcoverage\tmedian half-width\tchance range\tcalibration")
	rows := append(slices.Clone(c.Families), c.Kinds...)
	if c.MoE.Runs > 0 {
		rows = append(rows, c.MoE, c.Dense)
	}
	for _, f := range append(rows, c.All) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t%s\t%d-%d\t%s\n", f.Name, f.Runs, f.In80, Percent(f.Coverage80), f.In95, Percent(f.Coverage95), Percent(f.MedianHalfWidth),
			f.ChanceLow80, f.ChanceHigh80, f.Calibration80())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.ShippedRuns > 0 {
		if _, err := fmt.Fprintf(w, "%d runs are of the file's only source: their intervals are the shipped bands', as plan prints them for a source it has not seen.\n", c.ShippedRuns); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "an honest 80% interval covers about 80% of the runs, and its count of runs held falls inside the chance range nine times in ten (runs of one source err together, so more often outside); its half-width is what a review can hold the plan to.")
	return err
}
