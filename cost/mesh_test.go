package cost

import (
	"testing"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestMoveTo checks which roles another placement of the same degrees
// moves (meshRoles.moveTo): those of a priced role set whose collective
// models change. On v5p-128 (a 4x4x4 torus, every axis the same ring), tp
// on x or on y prices the same; tp split over two axes does not; a role
// never priced moves nothing.
func TestMoveTo(t *testing.T) {
	c, err := profiles.Parse("v5p-128")
	if err != nil {
		t.Fatal(err)
	}
	in := &evalInputs{cluster: c}
	for _, tc := range []struct {
		name     string
		from, to string
		priced   []roleSet
		want     roleSet
	}{
		{"tp to a like axis", "tp=4,dp=16,mesh=tp:x;dp:y.z", "tp=4,dp=16,mesh=tp:y;dp:x.z",
			[]roleSet{bit(space.RoleTP), bit(space.RoleDP)}, 0},
		{"tp and dp together", "tp=4,dp=16,mesh=tp:x;dp:y.z", "tp=4,dp=16,mesh=tp:z;dp:x.y",
			[]roleSet{bit(space.RoleTP) | bit(space.RoleDP)}, 0},
		{"tp over two axes", "tp=4,dp=16,mesh=tp:x;dp:y.z", "tp=4,dp=16,mesh=tp:x*2.y*2;dp:x*2.y*2.z",
			[]roleSet{bit(space.RoleTP), bit(space.RoleDP)}, bit(space.RoleTP) | bit(space.RoleDP)},
		{"only dp priced", "tp=4,dp=16,mesh=tp:x;dp:y.z", "tp=4,dp=16,mesh=tp:x*2.y*2;dp:x*2.y*2.z",
			[]roleSet{bit(space.RoleDP)}, bit(space.RoleDP)},
		{"nothing priced", "tp=4,dp=16,mesh=tp:x;dp:y.z", "tp=4,dp=16,mesh=tp:x*2.y*2;dp:x*2.y*2.z",
			nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := parseStrategy(t, tc.from), parseStrategy(t, tc.to)
			var mr meshRoles
			if err := mr.resolve(in, &from); err != nil {
				t.Fatal(err)
			}
			for _, set := range tc.priced {
				mr.seconds(opAG, 1<<20, set)
			}
			var alt space.Mesh
			if err := alt.Resolve(c, &to); err != nil {
				t.Fatal(err)
			}
			if got, _ := mr.moveTo(&alt); got != tc.want {
				t.Errorf("moveTo moved roles %08b; want %08b", got, tc.want)
			}
			// After the move every priced set prices as a fresh resolve of
			// the new placement does, bit for bit.
			var fresh meshRoles
			if err := fresh.resolve(in, &to); err != nil {
				t.Fatal(err)
			}
			for _, set := range tc.priced {
				if got, want := mr.seconds(opAG, 1<<20, set), fresh.seconds(opAG, 1<<20, set); got != want {
					t.Errorf("set %08b after the move: %g s; a fresh resolve gives %g s", set, got, want)
				}
			}
		})
	}
}
