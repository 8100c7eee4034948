package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestFile is the name of the manifest in a sweep directory.
const ManifestFile = "sweep.json"

// ManifestVersion is the version of the manifest format.
const ManifestVersion = 1

// Manifest describes a sweep: its search settings and every cell in grid
// order. Each shard writes it to DIR/sweep.json (the same bytes for every
// shard of a sweep), so that resume can refuse a directory of another
// sweep and merge knows the whole grid without the configuration.
type Manifest struct {
	// Version is ManifestVersion.
	Version int `json:"version"`
	// Fingerprint is the SHA-256 of the search settings and the cells.
	Fingerprint string `json:"fingerprint"`
	// Search is the search settings of every cell.
	Search Search `json:"search"`
	// Cells are the sweep's cells in grid order.
	Cells []Cell `json:"cells"`
}

// NewManifest returns the manifest of g.
func NewManifest(g *Grid) Manifest {
	return Manifest{Version: ManifestVersion, Fingerprint: fingerprint(g.Search, g.Cells), Search: g.Search, Cells: g.Cells}
}

func fingerprint(s Search, cells []Cell) string {
	b, _ := json.Marshal(struct {
		Search Search `json:"search"`
		Cells  []Cell `json:"cells"`
	}{s, cells})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
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
		return Manifest{}, fmt.Errorf("%s is not a sweep manifest: %s", path, oneLine(err.Error()))
	}
	if m.Version != ManifestVersion {
		return Manifest{}, fmt.Errorf("%s has version %d; this plan reads version %d", path, m.Version, ManifestVersion)
	}
	if got := fingerprint(m.Search, m.Cells); got != m.Fingerprint {
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
			return inputErr(fmt.Errorf("%s belongs to another sweep (%d cells, search %+v; this one has %d cells, search %+v): use another --out directory", path, len(old.Cells), old.Search, len(m.Cells), m.Search))
		}
		return nil
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// WriteFileAtomic writes data to path through a synced temporary file in
// the same directory and a rename, so that readers and a killed run never
// see half a file.
func WriteFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}
