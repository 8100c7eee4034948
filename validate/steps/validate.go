package steps

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/text"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// DefaultCluster is the cluster of rows without a cluster cell: one H100.
const DefaultCluster = "h100-1"

// The framework profiles of rows that say only whether they were compiled.
const (
	// CompiledFramework models torch.compile'd steps.
	CompiledFramework = "torchtitan"
	// EagerFramework models eager PyTorch steps.
	EagerFramework = "pytorch"
)

// Options tune Validate. The zero value resolves files against the current
// directory and picks each row's framework from its cells.
type Options struct {
	// Dir is the directory that the model, framework and cluster files
	// named in the rows are looked up in first: the steps file's directory.
	// Empty means the current directory.
	Dir string
	// Framework, when not empty, is the framework profile (a name or a
	// YAML file relative to the current directory, as --framework takes it)
	// of every row without a framework cell, in place of the compiled
	// mapping.
	Framework string
}

// FrameworkOf returns the framework profile row r is predicted with, as
// --framework takes it: r's framework cell; else o.Framework; else
// CompiledFramework or EagerFramework from r's compiled cell; else
// framework.Default.
func (o Options) FrameworkOf(r Row) string {
	switch {
	case r.Framework != "":
		return r.Framework
	case o.Framework != "":
		return o.Framework
	case r.Compiled == nil:
		return framework.Default
	case *r.Compiled:
		return CompiledFramework
	default:
		return EagerFramework
	}
}

// Result is one measured step and its prediction. The measured figures and
// the errors are nil for a step that ran out of memory.
type Result struct {
	// Line is the row's line in the steps file.
	Line int `json:"line"`
	// ID names the row (Row.ID).
	ID string `json:"id"`
	// Model, Framework and Cluster name the model, framework profile and
	// cluster the row was predicted with.
	Model     string `json:"model"`
	Framework string `json:"framework"`
	Cluster   string `json:"cluster"`
	// Seq, MicroBatch, Accumulated and Recompute are the row's step;
	// Batch is MicroBatch x Accumulated sequences.
	Seq         int    `json:"seq"`
	MicroBatch  int    `json:"micro_batch"`
	Accumulated int    `json:"accumulated_micro_batches"`
	Batch       int    `json:"batch"`
	Recompute   string `json:"recompute"`
	// Strategy is the strategy string evaluated, as --strategy takes it.
	Strategy string `json:"strategy"`

	// PredictedStepS is the predicted time of one step in seconds.
	PredictedStepS float64 `json:"predicted_step_s"`
	// MeasuredStepS is the measured step time in seconds.
	MeasuredStepS *float64 `json:"measured_step_s,omitempty"`
	// StepError is PredictedStepS/MeasuredStepS - 1.
	StepError *float64 `json:"step_error,omitempty"`

	// PredictedMemoryGB is the predicted peak memory in 10^9 bytes.
	PredictedMemoryGB float64 `json:"predicted_memory_gb"`
	// MeasuredMemoryGB is the measured peak allocated memory in 10^9 bytes.
	MeasuredMemoryGB *float64 `json:"measured_memory_gb,omitempty"`
	// MemoryError is PredictedMemoryGB/MeasuredMemoryGB - 1.
	MemoryError *float64 `json:"memory_error,omitempty"`
	// UsableGB is the memory a step may fill on the chip, in 10^9 bytes.
	UsableGB float64 `json:"usable_gb"`

	// PredictedFits is the planner's verdict: the step fits in UsableGB.
	PredictedFits bool `json:"predicted_fits"`
	// OOMRisk is the probability the planner gives that the step needs
	// more than UsableGB (profiles.OOMRisk).
	OOMRisk float64 `json:"oom_risk"`
	// MeasuredFits reports that the step ran.
	MeasuredFits bool `json:"measured_fits"`
	// VerdictOK reports PredictedFits == MeasuredFits.
	VerdictOK bool `json:"verdict_ok"`
}

// Summary aggregates the results of one framework profile, or of all.
type Summary struct {
	// Framework is the profile's name; empty for the overall summary.
	Framework string `json:"framework,omitempty"`
	// Rows counts the rows; Ran those whose step ran.
	Rows int `json:"rows"`
	Ran  int `json:"ran"`
	// StepMAPE and MemoryMAPE are the mean |StepError| and |MemoryError|
	// over the rows that ran, as fractions; 0 when none ran.
	StepMAPE   float64 `json:"step_mape"`
	MemoryMAPE float64 `json:"memory_mape"`
	// WrongVerdicts counts the rows whose VerdictOK is false.
	WrongVerdicts int `json:"wrong_verdicts"`
}

// Report is the outcome of Validate.
type Report struct {
	// Rows are the results in file order.
	Rows []Result `json:"rows"`
	// Frameworks summarise the rows of each framework profile, in order of
	// their first row.
	Frameworks []Summary `json:"frameworks"`
	// Overall summarises every row.
	Overall Summary `json:"overall"`
	// Warnings are the assumptions made reading the rows' models: one line
	// per assumption of a config.json whose model_type the planner does not
	// know (model.LoadWarnings), prefixed by the model.
	Warnings []string `json:"warnings,omitempty"`
}

// ValidateFile reads the steps file at path (at most bounded.TableBytes of
// it, from any source) and validates its rows (see
// Validate); an empty o.Dir becomes the file's directory. A file that cannot
// be read or parsed is a *search.InputError.
func ValidateFile(path string, o Options) (Report, error) {
	data, err := bounded.ReadFile(path, bounded.TableBytes)
	if err != nil {
		return Report{}, &search.InputError{Err: fmt.Errorf("steps: cannot read the file: %w", err)}
	}
	rows, err := Read(bytes.NewReader(data))
	if err != nil {
		return Report{}, &search.InputError{Err: err}
	}
	if len(rows) == 0 {
		return Report{}, &search.InputError{Err: errors.New("steps: no steps: the file has a header but no rows; add one row per measured step")}
	}
	if o.Dir == "" {
		o.Dir = filepath.Dir(path)
	}
	return Validate(rows, o)
}

// Validate predicts every row as `plan explain` does (see the package
// documentation) and compares the predictions with the measurements. A
// row whose model, framework, cluster or strategy cannot be resolved is a
// *search.InputError naming its line; a failure of the models to cost a
// valid step is another error.
func Validate(rows []Row, o Options) (Report, error) {
	pr := predictor{dir: o.Dir, models: map[string]model.Spec{}, frameworks: map[string]framework.Profile{}, clusters: map[string]profiles.Cluster{}}
	rep := Report{Rows: make([]Result, 0, len(rows))}
	for _, r := range rows {
		fw := o.FrameworkOf(r)
		if r.Framework != "" {
			fw = pr.local(fw) // a file named in the row; o.Framework is the caller's
		}
		res, err := pr.predict(r, fw)
		if err != nil {
			return Report{}, err
		}
		rep.Rows = append(rep.Rows, res)
	}
	var names []string
	byName := map[string][]Result{}
	for _, r := range rep.Rows {
		if _, ok := byName[r.Framework]; !ok {
			names = append(names, r.Framework)
		}
		byName[r.Framework] = append(byName[r.Framework], r)
	}
	for _, n := range names {
		rep.Frameworks = append(rep.Frameworks, summarize(n, byName[n]))
	}
	rep.Overall = summarize("", rep.Rows)
	rep.Warnings = pr.warnings
	return rep, nil
}

// summarize aggregates rs under the framework name.
func summarize(name string, rs []Result) Summary {
	s := Summary{Framework: name, Rows: len(rs)}
	for _, r := range rs {
		if !r.VerdictOK {
			s.WrongVerdicts++
		}
		if r.StepError == nil || r.MemoryError == nil {
			continue
		}
		s.Ran++
		s.StepMAPE += math.Abs(*r.StepError)
		s.MemoryMAPE += math.Abs(*r.MemoryError)
	}
	if s.Ran > 0 {
		s.StepMAPE /= float64(s.Ran)
		s.MemoryMAPE /= float64(s.Ran)
	}
	return s
}

// predictor resolves and predicts rows, loading each model, framework and
// cluster once.
type predictor struct {
	dir        string
	warnings   []string
	models     map[string]model.Spec
	frameworks map[string]framework.Profile
	clusters   map[string]profiles.Cluster
}

// predict evaluates row r under framework profile fw.
func (pr *predictor) predict(r Row, fw string) (Result, error) {
	inputErr := func(format string, args ...any) error {
		return &search.InputError{Err: fmt.Errorf("steps: line %d: "+format, append([]any{r.Line}, args...)...)}
	}
	m, err := pr.model(r.Model)
	if err != nil {
		return Result{}, inputErr("model %q: %w", r.Model, err)
	}
	f, err := pr.framework(fw)
	if err != nil {
		return Result{}, inputErr("framework %q: %w", fw, err)
	}
	clusterName := r.Cluster
	if clusterName == "" {
		clusterName = DefaultCluster
	}
	c, err := pr.cluster(clusterName)
	if err != nil {
		return Result{}, inputErr("cluster %q: %w", clusterName, err)
	}

	// The same steps as plan explain: the problem, the strategy string
	// parsed, validated and placed, then evaluated with its trace.
	w := space.Workload{Batch: r.Batch(), SeqLen: r.Seq}
	p, err := search.NewProblem(m, c, w, space.Fix{}, f.SearchOptions())
	if err != nil {
		return Result{}, inputErr("%w", err)
	}
	spec := fmt.Sprintf("mb=%d,recompute=%s", r.MicroBatch, r.Recompute)
	s, err := space.Parse(spec)
	if err != nil {
		return Result{}, inputErr("strategy %s: %w", spec, err)
	}
	if err := s.Validate(p.Model(), p.Cluster(), p.Workload()); err != nil {
		return Result{}, inputErr("strategy %s does not work for %s on %s with a batch of %d x %d tokens: %s",
			spec, p.Model().Name, c.Name, w.Batch, w.SeqLen, text.OneLine(err.Error()))
	}
	placed, err := s.Place(p.Cluster())
	if err != nil {
		return Result{}, inputErr("strategy %s cannot be placed on %s: %w", spec, c.Name, err)
	}
	cand := p.Evaluate(placed, true)
	if cand.Err != nil {
		return Result{}, fmt.Errorf("steps: line %d: evaluating %s: %w", r.Line, spec, cand.Err)
	}

	res := Result{
		Line: r.Line, ID: r.ID(),
		Model: p.Model().Name, Framework: f.Name, Cluster: c.Name,
		Seq: r.Seq, MicroBatch: r.MicroBatch, Accumulated: r.Accumulated, Batch: r.Batch(), Recompute: r.Recompute,
		Strategy:          spec,
		PredictedStepS:    cand.StepSeconds,
		PredictedMemoryGB: cand.MemoryBytes / 1e9,
		UsableGB:          cand.UsableBytes / 1e9,
		PredictedFits:     cand.Fits,
		OOMRisk:           profiles.OOMRisk(cand.MemoryBytes, cand.UsableBytes, c.Chips(), f.Name),
		MeasuredFits:      r.Ran,
	}
	res.VerdictOK = res.PredictedFits == res.MeasuredFits
	if r.Ran {
		memGB := r.PeakAllocatedBytes / 1e9
		stepErr := cand.StepSeconds/r.StepS - 1
		memErr := cand.MemoryBytes/r.PeakAllocatedBytes - 1
		res.MeasuredStepS, res.StepError = &r.StepS, &stepErr
		res.MeasuredMemoryGB, res.MemoryError = &memGB, &memErr
	}
	return res, nil
}

// model loads the model of a model cell: a file relative to the steps
// file's directory, else models/NAME.json there, else a preset name (or a
// path as model.Load takes it).
func (pr *predictor) model(cell string) (model.Spec, error) {
	arg := cell
	if !filepath.IsAbs(cell) {
		for _, p := range []string{filepath.Join(pr.dir, cell), filepath.Join(pr.dir, "models", cell+".json")} {
			if isFile(p) {
				arg = p
				break
			}
		}
	}
	if m, ok := pr.models[arg]; ok {
		return m, nil
	}
	m, warnings, err := model.LoadWarnings(arg)
	if err != nil {
		return model.Spec{}, err
	}
	for _, w := range warnings {
		pr.warnings = append(pr.warnings, cell+": "+w)
	}
	pr.models[arg] = m
	return m, nil
}

// local returns arg, a YAML file name, as a path in the steps file's
// directory when there is such a file there; else arg unchanged.
func (pr *predictor) local(arg string) string {
	lower := strings.ToLower(arg)
	if (strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml")) && !filepath.IsAbs(arg) {
		if p := filepath.Join(pr.dir, arg); isFile(p) {
			return p
		}
	}
	return arg
}

// framework loads a framework profile by name or YAML file.
func (pr *predictor) framework(arg string) (framework.Profile, error) {
	if f, ok := pr.frameworks[arg]; ok {
		return f, nil
	}
	f, err := framework.Load(arg)
	if err != nil {
		return framework.Profile{}, err
	}
	pr.frameworks[arg] = f
	return f, nil
}

// cluster loads a cluster by name or YAML file (see local).
func (pr *predictor) cluster(arg string) (profiles.Cluster, error) {
	arg = pr.local(arg)
	if c, ok := pr.clusters[arg]; ok {
		return c, nil
	}
	c, err := profiles.Load(arg)
	if err != nil {
		return profiles.Cluster{}, err
	}
	pr.clusters[arg] = c
	return c, nil
}

// isFile reports whether path names a regular file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
