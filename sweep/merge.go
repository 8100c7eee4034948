package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MaxListed is the number of missing cells a merge error names.
const MaxListed = 5

// Merged is the union of a sweep's shard files: every cell of the
// manifest exactly once, in grid order.
type Merged struct {
	// Manifest is the sweep's manifest.
	Manifest Manifest
	// Lines are the cells' lines, in grid order, byte for byte as in the
	// shard file each was first read from.
	Lines []Line
	// Files are the shard files read, Dropped the number of lines dropped
	// as identical repeats, Torn the files whose torn last line was
	// ignored.
	Files   []string
	Dropped int
	Torn    []string
}

// shardFile is a cells file found in a directory.
type shardFile struct {
	path       string
	index, cnt int
}

// shardFiles lists the cells-I-of-N.jsonl files of dir, by N then I.
func shardFiles(dir string) ([]shardFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the sweep directory %s: %w", dir, err)
	}
	var fs []shardFile
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, "cells-") || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		i, n, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(name, "cells-"), ".jsonl"), "-of-")
		if !ok {
			continue
		}
		ii, err1 := strconv.Atoi(i)
		nn, err2 := strconv.Atoi(n)
		if err1 != nil || err2 != nil {
			continue
		}
		fs = append(fs, shardFile{path: filepath.Join(dir, name), index: ii, cnt: nn})
	}
	slices.SortFunc(fs, func(a, b shardFile) int {
		if a.cnt != b.cnt {
			return a.cnt - b.cnt
		}
		return a.index - b.index
	})
	return fs, nil
}

// Merge reads the manifests and shard files (cells-*-of-*.jsonl) of dirs
// and returns their union. Every directory's manifest must be the same
// sweep's. A cell found twice is kept once when both lines are equal apart
// from their elapsed fields, and is an error naming both files otherwise;
// a cell of the manifest found in no file is a hole, and holes are an
// error giving their count and the first MaxListed. A torn last line (a
// shard killed while writing) is ignored: its cell counts as missing.
func Merge(dirs []string) (_ *Merged, err error) {
	defer func() { err = inputErr(err) }()
	if len(dirs) == 0 {
		return nil, errors.New("merge needs at least one sweep directory")
	}
	var m Merged
	for i, dir := range dirs {
		man, err := ReadManifest(dir)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			m.Manifest = man
			continue
		}
		if man.Fingerprint != m.Manifest.Fingerprint {
			return nil, fmt.Errorf("%s and %s are different sweeps (frameworks %s and %s, %d and %d cells, or other search settings): merge only the shards of one sweep",
				filepath.Join(dirs[0], ManifestFile), filepath.Join(dir, ManifestFile), m.Manifest.frameworkLabel(), man.frameworkLabel(), len(m.Manifest.Cells), len(man.Cells))
		}
	}
	pos := make(map[string]int, len(m.Manifest.Cells))
	for i, c := range m.Manifest.Cells {
		pos[c.Key()] = i
	}
	type seen struct {
		line  Line
		canon []byte
		file  string
	}
	found := make([]*seen, len(m.Manifest.Cells))
	visited := map[string]bool{}
	for _, dir := range dirs {
		files, err := shardFiles(dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			abs, err := filepath.Abs(f.path)
			if err == nil && visited[abs] {
				continue // the same directory given twice
			}
			visited[abs] = true
			m.Files = append(m.Files, f.path)
			lines, torn, err := ReadFile(f.path)
			if err != nil {
				return nil, err
			}
			if torn {
				m.Torn = append(m.Torn, f.path)
			}
			for _, l := range lines {
				p, ok := pos[l.Record.Cell.Key()]
				if !ok {
					return nil, fmt.Errorf("%s line %d: cell %s is not in the sweep of %s", f.path, l.No, l.Record.Cell, filepath.Join(dirs[0], ManifestFile))
				}
				canon, err := Canonical(l.Raw)
				if err != nil {
					return nil, fmt.Errorf("%s line %d: %w", f.path, l.No, err)
				}
				if prev := found[p]; prev != nil {
					if !bytes.Equal(prev.canon, canon) {
						where := prev.file + " line " + strconv.Itoa(prev.line.No)
						return nil, fmt.Errorf("cell %s has conflicting results in %s and %s line %d: remove one of them and merge again", l.Record.Cell, where, f.path, l.No)
					}
					m.Dropped++
					continue
				}
				found[p] = &seen{line: l, canon: canon, file: f.path}
			}
		}
	}
	var missing []string
	for i, s := range found {
		if s == nil {
			missing = append(missing, m.Manifest.Cells[i].String())
		}
	}
	if len(missing) > 0 {
		listed := missing[:min(len(missing), MaxListed)]
		more := ""
		if len(missing) > MaxListed {
			more = ", ..."
		}
		return nil, fmt.Errorf("%d of the sweep's %d cells are missing (%s%s): run their shards (with --resume) and merge again",
			len(missing), len(m.Manifest.Cells), strings.Join(listed, "; "), more)
	}
	m.Lines = make([]Line, len(found))
	for i, s := range found {
		m.Lines[i] = s.line
	}
	return &m, nil
}

// WriteJSONL writes the merged lines, one per cell in grid order.
func (m *Merged) WriteJSONL(w io.Writer) error {
	for _, l := range m.Lines {
		if _, err := w.Write(l.Raw); err != nil {
			return fmt.Errorf("writing the merged cells: %w", err)
		}
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return fmt.Errorf("writing the merged cells: %w", err)
		}
	}
	return nil
}

// Records returns the merged records in grid order.
func (m *Merged) Records() []Record {
	recs := make([]Record, len(m.Lines))
	for i, l := range m.Lines {
		recs[i] = l.Record
	}
	return recs
}
