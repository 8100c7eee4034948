package main

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the import path prefix of this module's packages.
const module = "github.com/meshplan/meshplan/"

// floors are the layers of docs/design.md, lowest first: a package may
// import only packages on a lower floor, never one on its own floor or
// above. Every package of the module must be on a floor.
var floors = [][]string{
	{"internal/text", "internal/bounded/boundedtest"},
	{"internal/bounded"},
	{"model", "profiles", "internal/outfile", "internal/settings", "validate/internal/cells", "goodput"},
	{"space"},
	{"cost", "memory"},
	{"score", "timeline"},
	{"search"},
	{"framework"},
	{"validate/runs", "validate/steps"},
	{"validate/calibrate"},
	{"results"},
	{"planner"},
	{"validate/bands", "sweep"},
	{"cmd"},
	{"cmd/plan"},
}

// floorOf returns the floor of package pkg (a path relative to the module),
// or -1.
func floorOf(pkg string) int {
	for i, f := range floors {
		if slices.Contains(f, pkg) {
			return i
		}
	}
	return -1
}

// TestLayering enforces the package floors of docs/design.md: every
// package sits on a floor, and imports (tests included) only run
// downwards: model, profiles and the internal leaves import nothing of
// ours, nothing imports cmd, no cycles and no sideways imports.
func TestLayering(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, build.ImportComment)
		if err != nil {
			if _, noGo := err.(*build.NoGoError); noGo {
				return nil
			}
			t.Errorf("import %s: %v", path, err)
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		pkg := filepath.ToSlash(rel)
		floor := floorOf(pkg)
		if floor < 0 {
			t.Errorf("package %s is on no floor of TestLayering: add it to floors (and to docs/design.md)", pkg)
			return nil
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours || dep == pkg {
				continue
			}
			if f := floorOf(dep); f < 0 || f >= floor {
				t.Errorf("package %s (floor %d) imports %s (floor %d): imports run only downwards", pkg, floor, dep, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
