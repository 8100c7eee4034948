// Package profiles describes accelerators and the clusters built from them:
// peak FLOP/s and HBM per chip, and the device mesh as a list of axes, each
// with a size, a link tier, a per-hop latency, a bandwidth and an efficiency.
//
// # Bandwidth convention
//
// Axis.BandwidthBytesPerS is always one direction, per chip, and its meaning
// depends on the tier:
//
//   - ici: one ICI link one way, towards one neighbour along the axis
//     (v5p 9e10 B/s). An axis with Wraparound closes into a ring, so a
//     collective along it uses both directions, 2 x BandwidthBytesPerS; an
//     axis without one uses a single direction.
//   - nvlink: the GPU's whole NVLink egress one way (H100 450e9 B/s), since
//     NVSwitch lets a GPU drive all its links towards any peer.
//   - infiniband, ethernet: the GPU's own NIC one way (400 Gb/s NDR = 50e9 B/s).
//   - dcn: the chip's share of its host's data-centre NICs one way
//     (v5p 6.25e9 B/s).
//
// Axis.Efficiency is the fraction of that bandwidth large collectives reach;
// Axis.LatencySeconds is the cost of one ring step (one hop). Every default
// figure cites docs/hardware.md in the shared reference; the source keys in square
// brackets ([SB-TPU], [MLE-NET], ...) are that file's.
//
// # Cluster names
//
// Parse accepts the names of the command-line contract:
//
//   - TPU v4 and v5p (and tpu7x): vN-C where C counts TensorCores, two per
//     chip, as Google Cloud does: v5p-256 is 128 chips in a 4x4x8 torus.
//   - TPU v5e (alias v5litepod) and v6e: vN-C where C counts chips, one core
//     each: v5e-256 is a 16x16 torus.
//   - A prefix Kx joins K identical slices over the data-centre network:
//     2xv5p-256 is 256 chips, with an outer axis "slice" of size 2, tier dcn.
//   - GPUs: CHIP-N where N counts GPUs, e.g. h100-1024, a100-40gb-64,
//     gb200-144. N must be a whole number of nodes, or a part of one node
//     that divides it (h100-1, -2, -4); h100-12 is an error. A node is the
//     whole NVLink domain on DGX/HGX machines (8 GPUs) and one 4-GPU compute
//     tray of a 72-GPU GB200 NVL72 domain. A job that fits one domain uses
//     one (gb200-64 is 16 trays of one domain); a larger one is cut into
//     equal segments of whole nodes, each inside one domain, of the most
//     nodes up to a domain's worth that divide the job's nodes, as
//     Megatron-Bridge's GB200 launcher asks Slurm to place it (--segment,
//     scripts/performance/utils/executors.py): gb200-128 is 2 domains of 64
//     GPUs, gb200-256 4 of 64, gb200-144 2 of 72.
//
// TPU axes are named x, y and z, innermost first, in the order of Google's
// topology string: 4x4x8 is x=4, y=4, z=8. GPU axes are gpu (NVLink, inside a
// domain) and node (InfiniBand, between domains). An axis of size 1 is left
// out (v4-8, 2x2x1, has axes x and y; h100-8 has only gpu), but a cluster
// always keeps at least one axis.
//
// # Custom clusters
//
// ParseYAML reads a cluster written out as YAML, with the same keys as the
// struct tags of Cluster, Chip, Axis and Efficiency; Load takes either a name
// or a .yaml/.yml path. yaml.Marshal of a Cluster gives a file that ParseYAML
// reads back to an equal Cluster, so fitted profiles can be saved and reused.
package profiles
