package main

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the import path prefix of this module's packages.
const module = "github.com/meshplan/meshplan/"

// TestLayering enforces the package DAG of docs/design.md: model and profiles are
// leaves, nothing imports cmd, and no package imports sideways or upwards.
func TestLayering(t *testing.T) {
	allowed := map[string][]string{
		"internal/outfile":      {},
		"internal/settings":     {},
		"model":                 {},
		"profiles":              {},
		"profiles/framework":    {"model", "profiles", "space", "cost", "memory", "search"},
		"space":                 {"model", "profiles"},
		"memory":                {"model", "profiles", "space"},
		"cost":                  {"model", "profiles", "space"},
		"score":                 {"model", "profiles", "space", "cost", "memory"},
		"search":                {"model", "profiles", "space", "cost", "memory", "score"},
		"search/internal/cells": {},
		"search/runs":           {"model", "profiles", "profiles/framework", "space", "cost", "memory", "search", "search/internal/cells"},
		"search/calibrate":      {"model", "profiles", "profiles/framework", "space", "cost", "memory", "search", "search/runs"},
		"search/steps":          {"model", "profiles", "profiles/framework", "space", "cost", "memory", "search", "search/internal/cells"},
		"results":               {"model", "profiles", "profiles/framework", "space", "cost", "memory", "search", "search/runs", "search/calibrate", "search/steps", "internal/settings"},
		"results/sweep":         {"model", "profiles", "profiles/framework", "space", "cost", "memory", "search", "search/runs", "search/calibrate", "results", "search/steps", "internal/outfile", "internal/settings"},
	}
	for pkg, ok := range allowed {
		dir := filepath.Join("..", "..", filepath.FromSlash(pkg))
		p, err := build.ImportDir(dir, build.ImportComment)
		if err != nil {
			if _, isNoGo := err.(*build.NoGoError); isNoGo {
				continue
			}
			t.Errorf("import %s: %v", pkg, err)
			continue
		}
		imports := append(slices.Clone(p.Imports), p.TestImports...)
		for _, imp := range imports {
			rel, ours := strings.CutPrefix(imp, module)
			if !ours || rel == pkg {
				continue
			}
			if !slices.Contains(ok, rel) {
				t.Errorf("package %s imports %s; allowed: %v", pkg, rel, ok)
			}
		}
	}
}
