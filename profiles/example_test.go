package profiles_test

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
)

func ExampleParse() {
	c, err := profiles.Parse("2xv5p-256")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name, c.Chip.Name, c.Chips(), "chips")
	for _, a := range c.Axes {
		fmt.Printf("%s=%d %s wrap=%t %.3g B/s\n", a.Name, a.Size, a.Tier, a.Wraparound, a.BandwidthBytesPerS)
	}

	_, err = profiles.Parse("h100-12")
	fmt.Println(err)
	// Output:
	// 2xv5p-256 v5p 256 chips
	// x=4 ici wrap=true 9e+10 B/s
	// y=4 ici wrap=true 9e+10 B/s
	// z=8 ici wrap=true 9e+10 B/s
	// slice=2 dcn wrap=false 6.25e+09 B/s
	// profiles: h100-12 is not a whole number of 8-GPU NVLink domains; use h100-8 or h100-16
}

// A GB200 job that does not fill whole NVL72 racks: 128 GPUs are 32 trays
// of 4, placed as two segments of 16 trays, each inside one NVLink domain.
func ExampleParse_gb200() {
	c, err := profiles.Parse("gb200-128")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range c.Axes {
		fmt.Printf("%s=%d %s %.3g B/s\n", a.Name, a.Size, a.Tier, a.BandwidthBytesPerS)
	}
	_, err = profiles.Parse("gb200-66")
	fmt.Println(err)
	// Output:
	// gpu=64 nvlink 9e+11 B/s
	// node=2 infiniband 5e+10 B/s
	// profiles: gb200-66 is not a whole number of 4-GPU trays (an NVLink domain holds 18); use gb200-64 or gb200-68
}
