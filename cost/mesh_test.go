package cost

import (
	"fmt"
	"reflect"
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
		for _, named := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/named=%v", tc.name, named), func(t *testing.T) {
				from, to := parseStrategy(t, tc.from), parseStrategy(t, tc.to)
				// Named, the placements are kept (placedMeshes): the move
				// there and back and there again takes the mesh and the
				// models of the second and third from them.
				var pm *placedMeshes
				fromName, toName := int64(-1), int64(-1)
				if named {
					pm, fromName, toName = new(placedMeshes), 7, 9
				}
				var mr meshRoles
				if err := mr.resolve(in, &from, pm, fromName); err != nil {
					t.Fatal(err)
				}
				for _, set := range tc.priced {
					mr.seconds(opAG, 1<<20, set)
				}
				var alt space.Mesh
				for i, next := range []struct {
					s    space.Strategy
					name int64
				}{{to, toName}, {from, fromName}, {to, toName}} {
					pl, err := pm.resolve(&alt, in, &next.s, next.name)
					if err != nil {
						t.Fatal(err)
					}
					if named && pl == nil {
						t.Fatalf("move %d: the named placement %d was not kept", i, next.name)
					}
					if got, _ := mr.moveTo(&alt, pl); got != tc.want {
						t.Errorf("move %d moved roles %08b; want %08b", i, got, tc.want)
					}
					// After the move every priced set prices as a fresh
					// resolve of the new placement does, bit for bit.
					var fresh meshRoles
					if err := fresh.resolve(in, &next.s, nil, -1); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(mr.Mesh.Groups, fresh.Mesh.Groups) || mr.Mesh.Degrees != fresh.Mesh.Degrees {
						t.Errorf("move %d: the mesh differs from a fresh resolve", i)
					}
					for _, set := range tc.priced {
						if got, want := mr.seconds(opAG, 1<<20, set), fresh.seconds(opAG, 1<<20, set); got != want {
							t.Errorf("move %d, set %08b: %g s; a fresh resolve gives %g s", i, set, got, want)
						}
					}
				}
			})
		}
	}
}
