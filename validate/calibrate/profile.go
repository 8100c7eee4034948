package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/meshplan/meshplan/profiles"
)

// ProfileYAML returns the fitted cluster of rep as a cluster YAML file that
// --cluster accepts (profiles.ParseYAML), headed by comments that say how
// it was fitted. It checks that the file reads back to the same cluster.
func ProfileYAML(rep Report) ([]byte, error) {
	body, err := yaml.Marshal(rep.Fitted)
	if err != nil {
		return nil, fmt.Errorf("calibrate: writing the profile: %v", err)
	}
	back, err := profiles.ParseYAML(body)
	if err != nil {
		return nil, fmt.Errorf("calibrate: the fitted profile does not read back: %v", err)
	}
	if !reflect.DeepEqual(back, rep.Fitted) {
		return nil, fmt.Errorf("calibrate: the fitted profile reads back as a different cluster")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Fitted by plan calibrate from %d %s on %s, starting from cluster %s.\n",
		len(rep.Rows), plural(len(rep.Rows), "run", "runs"), rep.Base.Chip.Name, rep.Base.Name)
	fmt.Fprintf(&b, "# MAPE %.1f%% with the defaults, %.1f%% fitted", 100*rep.BeforeMAPE, 100*rep.AfterMAPE)
	if !math.IsNaN(rep.CVMAPE) {
		fmt.Fprintf(&b, ", %.1f%% cross-validated (%d folds)", 100*rep.CVMAPE, rep.Folds)
	}
	b.WriteString(".\n")
	for _, p := range rep.Params {
		state := "fitted"
		switch {
		case p.Held:
			state = "held at the default: the runs do not see it"
		case !p.Identified:
			state = "fitted, but the runs cannot separate it from the others"
		}
		fmt.Fprintf(&b, "#   %-22s %-10s (default %s) %s\n", p.Name, FormatValue(p.Value), FormatValue(p.Default), state)
	}
	b.WriteString("# Runs on this chip take its efficiency and per-tier link figures (plan validate --cluster).\n")
	b.Write(body)
	return b.Bytes(), nil
}
