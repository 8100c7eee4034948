package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/meshplan/meshplan/sweep"
)

// buildPlan builds the plan binary into a temporary directory.
func buildPlan(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "plan")
	out, err := exec.Command("go", "build", "-o", bin, "./plan").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// childEnv is the test process's environment without the variables a
// sweep reads, plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PLAN_") || strings.HasPrefix(kv, "JOB_") || strings.HasPrefix(kv, "SLURM_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// checkComplete checks that the shard file of a whole sweep holds every
// cell of the manifest exactly once, and merges it.
func checkComplete(t *testing.T, dir string) {
	t.Helper()
	man, err := sweep.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	lines, torn, err := sweep.ReadFile(filepath.Join(dir, sweep.Whole.CellsFile()))
	if err != nil || torn {
		t.Fatalf("shard file: torn %v, %v", torn, err)
	}
	seen := map[string]int{}
	for _, l := range lines {
		seen[l.Record.Cell.Key()]++
	}
	for _, c := range man.Cells {
		if seen[c.Key()] != 1 {
			t.Errorf("cell %s found %d times", c, seen[c.Key()])
		}
	}
	if len(lines) != len(man.Cells) {
		t.Errorf("%d lines for %d cells", len(lines), len(man.Cells))
	}
	if _, err := sweep.Merge([]string{dir}); err != nil {
		t.Error(err)
	}
}

// A sweep killed with SIGKILL midway, then run again with --resume, ends
// complete with no duplicate cell; a torn last line is redone.
func TestSweepSIGKILLResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a sweep of a few seconds")
	}
	bin := buildPlan(t)
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "sweep.yaml")
	// 12 cells of 0.1-0.5 s each, run one at a time.
	if err := os.WriteFile(cfg, []byte("models: [llama2-7b, llama3-8b]\nclusters: [h100-16, a100-16]\nbatches: [16, 32, 64]\nseqs: [4096]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	cells := filepath.Join(out, sweep.Whole.CellsFile())
	args := []string{"sweep", "--config", cfg, "--out", out, "--jobs", "1", "--quiet"}

	child := exec.Command(bin, args...)
	child.Env = childEnv()
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		lines, _, _ := sweep.ReadFile(cells)
		if len(lines) >= 3 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the sweep ended before it could be killed: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no 3 cells written in 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed by SIGKILL: %v", err)
	}
	before, torn, err := sweep.ReadFile(cells)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) >= 12 {
		t.Fatalf("the sweep finished all %d cells before the kill", len(before))
	}
	t.Logf("killed after %d of 12 cells (torn last line: %v)", len(before), torn)

	// Without --resume the run refuses to touch the file.
	rerun := exec.Command(bin, args...)
	rerun.Env = childEnv()
	if out, err := rerun.CombinedOutput(); err == nil || !strings.Contains(string(out), "pass --resume") {
		t.Fatalf("rerun without --resume: %v\n%s", err, out)
	}

	// Tear the last line as a kill in the middle of a write would, unless
	// the kill did.
	if !torn {
		data, err := os.ReadFile(cells)
		if err != nil {
			t.Fatal(err)
		}
		last := before[len(before)-1].Raw
		if err := os.WriteFile(cells, append(data[:len(data)-len(last)-1], last[:len(last)/2]...), 0o644); err != nil {
			t.Fatal(err)
		}
		before = before[:len(before)-1]
	}

	resume := exec.Command(bin, append(args, "--resume")...)
	resume.Env = childEnv()
	msg, err := resume.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, msg)
	}
	want := fmt.Sprintf("12 cells (%d resumed, %d run, a torn last line redone,", len(before), 12-len(before))
	if !strings.Contains(string(msg), want) {
		t.Errorf("resume said %q, want %q", msg, want)
	}
	checkComplete(t, out)
	// The cells finished before the kill were kept byte for byte.
	after, _, _ := sweep.ReadFile(cells)
	for i, l := range before {
		if !bytes.Equal(after[i].Raw, l.Raw) {
			t.Errorf("line %d changed across the resume", i+1)
		}
	}
}

// k8sObject is the part of a Kubernetes object the manifest test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func readK8s(t *testing.T, path string) []k8sObject {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []k8sObject
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var o k8sObject
		if err := dec.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, o)
	}
	return objs
}

// The Kubernetes manifests parse, describe an Indexed Job whose
// JOB_COMPLETIONS matches its completions, and their commands, run for
// every completion index and then the merge, give a complete sweep.
func TestDocsKubernetesManifest(t *testing.T) {
	clearEnv(t)
	objs := append(readK8s(t, filepath.Join("..", "docs", "k8s-sweep.yaml")), readK8s(t, filepath.Join("..", "docs", "k8s-merge.yaml"))...)
	var config string
	var sweepJob, mergeJob *k8sObject
	for i := range objs {
		o := &objs[i]
		switch {
		case o.Kind == "ConfigMap":
			config = o.Data["sweep.yaml"]
		case o.Kind == "Job" && o.Spec.CompletionMode == "Indexed":
			sweepJob = o
		case o.Kind == "Job":
			mergeJob = o
		}
	}
	if config == "" || sweepJob == nil || mergeJob == nil {
		t.Fatalf("want a ConfigMap with sweep.yaml, an Indexed Job and a merge Job; got %+v", objs)
	}
	if sweepJob.Spec.Completions == nil || sweepJob.Spec.Parallelism == nil {
		t.Fatal("the sweep Job has no completions or parallelism")
	}
	n := *sweepJob.Spec.Completions
	c := sweepJob.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["JOB_COMPLETIONS"] != strconv.Itoa(n) {
		t.Errorf("JOB_COMPLETIONS is %q, want the Job's completions %d", env["JOB_COMPLETIONS"], n)
	}
	if !strings.Contains(strings.Join(c.Args, " "), "--resume") || sweepJob.Spec.Template.Spec.RestartPolicy != "OnFailure" {
		t.Error("a restarted sweep pod must resume")
	}

	tmp := t.TempDir()
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = filepath.Join(tmp, m.Name)
		if err := os.MkdirAll(mounts[m.MountPath], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	configDir, ok := mounts["/config"]
	if !ok {
		t.Fatal("no /config mount")
	}
	if err := os.WriteFile(filepath.Join(configDir, "sweep.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	local := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = a
			for mp, dir := range mounts {
				if rest, ok := strings.CutPrefix(a, mp+"/"); ok {
					out[i] = filepath.Join(dir, rest)
				}
			}
		}
		return out
	}
	if c.Command[0] != "plan" || mergeJob.Spec.Template.Spec.Containers[0].Command[0] != "plan" {
		t.Fatal("the containers must run plan")
	}
	for i := range n {
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(i))
		t.Setenv("JOB_COMPLETIONS", env["JOB_COMPLETIONS"])
		mustRun(t, local(c.Args)...)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	margs := local(mergeJob.Spec.Template.Spec.Containers[0].Args)
	mustRun(t, margs...)
	checkMerged(t, margs)
}

// checkMerged checks the merge output named by merge's --out in args.
func checkMerged(t *testing.T, args []string) {
	t.Helper()
	var out, dir string
	for i, a := range args {
		if a == "--out" {
			out = args[i+1]
		}
	}
	dir = args[1]
	man, err := sweep.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	lines, torn, err := sweep.ReadFile(out)
	if err != nil || torn || len(lines) != len(man.Cells) {
		t.Fatalf("merged %s: %d lines for %d cells, torn %v, %v", out, len(lines), len(man.Cells), torn, err)
	}
	for i, l := range lines {
		if l.Record.Cell != man.Cells[i] {
			t.Errorf("merged line %d is %s, want %s", i+1, l.Record.Cell, man.Cells[i])
		}
	}
}

// The Slurm script runs as every task of its array, then as the merge job.
func TestDocsSlurmScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join("..", "docs", "slurm-sweep.sh")
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#SBATCH --array=(\d+)-(\d+)$`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("no #SBATCH --array=A-B line")
	}
	lo, _ := strconv.Atoi(m[1])
	hi, _ := strconv.Atoi(m[2])
	bin := buildPlan(t)
	tmp := t.TempDir()
	objs := readK8s(t, filepath.Join("..", "docs", "k8s-sweep.yaml"))
	cfg := filepath.Join(tmp, "sweep.yaml")
	if err := os.WriteFile(cfg, []byte(objs[0].Data["sweep.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	base := []string{"PLAN_BIN=" + bin, "SWEEP_CONFIG=" + cfg, "SWEEP_OUT=" + out, "SLURM_CPUS_PER_TASK=2"}
	for id := lo; id <= hi; id++ {
		cmd := exec.CommandContext(context.Background(), bash, script)
		cmd.Env = childEnv(append(base, "SLURM_ARRAY_TASK_ID="+strconv.Itoa(id), "SLURM_ARRAY_TASK_MIN="+m[1],
			"SLURM_ARRAY_TASK_MAX="+m[2], "SLURM_ARRAY_TASK_COUNT="+strconv.Itoa(hi-lo+1))...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("task %d: %v\n%s", id, err, msg)
		}
	}
	cmd := exec.Command(bash, script, "merge")
	cmd.Env = childEnv(append(base, "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=1")...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, msg)
	}
	checkMerged(t, []string{"merge", out, "--out", filepath.Join(out, "merged.jsonl")})
	if _, err := os.Stat(filepath.Join(out, "summary.csv")); err != nil {
		t.Error(err)
	}
	for i := range hi - lo + 1 {
		if _, err := os.Stat(filepath.Join(out, fmt.Sprintf("cells-%d-of-%d.jsonl", i, hi-lo+1))); err != nil {
			t.Error(err)
		}
	}
}
