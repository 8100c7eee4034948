package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"os"
	"path/filepath"
	"reflect"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/internal/outfile"
)

// ManifestFile is the name of the manifest in a sweep directory.
const ManifestFile = "sweep.json"

// ManifestVersion is the version of the manifest format.
const ManifestVersion = 1

// Manifest describes a sweep: its framework profile, search settings and
// every cell in grid order. Each shard writes it to DIR/sweep.json (the
// same bytes for every shard of a sweep), so that resume can refuse a
// directory of another sweep and merge knows the whole grid without the
// configuration.
type Manifest struct {
	// Version is ManifestVersion.
	Version int `json:"version"`
	// Fingerprint is the SHA-256 of the framework, the search settings and
	// the cells. The default framework adds nothing to it, so a manifest
	// written before sweeps named a framework keeps its fingerprint.
	Fingerprint string `json:"fingerprint"`
	// Framework is the name of every cell's framework profile, as each
	// plan's "framework" gives it. A manifest without one reads as
	// framework.Default.
	Framework string `json:"framework"`
	// FrameworkDigest is the SHA-256 of the framework profile's settings
	// (its search.Options) when they are not those of the built-in profile
	// of the same name, as for a YAML file: two files of one name, or a
	// file edited between two runs, make different sweeps. It is empty for
	// a built-in profile.
	FrameworkDigest string `json:"framework_digest,omitempty"`
	// Search is the search settings of every cell.
	Search Search `json:"search"`
	// Training is the training section every cell's plan applies; nil
	// when the configuration has none.
	Training *Training `json:"training,omitempty"`
	// Cells are the sweep's cells in grid order.
	Cells []Cell `json:"cells"`
}

// NewManifest returns the manifest of g.
func NewManifest(g *Grid) Manifest {
	m := Manifest{Version: ManifestVersion, Search: g.Search, Cells: g.Cells}
	if g.Training.given() {
		t := g.Training
		m.Training = &t
	}
	m.Framework, m.FrameworkDigest = frameworkIdentity(g.Framework)
	m.Fingerprint = m.fingerprint()
	return m
}

// frameworkIdentity returns the name of profile p (framework.Default when
// it has none) and the digest of its settings, empty when they are the
// built-in profile's of that name.
func frameworkIdentity(p framework.Profile) (name, digest string) {
	name = p.Name
	if name == "" {
		// A grid built by hand: its plans name the default framework.
		name = framework.Default
		if reflect.DeepEqual(p, framework.Profile{}) {
			return name, ""
		}
	}
	opts := p.SearchOptions()
	if b, err := framework.Builtin(name); err == nil && b.Name == name && reflect.DeepEqual(b.SearchOptions(), opts) {
		return name, ""
	}
	data, err := json.Marshal(opts)
	if err != nil {
		// Only a non-finite number fails to encode; the overlap pointers
		// are printed by value so that the digest does not depend on them.
		c := opts.Cost.Comm
		opts.Cost.Comm.WeightOverlap, opts.Cost.Comm.GradOverlap = nil, nil
		data = fmt.Appendf(nil, "%#v %v %v", opts, deref(c.WeightOverlap), deref(c.GradOverlap))
	}
	h := sha256.Sum256(data)
	return name, hex.EncodeToString(h[:])
}

// deref returns *f, or "nil".
func deref(f *float64) any {
	if f == nil {
		return "nil"
	}
	return *f
}

// fingerprint returns the SHA-256 of m's framework, search settings and
// cells. The default framework is left out of it, as manifests without a
// framework had it.
func (m Manifest) fingerprint() string {
	fw := m.Framework
	if fw == framework.Default && m.FrameworkDigest == "" {
		fw = ""
	}
	b, _ := json.Marshal(struct {
		Search          Search    `json:"search"`
		Training        *Training `json:"training,omitempty"`
		Framework       string    `json:"framework,omitempty"`
		FrameworkDigest string    `json:"framework_digest,omitempty"`
		Cells           []Cell    `json:"cells"`
	}{m.Search, m.Training, fw, m.FrameworkDigest, m.Cells})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// frameworkLabel names m's framework for people: its name, and the start
// of its settings' digest when it has one.
func (m Manifest) frameworkLabel() string {
	if m.FrameworkDigest == "" {
		return m.Framework
	}
	return fmt.Sprintf("%s (settings %.12s)", m.Framework, m.FrameworkDigest)
}

// ReadManifest reads DIR/sweep.json and checks it.
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Manifest{}, fmt.Errorf("%s is missing: is %s the --out directory of a plan sweep?", path, dir)
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("reading %s: %w", path, err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%s is not a sweep manifest: %s", path, text.OneLine(err.Error()))
	}
	if m.Version != ManifestVersion {
		return Manifest{}, fmt.Errorf("%s has version %d; this plan reads version %d", path, m.Version, ManifestVersion)
	}
	if m.Framework == "" {
		m.Framework = framework.Default // written before sweeps named a framework
	}
	if got := m.fingerprint(); got != m.Fingerprint {
		return Manifest{}, fmt.Errorf("%s was edited: its fingerprint does not match its cells", path)
	}
	return m, nil
}

// writeManifest writes m to DIR/sweep.json, or checks that the one there
// is the same sweep.
func writeManifest(dir string, m Manifest) error {
	path := filepath.Join(dir, ManifestFile)
	if _, err := os.Stat(path); err == nil {
		old, err := ReadManifest(dir)
		if err != nil {
			return inputErr(err)
		}
		if old.Fingerprint != m.Fingerprint {
			return inputErr(fmt.Errorf("%s belongs to another sweep (framework %s, %d cells, search %s; this one has framework %s, %d cells, search %s): use another --out directory",
				path, old.frameworkLabel(), len(old.Cells), old.Search, m.frameworkLabel(), len(m.Cells), m.Search))
		}
		return nil
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return outfile.Write(path, append(data, '\n'), nil)
}
