package profiles

// Tier names the kind of link a mesh axis runs over: the name clusters,
// YAML files and reports write (its string).
type Tier string

// Link tiers, fastest first. Each is a row of tierTable, which holds what
// the planner knows of it.
const (
	ICI        Tier = "ici"        // TPU inter-chip interconnect (torus)
	NVLink     Tier = "nvlink"     // GPU scale-up domain behind NVSwitch
	InfiniBand Tier = "infiniband" // GPU scale-out fabric (or RoCE)
	Ethernet   Tier = "ethernet"   // plain Ethernet scale-out
	DCN        Tier = "dcn"        // data-centre network between TPU slices
)

// Fabric is how a tier's links join the chips, which decides the cost
// model of its collectives (docs/formulas.md §4).
type Fabric uint8

// The fabrics.
const (
	// FabricRing: chip-to-chip links along the axis, a ring with
	// wraparound or else a line (TPU ICI), docs/formulas.md §4.3.
	FabricRing Fabric = iota
	// FabricSwitch: a switch joins every chip of the domain (NVLink
	// behind NVSwitch), docs/formulas.md §4.4.
	FabricSwitch
	// FabricNetwork: a network the chips reach through their share of a
	// NIC (InfiniBand, Ethernet, DCN), docs/formulas.md §4.4-4.5.
	FabricNetwork
)

// tierSpec is one row of the table of link tiers.
type tierSpec struct {
	tier Tier
	// rank orders the tiers by speed for the planner's rules of thumb
	// (package space keeps tp on the fastest rank of a cluster): 0 for the
	// fast scale-up tiers inside a node or slice (ICI, NVLink), then the
	// scale-out networks, slower ones higher.
	rank int
	// fabric is how the tier's links join the chips.
	fabric Fabric
	// latencySeconds and efficiency are the tier's link defaults
	// (efficiency.go), for chips without their own measurement and YAML
	// axes that leave them out; bandwidth depends on the chip (chips.go).
	latencySeconds, efficiency float64
}

// tierTable returns the link tiers, fastest first: the order of Tiers and
// of the list that errors offer.
func tierTable() []tierSpec {
	return []tierSpec{
		{tier: ICI, rank: 0, fabric: FabricRing, latencySeconds: iciLatencySeconds, efficiency: iciEfficiency},
		{tier: NVLink, rank: 0, fabric: FabricSwitch, latencySeconds: nvlinkLatencySeconds, efficiency: nvlinkEfficiency},
		{tier: InfiniBand, rank: 1, fabric: FabricNetwork, latencySeconds: networkLatencySeconds, efficiency: infinibandEfficiency},
		{tier: Ethernet, rank: 2, fabric: FabricNetwork, latencySeconds: networkLatencySeconds, efficiency: ethernetEfficiency},
		{tier: DCN, rank: 3, fabric: FabricNetwork, latencySeconds: dcnLatencySeconds, efficiency: dcnEfficiency},
	}
}

// tierSpecs is tierTable built once, for lookups: read-only.
var tierSpecs = tierTable()

// spec returns t's row, and false for an unknown tier.
func (t Tier) spec() (*tierSpec, bool) {
	for i := range tierSpecs {
		if tierSpecs[i].tier == t {
			return &tierSpecs[i], true
		}
	}
	return nil, false
}

// Valid reports whether t is one of the known tiers.
func (t Tier) Valid() bool {
	_, ok := t.spec()
	return ok
}

// Tiers returns the known link tiers, fastest first.
func Tiers() []Tier {
	out := make([]Tier, len(tierSpecs))
	for i, s := range tierSpecs {
		out[i] = s.tier
	}
	return out
}

// Rank orders link tiers by speed: 0 for the scale-up tiers (ICI, NVLink),
// 1 for InfiniBand, 2 for Ethernet, 3 for DCN; an unknown tier ranks with
// the slowest.
func (t Tier) Rank() int {
	if s, ok := t.spec(); ok {
		return s.rank
	}
	slowest := 0
	for _, s := range tierSpecs {
		slowest = max(slowest, s.rank)
	}
	return slowest
}

// Fabric returns how t's links join the chips; an unknown tier is a
// network.
func (t Tier) Fabric() Fabric {
	if s, ok := t.spec(); ok {
		return s.fabric
	}
	return FabricNetwork
}

// tierDefault gives a tier's latency and efficiency; its bandwidth is zero,
// since bandwidth depends on the chip.
func tierDefault(t Tier) (link, bool) {
	s, ok := t.spec()
	if !ok {
		return link{}, false
	}
	return link{t, 0, s.latencySeconds, s.efficiency}, true
}

// tierLink is tier t's link at bandwidth bw with the tier's defaults.
func tierLink(t Tier, bw float64) link {
	l, _ := tierDefault(t)
	l.bandwidthBytesPerS = bw
	return l
}

func tierList() string {
	var s []string
	for _, t := range Tiers() {
		s = append(s, string(t))
	}
	return orList(s)
}
