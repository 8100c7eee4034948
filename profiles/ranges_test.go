package profiles

import (
	"slices"
	"testing"
)

func TestExpandNames(t *testing.T) {
	tests := []struct {
		arg     string
		want    []string
		wantErr bool
	}{
		{"v5p-256", []string{"v5p-256"}, false},
		{"my-cluster.yaml", []string{"my-cluster.yaml"}, false},
		{"v5p-128..v5p-1024", []string{"v5p-128", "v5p-256", "v5p-512", "v5p-1024"}, false},
		{"2xv5p-256..8xv5p-256", []string{"2xv5p-256", "4xv5p-256", "8xv5p-256"}, false},
		{"h100-512, h100-1024,h100-2048", []string{"h100-512", "h100-1024", "h100-2048"}, false},
		{"h100-8..v5p-64", nil, true},  // two chips
		{"h100-8..h100-24", nil, true}, // 24 is not 8 times a power of two
		{"h100-64..h100-8", nil, true}, // downwards
		{"h100-8,,h100-16", nil, true}, // empty item
		{"h100-1..h100-1048576", nil, true},
	}
	for _, tt := range tests {
		got, err := ExpandNames(tt.arg)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ExpandNames(%q) = %v, %v; want %v, error %v", tt.arg, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFamilySizes(t *testing.T) {
	got, err := FamilySizes("2xv5p-256")
	if err != nil {
		t.Fatal(err)
	}
	// v5p-N counts TensorCores: the smallest slice is v5p-8 (4 chips).
	if got[0] != "v5p-8" || !slices.Contains(got, "v5p-256") || slices.Contains(got, "v5p-7") {
		t.Errorf("FamilySizes(2xv5p-256) = %v", got)
	}
	if _, err := FamilySizes("nonsense"); err == nil {
		t.Error("FamilySizes(nonsense) succeeded")
	}
}
