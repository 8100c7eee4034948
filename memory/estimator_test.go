package memory

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestEstimatorMatchesEstimate checks that an Estimator, which keeps the
// geometry and terms of the previous strategy, gives exactly Estimate's
// breakdown and error for the strategies of a space taken in the space's
// order and shuffled.
func TestEstimatorMatchesEstimate(t *testing.T) {
	for _, tc := range []struct {
		m model.Spec
		c profiles.Cluster
	}{{llama70B(), h100(64)}, {mixtral(), h100(64)}, {nemotron3Nano(t), h100(64)}, {tinyZamba2(2), h100(8)}} {
		t.Run(tc.m.Name, func(t *testing.T) {
			w := space.Workload{Batch: 64, SeqLen: 4096}
			sp, err := space.New(tc.m, tc.c, w, space.Fix{})
			if err != nil {
				t.Fatal(err)
			}
			var strategies []space.Strategy
			genes := make([]int, space.NumGenes)
			for i := int64(0); i < sp.Size() && len(strategies) < 3000; i += 1 + i%5 {
				var s space.Strategy
				if sp.DecodeIndex(i, genes, &s) {
					strategies = append(strategies, s)
				}
			}
			if len(strategies) < 100 {
				t.Fatalf("only %d valid strategies decoded", len(strategies))
			}
			// One with an unknown recompute policy, for the error.
			bad := strategies[0]
			bad.Recompute = "no-such-policy"
			strategies = append(strategies, bad)
			mm := NewModel(model.MustProgram(tc.m, model.ProgramOptions{}))
			order := make([]int, len(strategies))
			for i := range order {
				order[i] = i
			}
			shuffled := append([]int(nil), order...)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for _, run := range [][]int{order, shuffled} {
				e := mm.NewEstimator(tc.c, w)
				for _, i := range run {
					s := strategies[i]
					want, wantErr := mm.Estimate(tc.c, w, s)
					got, err := e.Estimate(s)
					if !reflect.DeepEqual(got, want) || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
						t.Fatalf("Estimator.Estimate(%v) = %+v, %v; want %+v, %v", s.String(), got, err, want, wantErr)
					}
				}
			}
		})
	}
}

// nemotron3Nano is a hybrid of five layer kinds, more than the stack
// buffers of maxKinds hold.
func nemotron3Nano(t *testing.T) model.Spec {
	t.Helper()
	s, err := model.Preset("nemotron-3-nano")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
