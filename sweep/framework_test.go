package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/framework"
)

// frameworkGrid returns fakeGrid(n) planned under the profile fw (a name
// or a file).
func frameworkGrid(t *testing.T, n int, fw string) *Grid {
	t.Helper()
	g := fakeGrid(n)
	p, err := framework.Load(fw)
	if err != nil {
		t.Fatal(err)
	}
	g.Framework = p
	return g
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExpandFramework(t *testing.T) {
	base := Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{16}, Search: Search{Method: "auto", Seed: 1}}

	g, err := Expand(base)
	if err != nil {
		t.Fatal(err)
	}
	generic, _ := framework.Builtin(framework.Default)
	if !reflect.DeepEqual(g.Framework, generic) {
		t.Errorf("a configuration without a framework expands to %+v, want the generic profile", g.Framework)
	}

	c := base
	c.Framework = " Megatron "
	if g, err = Expand(c); err != nil || g.Framework.Name != "megatron" {
		t.Errorf("framework Megatron: %q, %v", g.Framework.Name, err)
	}

	c.Framework = writeFile(t, t.TempDir(), "my-stack.yaml", "base: deepspeed\noverlap: {weights: 0.85}\n")
	g, err = Expand(c)
	if err != nil {
		t.Fatal(err)
	}
	if g.Framework.Name != "my-stack" || g.Framework.Comm.WeightOverlap == nil || *g.Framework.Comm.WeightOverlap != 0.85 {
		t.Errorf("framework file: %+v", g.Framework)
	}

	// A bad framework file is reported in one line naming the key.
	c.Framework = writeFile(t, t.TempDir(), "bad.yaml", "attention: paged\n")
	_, err = Expand(c)
	if err == nil || !strings.HasPrefix(err.Error(), `framework "`+c.Framework+`": file `) ||
		!strings.Contains(err.Error(), `attention "paged" is unknown`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad framework file: %v", err)
	}
}

// legacyFingerprint is the fingerprint of a manifest written before sweeps
// named a framework.
func legacyFingerprint(s Search, cells []Cell) string {
	b, _ := json.Marshal(struct {
		Search Search `json:"search"`
		Cells  []Cell `json:"cells"`
	}{s, cells})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestManifestFramework(t *testing.T) {
	fingerprints := map[string]string{} // fingerprint -> framework
	for _, name := range framework.Names() {
		m := NewManifest(frameworkGrid(t, 4, name))
		if m.Framework != name || m.FrameworkDigest != "" {
			t.Errorf("%s: manifest framework %q, digest %q", name, m.Framework, m.FrameworkDigest)
		}
		if other, ok := fingerprints[m.Fingerprint]; ok {
			t.Errorf("%s and %s give the same fingerprint", name, other)
		}
		fingerprints[m.Fingerprint] = name
	}

	// The default framework keeps the fingerprint manifests had before
	// they named one, and so does a grid built without a profile.
	g := frameworkGrid(t, 4, "generic")
	if got, want := NewManifest(g).Fingerprint, legacyFingerprint(g.Search, g.Cells); got != want {
		t.Errorf("generic fingerprint %s, want the legacy %s", got, want)
	}
	if m := NewManifest(fakeGrid(4)); m.Framework != "generic" || m.Fingerprint != NewManifest(g).Fingerprint {
		t.Errorf("a grid without a profile: framework %q, fingerprint %s", m.Framework, m.Fingerprint)
	}

	// A file is told apart by its settings, not only its name.
	dir := t.TempDir()
	a := writeFile(t, dir, "a/stack.yaml", "base: deepspeed\noverlap: {weights: 0.85}\n")
	a2 := writeFile(t, dir, "a2/stack.yaml", "base: deepspeed\noverlap: {weights: 0.85}\n# the same settings\n")
	b := writeFile(t, dir, "b/stack.yaml", "base: deepspeed\noverlap: {weights: 0.5}\n")
	ma, ma2, mb := NewManifest(frameworkGrid(t, 4, a)), NewManifest(frameworkGrid(t, 4, a2)), NewManifest(frameworkGrid(t, 4, b))
	if ma.Framework != "stack" || len(ma.FrameworkDigest) != 64 {
		t.Errorf("file framework: %q, digest %q", ma.Framework, ma.FrameworkDigest)
	}
	if ma.Fingerprint != ma2.Fingerprint {
		t.Error("two files with the same name and settings give different fingerprints")
	}
	if ma.Fingerprint == mb.Fingerprint || ma.FrameworkDigest == mb.FrameworkDigest {
		t.Error("two files with the same name and different settings give the same fingerprint")
	}
	// A file that names a built-in and changes nothing is that built-in; one
	// that changes something is not.
	same := NewManifest(frameworkGrid(t, 4, writeFile(t, dir, "m1.yaml", "name: megatron\nbase: megatron\ndescription: ours\n")))
	changed := NewManifest(frameworkGrid(t, 4, writeFile(t, dir, "m2.yaml", "name: megatron\nbase: megatron\noptimizer: {clip_passes: 3}\n")))
	builtin := NewManifest(frameworkGrid(t, 4, "megatron"))
	if same.Fingerprint != builtin.Fingerprint || same.FrameworkDigest != "" {
		t.Errorf("a file repeating megatron: digest %q, fingerprint differs from the built-in's: %t", same.FrameworkDigest, same.Fingerprint != builtin.Fingerprint)
	}
	if changed.Fingerprint == builtin.Fingerprint || changed.FrameworkDigest == "" {
		t.Error("a file named megatron with other settings has the built-in's fingerprint")
	}
}

func TestManifestFrameworkRoundTrip(t *testing.T) {
	for _, fw := range []string{"generic", "deepspeed", writeFile(t, t.TempDir(), "stack.yaml", "base: pytorch\nflat_collectives: true\n")} {
		dir := t.TempDir()
		g := frameworkGrid(t, 3, fw)
		if _, err := (&Runner{Dir: dir, Solve: fakeSolve}).Run(context.Background(), g); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(`"framework": "`+g.Framework.Name+`"`)) {
			t.Errorf("%s: the manifest does not name the framework:\n%s", fw, data)
		}
		m, err := ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := NewManifest(g); !reflect.DeepEqual(m, want) {
			t.Errorf("%s: read back %+v, want %+v", fw, m, want)
		}
	}
}

// Two sweeps that differ only in their framework never share a directory,
// and their shards do not merge.
func TestRunRefusesAnotherFramework(t *testing.T) {
	dir := t.TempDir()
	if _, err := (&Runner{Dir: dir, Solve: fakeSolve}).Run(context.Background(), frameworkGrid(t, 4, "generic")); err != nil {
		t.Fatal(err)
	}
	_, err := (&Runner{Dir: dir, Solve: fakeSolve, Resume: true}).Run(context.Background(), frameworkGrid(t, 4, "megatron"))
	var in *InputError
	if err == nil || !errors.As(err, &in) ||
		!strings.Contains(err.Error(), "belongs to another sweep (framework generic, 4 cells") ||
		!strings.Contains(err.Error(), "this one has framework megatron, 4 cells") {
		t.Fatalf("a megatron sweep in a generic sweep's directory: %v", err)
	}
	// The same framework resumes.
	st, err := (&Runner{Dir: dir, Solve: fakeSolve, Resume: true}).Run(context.Background(), frameworkGrid(t, 4, "generic"))
	if err != nil || st.Resumed != 4 || st.Ran != 0 {
		t.Errorf("resume of the same sweep: %+v, %v", st, err)
	}

	other := t.TempDir()
	if _, err := (&Runner{Dir: other, Solve: fakeSolve}).Run(context.Background(), frameworkGrid(t, 4, "megatron")); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]string{dir, other}); err == nil || !strings.Contains(err.Error(), "are different sweeps (frameworks generic and megatron") {
		t.Errorf("merge of a generic and a megatron sweep: %v", err)
	}
}

// A directory written before sweeps named a framework is the default
// framework's sweep: it resumes and merges as before.
func TestLegacyManifest(t *testing.T) {
	dir := t.TempDir()
	g := frameworkGrid(t, 4, "generic")
	legacy, err := json.MarshalIndent(struct {
		Version     int    `json:"version"`
		Fingerprint string `json:"fingerprint"`
		Search      Search `json:"search"`
		Cells       []Cell `json:"cells"`
	}{ManifestVersion, legacyFingerprint(g.Search, g.Cells), g.Search, g.Cells}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, ManifestFile, string(legacy)+"\n")
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Framework != "generic" || m.Fingerprint != NewManifest(g).Fingerprint {
		t.Errorf("legacy manifest reads as %+v", m)
	}
	if _, err := (&Runner{Dir: dir, Solve: fakeSolve, Resume: true}).Run(context.Background(), g); err != nil {
		t.Errorf("a generic sweep in a legacy directory: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); !bytes.Equal(got, append(legacy, '\n')) {
		t.Error("the run rewrote the legacy manifest")
	}
	if _, err := (&Runner{Dir: dir, Solve: fakeSolve, Resume: true}).Run(context.Background(), frameworkGrid(t, 4, "torchtitan")); err == nil ||
		!strings.Contains(err.Error(), "belongs to another sweep (framework generic") {
		t.Errorf("a torchtitan sweep in a legacy directory: %v", err)
	}
	if _, err := Merge([]string{dir}); err != nil {
		t.Errorf("merge of a legacy directory: %v", err)
	}

	// Naming another framework in a legacy manifest is an edit.
	edited := bytes.Replace(legacy, []byte(`"version": 1,`), []byte(`"version": 1, "framework": "megatron",`), 1)
	writeFile(t, dir, ManifestFile, string(edited))
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "was edited") {
		t.Errorf("a legacy manifest given a framework: %v", err)
	}
}

func TestSolverFramework(t *testing.T) {
	cfg := Config{Models: []string{"llama3-8b"}, Clusters: []string{"h100-8"}, Batches: []int{16}, Seqs: []int{4096},
		Search: Search{Method: "auto", Seed: 1, Top: 2}}
	cell := Cell{"llama3-8b", "h100-8", 16, 4096, ""}
	plans := map[string]string{}
	for _, fw := range []string{"", "megatron", "torchtitan"} {
		cfg.Framework = fw
		g, err := Expand(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := fw
		if want == "" {
			want = "generic"
		}
		// The zero Options are the grid's framework's.
		var recs []Record
		for _, s := range []*Solver{{Grid: g, Workers: 1}, {Grid: g, Options: g.Framework.SearchOptions(), Workers: 1}} {
			rec, err := s.Solve(context.Background(), cell)
			if err != nil || rec.Error != "" {
				t.Fatalf("%s: %v %s", want, err, rec.Error)
			}
			var p struct {
				Framework string `json:"framework"`
			}
			if err := json.Unmarshal(rec.Plan, &p); err != nil {
				t.Fatal(err)
			}
			if p.Framework != want {
				t.Errorf("framework %q: the plan names %q", fw, p.Framework)
			}
			recs = append(recs, rec)
		}
		a, err := Canonical(mustJSON(t, recs[0]))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Canonical(mustJSON(t, recs[1]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the zero Options plan differently from the profile's:\n%s\n%s", want, a, b)
		}
		plans[want] = strings.Replace(string(a), `"framework":"`+want+`"`, "", 1)
	}
	// torch.compile'd PyTorch's kernels and autocast give other step times
	// than Megatron's.
	if plans["torchtitan"] == plans["megatron"] {
		t.Error("torchtitan and megatron plan the same front")
	}
}

// mustJSON encodes rec as its output line.
func mustJSON(t *testing.T, rec Record) []byte {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
