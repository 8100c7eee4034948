package profiles

import "testing"

// TestMXUFill: the useful fraction of a padded operand dimension, by hand.
func TestMXUFill(t *testing.T) {
	for _, tt := range []struct {
		mxu, dims int
		want      float64
	}{
		{256, 128, 0.5}, {128, 128, 1}, {128, 192, 0.75}, {256, 300, 300.0 / 512}, {0, 64, 1}, {256, 0, 1},
	} {
		if got := (Chip{MXUDim: tt.mxu}).MXUFill(tt.dims); got != tt.want {
			t.Errorf("MXU %d, %d wide: %g, want %g", tt.mxu, tt.dims, got, tt.want)
		}
	}
}
