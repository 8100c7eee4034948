package space

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
)

// Limits is what a training framework can express (docs/frameworks.md):
// the strategies outside it are neither searched nor explained. The zero
// value limits nothing but recompute policies, which default to none,
// selective and full, and bf16 weights, which a framework opts into
// (BF16Weights).
type Limits struct {
	// Framework names the framework, for messages.
	Framework string
	// NoDims are the parallel dimensions it cannot use: their degree is 1.
	NoDims []Dim
	// Schedules are the pipeline schedules it runs; empty means all.
	Schedules []Schedule
	// Recomputes are its recompute policies (model.Policies names); empty
	// means any policy, the search trying none, selective and full unless
	// a fix pins another.
	Recomputes []string
	// RecomputeModules says it also takes Megatron-Core's
	// --recompute-modules lists as policies ("core_attn+mlp",
	// model.IsModuleList); the search does not enumerate them.
	RecomputeModules bool
	// Offloads are the host offloads it runs besides none
	// (Strategy.Offload); nil means every kind, with a fraction.
	Offloads []string
	// OffloadFraction says it offloads part of the optimizer state
	// (Megatron-Core's --optimizer-offload-fraction); only read when
	// Offloads is set.
	OffloadFraction bool
	// ActOffload says it keeps the saved activations of a model's first
	// layers in host memory (Strategy.ActOffload: Megatron-Core's
	// --cpu-offloading-num-layers); the search tries ActOffloadChoices on
	// strategies without a pipeline or recomputation.
	ActOffload bool
	// Zeros are the ZeRO stages it offers over pure data parallelism;
	// empty means 0, 1 and 2.
	Zeros []int
	// RequireSP says tensor parallelism runs only with sequence
	// parallelism.
	RequireSP bool
	// EqualChunks says an interleaved pipeline needs the layers to split
	// into pp·v equal chunks (Megatron-LM's virtual pipeline stages).
	EqualChunks bool
	// NoFP8 says the framework has no FP8 matmuls (precision=fp8).
	NoFP8 bool
	// FP4 says the framework's recipe runs precision=fp8's projections at
	// the chip's fp4 rate (model.FP8Recipe.FP4, NVFP4), which a chip
	// without an fp4 peak cannot run.
	FP4 bool
	// NoInt8 says the framework has no int8 matmuls (precision=int8, AQT).
	NoInt8 bool
	// NoA2AOverlap says the framework cannot run one micro-batch's MoE
	// all-to-all under another's compute outside DualPipe
	// (Strategy.A2AOverlap: Megatron-Core's overlap_moe_expert_parallel_comm).
	NoA2AOverlap bool
	// A2AOverlapScaleUp says the framework's EP overlap hides the
	// all-to-all within one NVLink domain too: its step runs as one CUDA
	// graph (cost.Comm.GraphedStep), with no host synchronisation between
	// the overlap's phases. Otherwise the search turns the overlap on only
	// where ep spans the scale-out network (Space's a2aAuto). search.Problem
	// sets it from its cost options' GraphedStep.
	A2AOverlapScaleUp bool
	// Dispatchers are the MoE token dispatchers (Strategy.Dispatcher) the
	// framework runs; nil: all of them.
	Dispatchers []string
	// SearchDispatchers says the search tries the framework's dispatchers
	// on each layout with ep > 1 (SearchedDispatchers) instead of the
	// planner's default: a choice a training recipe makes, as
	// Megatron-Core's --moe-token-dispatcher-type and
	// --moe-flex-dispatcher-backend.
	SearchDispatchers bool
	// ModuleLists are the Megatron-Core --recompute-modules lists
	// ("mla_up_proj+mlp", model.IsModuleList) the search tries beside
	// Recomputes on a model with experts, each where the model has every
	// module it names (SearchedModuleLists); needs RecomputeModules.
	ModuleLists []string
	// FSDPOverDCN lets the search put fsdp on the data-centre network
	// between TPU slices, which New's tier rule otherwise keeps for dp and
	// pp (MaxText's dcn_fsdp_parallelism runs it: the tpu-recipes' Llama 3.1
	// 405B on two v6e-256 slices). The planner sets it when nothing fits
	// without it.
	FSDPOverDCN bool
	// BF16Weights says the framework can keep the parameters, gradients
	// and Adam moments in bf16 with no fp32 copy (weights=bf16; MaxText's
	// weight_dtype); without it only fp32 weights run.
	BF16Weights bool
	// BF16Moments says the framework can keep Adam's two moments in bf16
	// beside fp32 master weights and gradients (weights=bf16-moments;
	// Megatron-Core's precision-aware optimizer); without it the moments
	// are fp32.
	BF16Moments bool
	// NoSplit says the framework cannot set the layers of a pipeline
	// stage (the first and last keys, Split): only the default split runs.
	NoSplit bool
	// GPUOnly says the framework runs on GPUs only: a TPU cluster (one
	// with ICI or DCN axes) is refused, naming Instead.
	GPUOnly bool
	// Instead names what runs where the framework does not (GPUOnly's
	// message), e.g. "--framework maxtext".
	Instead string
	// RankOrder is the order, innermost first, in which the framework
	// lays its parallel dimensions over the ranks (Megatron-LM: tp, cp,
	// dp, pp). Only layouts whose dimensions cover the cluster's axes,
	// innermost axis first, in that order are searched, so that the job
	// runs the mesh the row costed. Empty means any placement.
	RankOrder []Dim
	// EqualStages says every pipeline stage holds the same whole number
	// of layers: layers divide into pp x (stages per rank).
	EqualStages bool
	// ReplicateAlone says pure replication (dp > 1 with fsdp = cp = 1)
	// runs with no other parallel dimension (torchtitan's DDP is 1-D).
	ReplicateAlone bool
	// ExpertsFromShard says the experts are spread over the fsdp x cp
	// ranks and, for experts whole on every tensor rank (etp=1), the tp
	// ranks too: ep divides fsdp x cp (x tp) (torchtitan's efsdp mesh).
	ExpertsFromShard bool
	// ExpertsPerTier says the expert axis is carved, on each link tier
	// alike, out of the fsdp (else data) part of that tier (MaxText's
	// separate expert mesh axis).
	ExpertsPerTier bool
	// ExpertOrder are the dense dimensions whose ranks the framework's
	// expert grid lays the experts over, innermost first, after the
	// expert-tensor ranks (all of tp unless the experts are whole):
	// Megatron-LM's expert grid etp-ep-dp over tp, cp, dp; torchtitan's
	// etp, ep, efsdp over tp, cp, dp_shard. Only layouts whose ep lies
	// where that grid puts it are searched. Empty means any placement.
	ExpertOrder []Dim
	// FSDPAlone says fsdp shards over the whole data-parallel group: no
	// replication (dp > 1) beside fsdp > 1 (Megatron-FSDP's shard group is
	// the data-parallel group).
	FSDPAlone bool
	// NoZeroWithFSDP says ZeRO over dp cannot combine with fsdp (a
	// DeepSpeed config shards inside fsdp groups only: MiCS).
	NoZeroWithFSDP bool
	// StageMicrobatches says a pipeline's micro-batches divide over its
	// stages: MaxText asserts num_pipeline_microbatches % num_stages == 0
	// (AI-Hypercomputer/maxtext@e591f30cbbf217ed67ef71263ec0538239f9c3b8:
	// src/maxtext/configs/types.py:3612-3615).
	StageMicrobatches bool
	// WeightsOverCP says the framework shards the weights, their
	// gradients and the optimizer state over the cp ranks as well as the
	// fsdp ones whenever cp > 1 (torchtitan's fsdp mesh is dp_shard x cp,
	// MaxText's embed rule spans the context axis). The layer program
	// prices the dense weights that way (model.ProgramOptions.WeightsOverCP);
	// the experts' sharding over cp is not priced, so a mixture of experts
	// keeps cp = 1 under such a framework.
	WeightsOverCP bool
	// ExpertsFromFSDP says, with ExpertsPerTier, that the expert axis is
	// carved out of the fsdp part of each tier only: the framework shards
	// the dense weights over its expert axis too (MaxText's embed rule
	// spans fsdp x expert), which is the row's fsdp sharding only when
	// every expert chip is an fsdp chip.
	ExpertsFromFSDP bool
}

// checkPrecision reports a precision the framework cannot run.
func (l Limits) checkPrecision(p string) error {
	if l.NoFP8 && p == PrecisionFP8 {
		return fmt.Errorf("%s cannot express precision=fp8: it has no FP8 matmuls (use precision=bf16 or a framework with an FP8 recipe)", l.name())
	}
	if l.NoInt8 && p == PrecisionInt8 {
		return fmt.Errorf("%s cannot express precision=int8: it has no int8 matmuls (use precision=bf16 or --framework maxtext, whose AQT runs them)", l.name())
	}
	return nil
}

// checkWeights reports a weight dtype the framework cannot keep.
func (l Limits) checkWeights(w string) error {
	if w == WeightsBF16 && !l.BF16Weights {
		return fmt.Errorf("%s cannot express weights=bf16: it keeps an fp32 copy of every weight for the optimizer (use weights=fp32 or --framework maxtext, whose weight_dtype: bfloat16 runs it)", l.name())
	}
	if w == WeightsBF16Moments && !l.BF16Moments {
		return fmt.Errorf("%s cannot express weights=bf16-moments: its Adam keeps both moments like the parameters (use weights=fp32, or --framework megatron, whose precision-aware optimizer runs it)", l.name())
	}
	return nil
}

// noFP8 says a chip has no fp8 matmul speed-up, and what would work.
func noFP8(chip profiles.Chip) string {
	name := chip.Name
	if name == "" {
		name = "chip"
	}
	if chip.PeakInt8OPs > 0 {
		return fmt.Sprintf("the %s has no FP8 matmul speed-up (peak_fp8_flops is 0): use precision=int8 or bf16", name)
	}
	return fmt.Sprintf("the %s has no FP8 matmul speed-up (peak_fp8_flops is 0): use precision=bf16", name)
}

// noFP4 says a chip has no fp4 matmuls for an NVFP4 recipe.
func noFP4(chip profiles.Chip) string {
	name := chip.Name
	if name == "" {
		name = "chip"
	}
	return fmt.Sprintf("the framework's nvfp4 recipe runs fp4 matmuls, which the %s has not (peak_fp4_flops is 0): use a B200 or GB200 cluster, or a profile with an fp8 recipe", name)
}

// noInt8 says a chip has no int8 matmul speed-up.
func noInt8(chip string) string {
	if chip == "" {
		chip = "chip"
	}
	return fmt.Sprintf("the %s has no int8 matmul speed-up (peak_int8_ops is 0): use precision=bf16", chip)
}

// EightBitFix returns f for a cluster of chip: where f pins precision=fp8,
// the chip has no FP8 speed-up but an int8 one and the framework (l) runs
// int8 matmuls, the fix pins precision=int8 instead and note says so in one
// line ("v6e has no FP8: 8-bit matmuls planned as int8 (AQT)"); otherwise f
// itself and no note. Users name MaxText's quantization: int8 runs fp8.
func (l Limits) EightBitFix(f Fix, chip profiles.Chip) (Fix, string) {
	if f.Set["precision"] != PrecisionFP8 || chip.PeakFP8FLOPs > 0 || chip.PeakInt8OPs <= 0 || l.NoInt8 {
		return f, ""
	}
	g := Fix{Set: make(map[string]string, len(f.Set))}
	for k, v := range f.Set {
		g.Set[k] = v
	}
	g.Set["precision"] = PrecisionInt8
	return g, fmt.Sprintf("%s has no FP8: 8-bit matmuls planned as int8 (AQT)", chip.Name)
}

// SearchedRecomputes returns the recompute policies the search lists for
// the framework unasked: its Recomputes, or none, selective and full.
func (l Limits) SearchedRecomputes() []string {
	if len(l.Recomputes) > 0 {
		return l.Recomputes
	}
	return []string{RecomputeNone, RecomputeSelective, RecomputeFull}
}

// SearchedModuleLists returns the --recompute-modules lists of
// ModuleLists the search tries for model m: none on a model without
// experts (the lists come from mixture-of-experts recipes), else each list
// whose every module re-runs something in m (moduleApplies), so that no
// list re-runs what a shorter one does.
func (l Limits) SearchedModuleLists(m *model.Spec) []string {
	if !l.RecomputeModules || m.MoE == nil {
		return nil
	}
	var out []string
	for _, list := range l.ModuleLists {
		if !model.IsModuleList(list) {
			continue
		}
		all := true
		for _, mod := range strings.Split(list, "+") {
			all = all && moduleApplies(mod, m)
		}
		if all && !slices.Contains(out, list) {
			out = append(out, list)
		}
	}
	return out
}

// moduleApplies reports whether Megatron-Core's recompute module mod
// re-runs something in model m (model.modulePolicy gives what each
// re-runs): mla_up_proj multi-latent attention's up-projections; moe and
// moe_act the expert layers; shared_experts their shared experts; mlp the
// dense MLP of a layer without experts; layernorm the norms that are
// modules of their own, MLA's input norm and the norm before the experts
// (the others are fused into their linear layers); core_attn every
// attention core.
func moduleApplies(mod string, m *model.Spec) bool {
	switch mod {
	case model.ModuleMLAUpProj:
		return m.MLA != nil
	case model.ModuleMoE, model.ModuleMoEAct:
		return m.MoE != nil && m.MoELayers() > 0
	case model.ModuleSharedExperts:
		return m.MoE != nil && m.MoE.SharedExperts > 0
	case model.ModuleMLP:
		for _, t := range m.LayerTypes() {
			if !t.MoE && !t.NoMLP {
				return true
			}
		}
		return false
	case model.ModuleLayernorm:
		return m.MLA != nil || m.MoE != nil && m.MoELayers() > 0
	}
	return mod == model.ModuleCoreAttn
}

// SearchedDispatchers returns the MoE token dispatchers the search tries
// on a layout with ep > 1 on cluster c, nil for the default alone (no
// SearchDispatchers, or a TPU cluster). The flex dispatchers need an
// NVIDIA GPU of the Hopper generation or later (DeepEP's kernels need
// SM90: deepseek-ai/DeepEP@dd758caf451848bd150e1046af3d0a73e5fff38d
// README.md, Requirements); DeepEP's intranode kernels address at most 8
// NVLink peers and go over RDMA beyond them
// (csrc/kernels/legacy/compiled.cuh:5, LEGACY_NUM_MAX_NVL_PEERS), so on a
// larger NVLink domain (a GB200 NVL72 rack) HybridEP dispatches within it,
// as Megatron-Bridge's GB200 recipes set it
// (NVIDIA-NeMo/Megatron-Bridge@fd5c4737f6870910e65b65c23da82f73d65af29f
// (26.04-alpha.rc2) scripts/performance/configs/deepseek/deepseek_workload_base_configs.py:50);
// on 8-GPU nodes HybridEP is priced as DeepEP with more SMs (cost's
// a2aKernelSMs: 32 against 20) and never faster, so DeepEP alone is
// tried there. The plain AllToAll runs everywhere.
func (l Limits) SearchedDispatchers(c *profiles.Cluster) []string {
	if !l.SearchDispatchers || isTPU(c) {
		return nil
	}
	var out []string
	add := func(d string) {
		if l.Dispatchers == nil || slices.Contains(l.Dispatchers, d) {
			out = append(out, d)
		}
	}
	add(DispatcherAllToAll)
	if flexDispatchChip(&c.Chip) {
		if nvlinkDomain(c) > 8 {
			add(DispatcherHybridEP)
		} else {
			add(DispatcherDeepEP)
		}
	}
	return out
}

// flexDispatchChip reports whether chip runs DeepEP's and HybridEP's
// kernels: an NVIDIA GPU of the Hopper generation or later (SM90).
func flexDispatchChip(chip *profiles.Chip) bool {
	f := chip.Family
	return strings.HasPrefix(f, "nvidia-") && f != "nvidia-ampere"
}

// nvlinkDomain returns the GPUs of c's NVLink domain: the product of its
// NVLink axes' sizes (1 without one).
func nvlinkDomain(c *profiles.Cluster) int {
	n := 1
	for _, a := range c.Axes {
		if a.Tier == profiles.NVLink && a.Size > 0 {
			n *= a.Size
		}
	}
	return n
}

// allowsRecompute reports whether the framework runs policy r.
func (l Limits) allowsRecompute(r string) bool {
	if len(l.Recomputes) == 0 {
		return knownRecompute(r)
	}
	if l.RecomputeModules && model.IsModuleList(r) {
		return true
	}
	return slices.Contains(l.Recomputes, r)
}

// checkDispatcher says why the framework cannot run MoE token dispatcher
// d (Strategy.Dispatcher), nil when it can.
func (l Limits) checkDispatcher(d string) error {
	if d != "" && l.Dispatchers != nil && !slices.Contains(l.Dispatchers, d) {
		return fmt.Errorf("%s cannot express dispatcher=%s: it dispatches with %s", l.name(), d, strings.Join(l.Dispatchers, ", "))
	}
	return nil
}

// name is the framework's name for messages.
func (l Limits) name() string {
	if l.Framework == "" {
		return "the framework"
	}
	return l.Framework
}

// SplitsSequences reports whether the framework can spread one sequence
// over several chips: tensor, context or pipeline parallelism is open to
// it. One that cannot (DeepSpeed's ZeRO alone, eager PyTorch's DDP and
// FSDP) needs at least one whole sequence on every chip.
func (l Limits) SplitsSequences() bool {
	for _, d := range []Dim{TP, CP, PP} {
		if !slices.Contains(l.NoDims, d) {
			return true
		}
	}
	return false
}

// Check reports, in one sentence, the first part of s (for a model of
// layers layers) the framework cannot express, naming it and what would
// work; nil when it can express s.
func (l Limits) Check(s Strategy, layers int) error {
	for _, d := range l.NoDims {
		if s.Degree[d] > 1 {
			return fmt.Errorf("%s cannot express %s=%d: it has no %s parallelism (use %s=1 or another --framework)", l.name(), d, s.Degree[d], d, d)
		}
	}
	if len(l.Schedules) > 0 && s.Degree[PP] > 1 && !slices.Contains(l.Schedules, s.Schedule) {
		return fmt.Errorf("%s cannot express schedule=%s: it runs %s", l.name(), s.Schedule, scheduleList(l.Schedules))
	}
	if !l.allowsRecompute(s.Recompute) {
		if model.IsModuleList(s.Recompute) {
			return fmt.Errorf("%s cannot express recompute=%s: Megatron-Core's --recompute-modules lists are Megatron's own; its policies are %s", l.name(), s.Recompute, strings.Join(l.SearchedRecomputes(), ", "))
		}
		return fmt.Errorf("%s cannot express recompute=%s: its policies are %s", l.name(), s.Recompute, strings.Join(l.SearchedRecomputes(), ", "))
	}
	if err := l.checkOffload(s); err != nil {
		return err
	}
	if s.ActOffload > 0 && !l.ActOffload {
		return fmt.Errorf("%s cannot express act_offload=%d: it keeps every layer's activations in HBM (use act_offload=0 or --framework megatron)", l.name(), s.ActOffload)
	}
	if s.A2AOverlap && l.NoA2AOverlap {
		return fmt.Errorf("%s cannot express a2a_overlap: it overlaps the MoE all-to-all only under a DualPipe schedule, if at all", l.name())
	}
	if err := l.checkDispatcher(s.Dispatcher); err != nil {
		return err
	}
	if len(l.Zeros) > 0 && s.Degree[DP] > 1 && !slices.Contains(l.Zeros, s.Zero) {
		return fmt.Errorf("%s cannot express zero=%d over dp: it offers zero in %s (use fsdp for sharded states)", l.name(), s.Zero, intList(l.Zeros))
	}
	if pp := s.Degree[PP]; l.EqualChunks && pp > 1 && s.Schedule.Virtual() && layers%(pp*s.V) != 0 {
		return fmt.Errorf("%s cannot express schedule=%s,v=%d over pp=%d: its virtual stages need the %d layers in %d equal chunks", l.name(), s.Schedule, s.V, pp, layers, pp*s.V)
	}
	if l.NoSplit && s.Split.Explicit() {
		return fmt.Errorf("%s cannot express %s: it cannot set the layers of a pipeline stage (drop first and last for the default split)", l.name(), s.Split)
	}
	if l.RequireSP && s.Degree[TP] > 1 && !s.SP {
		return fmt.Errorf("%s cannot express tp=%d without sequence parallelism: use sp=true", l.name(), s.Degree[TP])
	}
	if err := l.checkPrecision(s.Precision); err != nil {
		return err
	}
	if err := l.checkWeights(s.Weights); err != nil {
		return err
	}
	if pp := s.Degree[PP]; l.EqualStages && pp > 1 && layers%(pp*s.VirtualStages()) != 0 {
		return fmt.Errorf("%s cannot express pp=%d with %d stages per rank: its stages need the %d layers in %d equal parts", l.name(), pp, s.VirtualStages(), layers, pp*s.VirtualStages())
	}
	if cp := s.Degree[CP]; l.WeightsOverCP && cp > 1 && s.Degree[EP] > 1 {
		return fmt.Errorf("%s cannot express cp=%d beside ep=%d as planned: it shards the experts over fsdp x cp, which the planner does not price (use cp=1)", l.name(), cp, s.Degree[EP])
	}
	if l.NoZeroWithFSDP && s.Zero > 0 && s.Degree[DP] > 1 && s.Degree[FSDP] > 1 {
		return fmt.Errorf("%s cannot express zero=%d over dp=%d next to fsdp=%d: it shards inside the fsdp groups only (use zero=0 or fsdp alone)", l.name(), s.Zero, s.Degree[DP], s.Degree[FSDP])
	}
	return nil
}

// CheckPlacement reports, in one sentence, why the framework cannot run
// the placed strategy s on cluster c as placed: a TPU cluster for a
// GPU-only framework, a placement outside its rank order, experts it
// cannot carve or replication it cannot combine; nil when it can.
func (l Limits) CheckPlacement(s Strategy, c profiles.Cluster) error {
	if err := l.checkCluster(&c); err != nil {
		return err
	}
	if s.FP8() && l.FP4 && c.Chip.PeakFP4FLOPs <= 0 {
		return fmt.Errorf("precision=fp8: %s", noFP4(c.Chip))
	}
	return l.checkLayout(&c, s.Degree, &s.Mesh, s.ExpertsWhole())
}

// Place places s on c as the framework lays its ranks out: the default
// placement in its RankOrder (Strategy.PlaceInOrder), the fill order when
// it has none.
func (l Limits) Place(s Strategy, c profiles.Cluster) (Strategy, error) {
	return s.PlaceInOrder(c, l.RankOrder)
}

// CheckCluster reports, in one sentence, a cluster the framework does not
// run on (a GPU-only framework on TPUs), naming what would; nil when it
// runs there.
func (l Limits) CheckCluster(c profiles.Cluster) error { return l.checkCluster(&c) }

// isTPU reports whether c is a TPU cluster: one with ICI or DCN axes.
func isTPU(c *profiles.Cluster) bool {
	for _, a := range c.Axes {
		if a.Tier == profiles.ICI || a.Tier == profiles.DCN {
			return true
		}
	}
	return false
}

// checkCluster reports a cluster the framework cannot run on.
func (l Limits) checkCluster(c *profiles.Cluster) error {
	if l.GPUOnly && isTPU(c) {
		instead := ""
		if l.Instead != "" {
			instead = ": use " + l.Instead
		}
		return fmt.Errorf("%s runs on GPUs only and %s is a TPU cluster (%s chips)%s", l.name(), c.Name, c.Chip.Name, instead)
	}
	return nil
}

// checkLayout reports a layout (degrees deg placed on mesh, experts whole
// on every tensor rank when whole) the framework cannot run as placed.
func (l Limits) checkLayout(c *profiles.Cluster, deg Degrees, mesh *[NumDims][]Share, whole bool) error {
	if l.FSDPAlone && deg[FSDP] > 1 && deg[DP] > 1 {
		return fmt.Errorf("%s cannot express dp=%d beside fsdp=%d: its fsdp shards over the whole data-parallel group (use fsdp=%d alone)", l.name(), deg[DP], deg[FSDP], deg[DP]*deg[FSDP])
	}
	if l.ReplicateAlone && deg[DP] > 1 && deg[FSDP] == 1 && deg[CP] == 1 && (deg[TP] > 1 || deg[PP] > 1 || deg[EP] > 1) {
		return fmt.Errorf("%s cannot express dp=%d next to tp, pp or ep without fsdp or cp: its pure replication (DDP) is one-dimensional (use fsdp)", l.name(), deg[DP])
	}
	if ep := deg[EP]; l.ExpertsFromShard && ep > 1 {
		from := deg[FSDP] * deg[CP]
		if whole {
			from *= deg[TP]
		}
		if from%ep != 0 {
			return fmt.Errorf("%s cannot express ep=%d: it spreads the experts over the fsdp x cp%s ranks (%d), which ep must divide", l.name(), ep, map[bool]string{true: " x tp"}[whole], from)
		}
	}
	if ep := deg[EP]; l.ExpertsPerTier && ep > 1 {
		fast, slow := tierParts(c, mesh)
		for _, part := range []*Degrees{&fast, &slow} {
			e := part[EP]
			if e > 1 && l.ExpertsFromFSDP && part[FSDP]%e != 0 {
				return fmt.Errorf("%s cannot express ep=%d as placed: it shards the dense weights over its fsdp x expert axes, so on each link tier the expert axis must be carved out of the fsdp axis (the row's fsdp), not the data axis", l.name(), ep)
			}
			if e > 1 && part[FSDP]%e != 0 && part[DP]%e != 0 {
				return fmt.Errorf("%s cannot express ep=%d as placed: on each link tier its expert axis is carved out of the fsdp or the data axis alone", l.name(), ep)
			}
		}
	}
	if len(l.RankOrder) > 0 {
		if err := l.checkRankOrder(c, deg, mesh); err != nil {
			return err
		}
	}
	if len(l.ExpertOrder) > 0 && deg[EP] > 1 {
		if err := l.checkExpertOrder(c, deg, mesh, whole); err != nil {
			return err
		}
	}
	return nil
}

// checkExpertOrder reports an ep placement other than the one the
// framework's expert grid gives: the ep ranks that follow the
// expert-tensor ones along ExpertOrder, each dimension's shares innermost
// axis first.
func (l Limits) checkExpertOrder(c *profiles.Cluster, deg Degrees, mesh *[NumDims][]Share, whole bool) error {
	want := map[string]int{}
	need := deg[EP]
	for _, d := range l.ExpertOrder {
		if d == TP && !whole {
			continue // the expert-tensor ranks: all of tp
		}
		shares := slices.Clone(mesh[d])
		slices.SortStableFunc(shares, func(a, b Share) int { return axisIndex(c, a.Axis) - axisIndex(c, b.Axis) })
		for _, sh := range shares {
			if need == 1 || sh.Size <= 1 {
				continue
			}
			take := sh.Size
			if take > need {
				if take%need != 0 {
					return fmt.Errorf("%s cannot express ep=%d here: its expert grid would split the %s share %s*%d", l.name(), deg[EP], d, sh.Axis, sh.Size)
				}
				take = need
			}
			if _, ok := want[sh.Axis]; !ok {
				want[sh.Axis] = 1
			}
			want[sh.Axis] *= take
			need /= take
		}
	}
	got := map[string]int{}
	for _, sh := range mesh[EP] {
		if sh.Size > 1 {
			got[sh.Axis] = sh.Size
		}
	}
	if need != 1 || !maps.Equal(want, got) {
		return fmt.Errorf("%s cannot place ep=%d as %s: its expert grid lays the experts over the %s ranks after the expert-tensor ones (%s)", l.name(), deg[EP], shareText(got, c), dimList(l.ExpertOrder), shareText(want, c))
	}
	return nil
}

// shareText writes per-axis sizes as "gpu*2.node*4", innermost axis first.
func shareText(m map[string]int, c *profiles.Cluster) string {
	var parts []string
	for _, a := range c.Axes {
		if n := m[a.Name]; n > 1 {
			parts = append(parts, fmt.Sprintf("%s*%d", a.Name, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ".")
}

// tierParts splits each degree of mesh into its part on fast links (ICI,
// NVLink) and its part on the others.
func tierParts(c *profiles.Cluster, mesh *[NumDims][]Share) (fast, slow Degrees) {
	for d := range NumDims {
		fast[d], slow[d] = 1, 1
		for _, sh := range mesh[d] {
			a, ok := c.Axis(sh.Axis)
			if !ok || sh.Size < 1 {
				continue
			}
			if a.Tier == profiles.ICI || a.Tier == profiles.NVLink {
				fast[d] *= sh.Size
			} else {
				slow[d] *= sh.Size
			}
		}
	}
	return fast, slow
}

// checkRankOrder reports a placement the framework's rank order cannot
// produce: its ranks fill the cluster's axes innermost axis first, so the
// dimensions on an outer axis may not come before those on an inner one
// in the rank order. Dimensions sharing one axis may lie in either order:
// a link tier's groups cost the same whichever is inner.
func (l Limits) checkRankOrder(c *profiles.Cluster, deg Degrees, mesh *[NumDims][]Share) error {
	prevHi, prevDim := -1, Dim(-1)
	for _, a := range c.Axes {
		lo, hi, loDim, hiDim := len(l.RankOrder), -1, Dim(-1), Dim(-1)
		for _, d := range l.RankOrder {
			if deg[d] <= 1 || !slices.ContainsFunc(mesh[d], func(sh Share) bool { return sh.Axis == a.Name && sh.Size > 1 }) {
				continue
			}
			pos := slices.Index(l.RankOrder, d)
			if pos < lo {
				lo, loDim = pos, d
			}
			if pos > hi {
				hi, hiDim = pos, d
			}
		}
		if hi < 0 {
			continue
		}
		if lo < prevHi {
			return fmt.Errorf("%s cannot place %s on axis %s outside %s, which lies on an inner axis: it orders its ranks %s from the innermost", l.name(), loDim, a.Name, prevDim, dimList(l.RankOrder))
		}
		prevHi, prevDim = hi, hiDim
	}
	return nil
}

// dimList joins dimension names.
func dimList(ds []Dim) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return strings.Join(out, ", ")
}

// scheduleList joins schedule names.
func scheduleList(ss []Schedule) string {
	var out []string
	for _, s := range ss {
		out = append(out, string(s))
	}
	return strings.Join(out, ", ")
}

// intList joins integers.
func intList(xs []int) string {
	var out []string
	for _, x := range xs {
		out = append(out, strconv.Itoa(x))
	}
	return strings.Join(out, ", ")
}

// validateLimits reports recompute names that no policy has.
func (l Limits) validate() error {
	for _, r := range l.Recomputes {
		if _, ok := model.LookupPolicy(r); !ok {
			return fmt.Errorf("space: %s's recompute policy %q is unknown: the policies are %s", l.name(), r, strings.Join(model.PolicyNames(), ", "))
		}
	}
	for _, r := range l.ModuleLists {
		// In the planner's module order, the name the cost model keys the
		// list's policy by (model.ModulePolicies).
		if p, ok := model.LookupPolicy(r); !ok || !model.IsModuleList(r) || p.Name != r {
			return fmt.Errorf("space: %s's recompute module list %q is not a --recompute-modules list in the planner's order (%q)", l.name(), r, p.Name)
		}
	}
	return nil
}

// checkOffload reports a host offload the framework does not run.
func (l Limits) checkOffload(s Strategy) error {
	if s.Offload == "" || l.Offloads == nil {
		return nil
	}
	if !slices.Contains(l.Offloads, s.Offload) {
		if len(l.Offloads) == 0 {
			return fmt.Errorf("%s cannot express offload=%s: it keeps every model state in HBM", l.name(), s.Offload)
		}
		return fmt.Errorf("%s cannot express offload=%s: it offloads %s only", l.name(), s.Offload, strings.Join(l.Offloads, ", "))
	}
	if s.OffloadFraction > 0 && !l.OffloadFraction {
		return fmt.Errorf("%s cannot express offload_fraction=%g: it offloads the whole optimizer state", l.name(), s.OffloadFraction)
	}
	return nil
}
