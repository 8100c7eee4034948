package runs

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/space"
)

// maxLayoutBytes bounds a pipeline layout string and its unrolled form: a
// layout of more virtual stages or layers than any model has is refused.
const maxLayoutBytes = 4096

// The unrolling rules of Megatron-Core's layout strings, in the order it
// applies them: a group in parentheses repeated, then one character
// repeated (NVIDIA/Megatron-LM@d98e8a64
// megatron/core/transformer/pipeline_parallel_layer_layout.py,
// PipelineParallelLayerLayout.parse_str_to_list).
var (
	layoutGroup = regexp.MustCompile(`\(([^)]+)\)\*(\d+)`)
	layoutChar  = regexp.MustCompile(`(.)\*(\d+)`)
)

// pipelineLayout is a Megatron-Core pipeline layout
// (--pipeline-model-parallel-layout) read into what the planner prices: the
// decoder layers of each pipeline rank and whether the last virtual stage
// trains a multi-token-prediction module.
type pipelineLayout struct {
	rankLayers []int
	mtp        bool
}

// parseLayout reads a Megatron-Core pipeline layout over pp ranks of vp
// virtual stages each: the pp·vp virtual stages in order, "|" between them,
// E the embedding, t a decoder layer, m a multi-token-prediction module, L
// the loss, "X*k" k copies of the character X and "(...)*k" k copies of a
// group, commas cosmetic (parse_str_to_list, above); virtual stage i runs
// on rank i mod pp (space.Split.VisitChunks). It is false for a string
// that does not parse, unrolls beyond maxLayoutBytes or has another number
// of virtual stages.
func parseLayout(layout string, pp, vp int) (pipelineLayout, bool) {
	s := strings.ReplaceAll(strings.TrimSpace(layout), ",", "")
	if s == "" || len(s) > maxLayoutBytes || pp < 1 || vp < 1 {
		return pipelineLayout{}, false
	}
	tooLong := false
	unroll := func(re *regexp.Regexp) {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			k, err := strconv.Atoi(sub[2])
			if err != nil || k < 0 || len(s)+k*len(sub[1]) > maxLayoutBytes {
				tooLong = true
				return ""
			}
			return strings.Repeat(sub[1], k)
		})
	}
	unroll(layoutGroup)
	unroll(layoutChar)
	if tooLong || len(s) > maxLayoutBytes {
		return pipelineLayout{}, false
	}
	stages := strings.Split(s, "|")
	if len(stages) != pp*vp {
		return pipelineLayout{}, false
	}
	l := pipelineLayout{rankLayers: make([]int, pp)}
	for i, st := range stages {
		for _, c := range st {
			switch c {
			case 't':
				l.rankLayers[i%pp]++
			case 'm':
				l.mtp = true
			case 'E', 'L':
			default:
				return pipelineLayout{}, false
			}
		}
	}
	return l, true
}

// split returns the space.Split that gives l's ranks their decoder layers
// (first and last set where they differ from the middle ranks'), and false
// when the middle ranks differ among themselves, which a Split cannot
// express.
func (l pipelineLayout) split() (space.Split, bool) {
	pp := len(l.rankLayers)
	if pp < 2 {
		return space.Split{}, pp == 1
	}
	first, last := l.rankLayers[0], l.rankLayers[pp-1]
	if pp == 2 {
		return space.Split{First: first, Last: last}, true
	}
	mid := l.rankLayers[1]
	for _, n := range l.rankLayers[1 : pp-1] {
		if n != mid {
			return space.Split{}, false
		}
	}
	var sp space.Split
	if first != mid {
		sp.First = first
	}
	if last != mid {
		sp.Last = last
	}
	return sp, true
}

// notedLayout finds a pipeline layout a row's notes state ("PP layout
// Et|(tt|)*30L = 32 virtual stages").
var notedLayout = regexp.MustCompile(`PP layout ([EtmL|()*0-9,]+)`)

// The DeepSeek-V3 pipeline layouts of Megatron-Bridge's performance
// configs (NVIDIA-NeMo/Megatron-Bridge, scripts/performance and
// src/megatron/bridge/recipes/deepseek/deepseek_v3.py's layout_map, which
// the scripts apply when a config sets no pp_layout): the embedding with
// four decoder layers, fourteen stages of four, and the last layer with
// the multi-token-prediction module and the loss, over 16 virtual stages
// (layout_map's (4,4), (8,2) and (16,1), and GB300's pp_layout at pp 2, v
// 8); at pp 8 without virtual stages the embedding with eight, six stages
// of eight and five (layout_map's (8,1)); and 25.09's H100 layout over 32
// virtual stages (v0.1.0rc3 scripts/performance/run_script.py:72).
const (
	bridgeDSv3Layout16 = "Et*4|(t*4|)*14tmL"
	bridgeDSv3Layout8  = "Et*8|(t*8|)*6t*5mL"
	bridgeDSv3Layout32 = "Et|(tt|)*30mL"
)

// layoutText returns the pipeline layout row r ran with, "" where none is
// known: the one its notes state (the Megatron-LM DeepSeek-V3 GB200 guide's
// "Et|(tt|)*30L", NVIDIA/Megatron-LM@eb0783b6
// docs/discussions/deepseek-v3-gb200-optimization), else, for a
// Megatron-Bridge performance-summary DeepSeek-V3 row, its release's
// (bridgeDSv3Layout16 and the others above: 25.09 on H100 the 32-stage
// one; pp 8 without virtual stages the 8-stage one; else the 16-stage one,
// which parses only at pp·v = 16, so a row of another shape, 25.11's pp 8,
// v 4 on GB200, which no config of its release has, keeps the default
// split).
func (r Run) layoutText() string {
	if m := notedLayout.FindStringSubmatch(r.Notes); m != nil {
		return m[1]
	}
	release, key, ok := r.bridgePerfRow()
	if !ok || !strings.HasPrefix(key, "dsv3/") {
		return ""
	}
	switch {
	case release == "25.09 NeMo Container" && key == "dsv3/h100":
		return bridgeDSv3Layout32
	case r.PP == 8 && r.InterleaveV <= 1:
		return bridgeDSv3Layout8
	}
	return bridgeDSv3Layout16
}

// pipelineLayout returns the pipeline layout row r ran with (layoutText)
// read over its pipeline, false where none is known or it does not fit the
// row's pp, virtual stages and (where the row gives them) layers.
func (r Run) pipelineLayout() (pipelineLayout, bool) {
	text := r.layoutText()
	if text == "" || r.PP < 2 {
		return pipelineLayout{}, false
	}
	l, ok := parseLayout(text, r.PP, max(r.InterleaveV, 1))
	n := 0
	for _, c := range l.rankLayers {
		n += c
	}
	if !ok || r.Layers > 0 && n != r.Layers {
		return pipelineLayout{}, false
	}
	return l, true
}
