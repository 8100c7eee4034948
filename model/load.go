package model

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/text"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load returns the model named by arg, as a user passes it to --model: a
// preset name (see Preset), a YAML file in the contract's form (.yaml or
// .yml), or a Hugging Face config.json (.json, or any other file whose first
// non-blank character is '{'). A file's Spec without a name is named after
// the file: its base name without extension, or, for config.json, its
// directory's name. A bare name (no path separator and no .json, .yaml or
// .yml extension) is looked up as a preset before as a file. The result is
// normalised and valid.
func Load(arg string) (Spec, error) {
	s, _, err := LoadWarnings(arg)
	return s, err
}

// LoadWarnings is Load that also returns the warnings of reading a
// config.json whose model_type the planner does not know (ParseHFWarnings):
// the caller shows them, so that no assumption is made silently.
func LoadWarnings(arg string) (Spec, []string, error) {
	return load(arg)
}

// load is LoadWarnings.
func load(arg string) (Spec, []string, error) {
	ext := strings.ToLower(filepath.Ext(arg))
	isFileLike := strings.ContainsAny(arg, `/\`) || ext == ".json" || ext == ".yaml" || ext == ".yml"
	if !isFileLike {
		if s, err := Preset(arg); err == nil {
			return s, nil, nil
		}
	}
	info, statErr := os.Stat(arg)
	if statErr != nil || info.IsDir() {
		if isFileLike {
			if statErr != nil {
				return Spec{}, nil, fmt.Errorf("model: cannot read model file %q: %v", arg, unwrapPathError(statErr))
			}
			return Spec{}, nil, fmt.Errorf("model: %q is a directory, not a model file; pass its config.json", arg)
		}
		_, err := Preset(arg)
		return Spec{}, nil, err
	}
	data, err := bounded.ReadFile(arg, bounded.ConfigBytes)
	if err != nil {
		return Spec{}, nil, fmt.Errorf("model: cannot read model file %q: %v", arg, err)
	}

	var s Spec
	var problems, warnings []string
	switch {
	case ext == ".json" || ext != ".yaml" && ext != ".yml" && looksLikeJSON(data):
		s, warnings, problems = parseHF(data)
	default:
		s, problems = parseYAML(data)
	}
	if len(problems) == 0 && s.Name == "" {
		s.Name = nameFromPath(arg)
	}
	if len(problems) == 0 {
		problems = s.problems()
	}
	if err := joinProblems("model: "+arg+": ", problems); err != nil {
		return Spec{}, nil, err
	}
	s.Normalize()
	return s, warnings, nil
}

// unwrapPathError drops the operation and path of an *os.PathError, which the
// caller's message already names.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// looksLikeJSON reports whether data's first non-blank byte opens a JSON object.
func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '{'
}

// nameFromPath names a model after its file: "x/llama.yaml" is "llama" and
// "x/Meta-Llama-3-8B/config.json" is "Meta-Llama-3-8B".
func nameFromPath(path string) string {
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if strings.EqualFold(name, "config") {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != string(filepath.Separator) && dir != "" {
			return dir
		}
	}
	return name
}

// yamlKeys returns the top-level keys of the YAML model form.
func yamlKeys() []string {
	return []string{"name", "description", "layers", "hidden", "heads", "kv_heads", "head_dim",
		"ffn_hidden", "ffn", "vocab", "seq_len", "tied_embeddings", "norm", "bias", "moe", "mla", "mtp_layers",
		"window", "chunk", "pattern", "qkv_bias", "out_bias", "qk_norm", "post_norms", "logit_softcap", "yarn", "alibi", "ssm", "attn_gate", "shared"}
}

// ssmKeys returns the keys of the YAML form's ssm mapping.
func ssmKeys() []string {
	return []string{"value_heads", "value_head_dim", "key_heads", "key_dim", "conv_kernel", "chunk", "conv_bias", "proj_bias", "no_gated_norm", "dt_rank"}
}

// sharedKeys returns the keys of the YAML form's shared mapping.
func sharedKeys() []string {
	return []string{"blocks", "adapter_rank", "attn_adapters"}
}

// mlaKeys returns the keys of the YAML form's mla mapping.
func mlaKeys() []string {
	return []string{"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}
}

// moeKeys returns the keys of the YAML form's moe mapping.
func moeKeys() []string {
	return []string{"experts", "top_k", "expert_ffn_hidden", "shared_experts", "shared_ffn_hidden",
		"first_dense_layers", "capacity_factor", "groups", "group_limit", "imbalance", "bias", "swiglu_limit"}
}

// ParseYAML reads a model in the contract's YAML form. It is strict: an
// unknown or repeated key, or a value of the wrong type, is an error naming
// the key, its line and, for an unknown key, the nearest known one. The
// result is normalised and valid; every problem found is reported, joined.
func ParseYAML(data []byte) (Spec, error) {
	s, problems := parseYAML(data)
	if len(problems) == 0 {
		problems = s.problems()
	}
	if err := joinProblems("model: ", problems); err != nil {
		return Spec{}, err
	}
	s.Normalize()
	return s, nil
}

// parseYAML decodes data into a Spec, lowercasing ffn and norm, without
// validating the numbers.
func parseYAML(data []byte) (s Spec, problems []string) {
	root, err := bounded.YAML(data)
	if err != nil {
		if pe, ok := errors.AsType[*bounded.ProblemsError](err); ok {
			return Spec{}, pe.Problems
		}
		return Spec{}, []string{"malformed YAML: " + text.Squash(strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return Spec{}, []string{"the YAML model file is empty; it needs at least layers, hidden, heads and vocab"}
		}
		root = root.Content[0]
	}
	root = resolveAlias(root)
	if root == nil || root.Kind == 0 || isNull(root) {
		return Spec{}, []string{"the YAML model file is empty; it needs at least layers, hidden, heads and vocab"}
	}
	if root.Kind != yaml.MappingNode {
		return Spec{}, []string{fmt.Sprintf("the YAML model at line %d is a %s; it must be a mapping of keys such as layers and hidden", root.Line, kindName(root))}
	}
	d := yamlDecoder{}
	d.mapping(root, "", yamlKeys(), func(key string, v *yaml.Node) {
		switch key {
		case "name":
			s.Name = d.str(key, v)
		case "description":
			s.Description = d.str(key, v)
		case "layers":
			s.Layers = d.int(key, v)
		case "hidden":
			s.Hidden = d.int(key, v)
		case "heads":
			s.Heads = d.int(key, v)
		case "kv_heads":
			s.KVHeads = d.optionalInt(key, v, "heads")
		case "head_dim":
			s.HeadDim = d.optionalInt(key, v, "hidden / heads")
		case "ffn_hidden":
			s.FFNHidden = d.optionalInt(key, v, "4 * hidden")
		case "ffn":
			s.FFN = strings.ToLower(strings.TrimSpace(d.str(key, v)))
		case "vocab":
			s.Vocab = d.int(key, v)
		case "seq_len":
			s.SeqLen = d.optionalInt(key, v, strconv.Itoa(DefaultSeqLen))
		case "tied_embeddings":
			s.TiedEmbeddings = d.bool(key, v)
		case "norm":
			s.Norm = strings.ToLower(strings.TrimSpace(d.str(key, v)))
		case "bias":
			s.Bias = d.bool(key, v)
		case "qkv_bias":
			s.QKVBias = d.bool(key, v)
		case "out_bias":
			s.OutBias = d.bool(key, v)
		case "qk_norm":
			s.QKNorm = d.bool(key, v)
		case "attn_gate":
			s.AttnGate = d.bool(key, v)
		case "post_norms":
			s.PostNorms = d.bool(key, v)
		case "logit_softcap":
			s.LogitSoftcap = d.float(key, v)
		case "yarn":
			s.YaRN = d.bool(key, v)
		case "alibi":
			s.ALiBi = d.bool(key, v)
		case "moe":
			m := &MoE{}
			d.section(v, "moe", "experts, top_k and expert_ffn_hidden", moeKeys(), func() { s.MoE = m }, func(key string, v *yaml.Node) {
				switch key {
				case "experts":
					m.Experts = d.int("moe."+key, v)
				case "top_k":
					m.TopK = d.int("moe."+key, v)
				case "expert_ffn_hidden":
					m.ExpertFFNHidden = d.int("moe."+key, v)
				case "shared_experts":
					m.SharedExperts = d.int("moe."+key, v)
				case "shared_ffn_hidden":
					m.SharedFFNHidden = d.optionalInt("moe."+key, v, "expert_ffn_hidden")
				case "first_dense_layers":
					m.FirstDenseLayers = d.int("moe."+key, v)
				case "capacity_factor":
					m.CapacityFactor = d.float("moe."+key, v)
				case "groups":
					m.Groups = d.int("moe."+key, v)
				case "group_limit":
					m.GroupLimit = d.int("moe."+key, v)
				case "imbalance":
					m.Imbalance = d.float("moe."+key, v)
				case "bias":
					m.Bias = d.bool("moe."+key, v)
				case "swiglu_limit":
					m.SwiGLULimit = d.float("moe."+key, v)
				}
			})
		case "mla":
			m := &MLA{}
			d.section(v, "mla", "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim", mlaKeys(), func() { s.MLA = m }, func(key string, v *yaml.Node) {
				switch key {
				case "q_lora_rank":
					m.QLoRARank = d.int("mla."+key, v)
				case "kv_lora_rank":
					m.KVLoRARank = d.int("mla."+key, v)
				case "qk_nope_head_dim":
					m.QKNopeHeadDim = d.int("mla."+key, v)
				case "qk_rope_head_dim":
					m.QKRopeHeadDim = d.int("mla."+key, v)
				case "v_head_dim":
					m.VHeadDim = d.int("mla."+key, v)
				}
			})
		case "mtp_layers":
			s.MTPLayers = d.int(key, v)
		case "window":
			s.Window = d.optionalInt(key, v, "no sliding-window layers")
		case "chunk":
			s.Chunk = d.optionalInt(key, v, "no chunked-attention layers")
		case "pattern":
			s.Pattern = d.strings(key, v)
		case "ssm":
			m := &SSM{}
			d.section(v, "ssm", "value_heads, value_head_dim, key_heads, key_dim and conv_kernel", ssmKeys(), func() { s.SSM = m }, func(key string, v *yaml.Node) {
				switch key {
				case "value_heads":
					m.ValueHeads = d.int("ssm."+key, v)
				case "value_head_dim":
					m.ValueHeadDim = d.int("ssm."+key, v)
				case "key_heads":
					m.KeyHeads = d.int("ssm."+key, v)
				case "key_dim":
					m.KeyDim = d.int("ssm."+key, v)
				case "conv_kernel":
					m.ConvKernel = d.int("ssm."+key, v)
				case "chunk":
					m.Chunk = d.int("ssm."+key, v)
				case "conv_bias":
					m.ConvBias = d.bool("ssm."+key, v)
				case "proj_bias":
					m.ProjBias = d.bool("ssm."+key, v)
				case "no_gated_norm":
					m.NoGatedNorm = d.bool("ssm."+key, v)
				case "dt_rank":
					m.DTRank = d.int("ssm."+key, v)
				}
			})
		case "shared":
			sh := &SharedBlocks{}
			d.section(v, "shared", "blocks and adapter_rank", sharedKeys(), func() { s.Shared = sh }, func(key string, v *yaml.Node) {
				switch key {
				case "blocks":
					sh.Blocks = d.int("shared."+key, v)
				case "adapter_rank":
					sh.AdapterRank = d.int("shared."+key, v)
				case "attn_adapters":
					sh.AttnAdapters = d.bool("shared."+key, v)
				}
			})
		}
	})
	return s, d.problems
}

// yamlDecoder collects the problems found while walking a YAML node tree.
type yamlDecoder struct {
	problems []string
}

func (d *yamlDecoder) addf(format string, args ...any) {
	d.problems = append(d.problems, fmt.Sprintf(format, args...))
}

// section reads the optional nested mapping v of key name (a mapping with
// wants): nothing for null, an error for another kind of node, else found
// and then set for each of its keys (known, under the prefix "name.").
func (d *yamlDecoder) section(v *yaml.Node, name, wants string, known []string, found func(), set func(key string, v *yaml.Node)) {
	if isNull(v) {
		return
	}
	if v.Kind != yaml.MappingNode {
		d.addf("key %q at line %d is a %s; it must be a mapping with %s", name, v.Line, kindName(v), wants)
		return
	}
	found()
	d.mapping(v, name+".", known, set)
}

// mapping calls set for each key of the mapping node m that is in known, and
// records unknown and repeated keys. prefix qualifies keys in messages.
func (d *yamlDecoder) mapping(m *yaml.Node, prefix string, known []string, set func(key string, v *yaml.Node)) {
	seen := make(map[string]int)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := resolveAlias(m.Content[i]), resolveAlias(m.Content[i+1])
		if k == nil || v == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.addf("a key at line %d is a %s; keys must be plain names such as %q", k.Line, kindName(k), prefix+known[0])
			continue
		}
		key := k.Value
		if !contains(known, key) {
			if len(d.problems) >= bounded.MaxProblems {
				// Past what is shown: counted in "and N more", no suggestion sought.
				d.addf("unknown key %q at line %d", prefix+key, k.Line)
				continue
			}
			d.addf("unknown key %q at line %d (%s)", prefix+key, k.Line, suggestKey(key, prefix, known))
			continue
		}
		if line, dup := seen[key]; dup {
			d.addf("key %q at line %d repeats the one at line %d; give it once", prefix+key, k.Line, line)
			continue
		}
		seen[key] = k.Line
		set(key, v)
	}
}

// suggestKey is the "did you mean" part of an unknown-key message.
func suggestKey(key, prefix string, known []string) string {
	near := nearest(key, known, 1)[0]
	if text.EditDistance(strings.ToLower(key), near) <= max(2, len(near)/3) || strings.Contains(strings.ToLower(key), near) {
		return fmt.Sprintf("did you mean %q?", prefix+near)
	}
	return "known keys: " + prefix + strings.Join(known, ", "+prefix)
}

func (d *yamlDecoder) scalar(key string, v *yaml.Node, want string) bool {
	if v.Kind != yaml.ScalarNode {
		d.addf("key %q at line %d is a %s; it must be %s", key, v.Line, kindName(v), want)
		return false
	}
	return true
}

// int decodes an integer; an integral float such as 1e4 is accepted too.
func (d *yamlDecoder) int(key string, v *yaml.Node) int {
	if isNull(v) || !d.scalar(key, v, "an integer") {
		return 0
	}
	if v.Tag == "!!int" {
		var n int64
		if err := v.Decode(&n); err == nil && n >= math.MinInt && n <= math.MaxInt {
			return int(n)
		}
	} else if v.Tag == "!!float" {
		f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
		if err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return int(f)
		}
	}
	d.addf("key %q at line %d is %q; it must be an integer", key, v.Line, v.Value)
	return 0
}

// optionalInt decodes an integer whose absence selects a default (def, in
// words): an explicit 0 is a problem rather than the default, which the
// user would not see being applied.
func (d *yamlDecoder) optionalInt(key string, v *yaml.Node, def string) int {
	before := len(d.problems)
	n := d.int(key, v)
	if n == 0 && len(d.problems) == before && !isNull(v) {
		d.addf("key %q at line %d is 0; it must be at least 1 (leave it out for the default, %s)", key, v.Line, def)
	}
	return n
}

func (d *yamlDecoder) float(key string, v *yaml.Node) float64 {
	if isNull(v) || !d.scalar(key, v, "a number") {
		return 0
	}
	if v.Tag == "!!int" || v.Tag == "!!float" {
		var f float64
		if err := v.Decode(&f); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
	d.addf("key %q at line %d is %q; it must be a number", key, v.Line, v.Value)
	return 0
}

func (d *yamlDecoder) bool(key string, v *yaml.Node) bool {
	if isNull(v) || !d.scalar(key, v, "true or false") {
		return false
	}
	if v.Tag == "!!bool" {
		var b bool
		if err := v.Decode(&b); err == nil {
			return b
		}
	}
	d.addf("key %q at line %d is %q; it must be true or false", key, v.Line, v.Value)
	return false
}

func (d *yamlDecoder) str(key string, v *yaml.Node) string {
	if isNull(v) || !d.scalar(key, v, "a string") {
		return ""
	}
	return v.Value
}

// strings decodes a sequence of strings (a bare string is a list of one).
func (d *yamlDecoder) strings(key string, v *yaml.Node) []string {
	v = resolveAlias(v)
	if v == nil || isNull(v) {
		return nil
	}
	if v.Kind == yaml.ScalarNode {
		return []string{v.Value}
	}
	if v.Kind != yaml.SequenceNode {
		d.addf("key %q at line %d is a %s; it must be a list such as [sliding, full]", key, v.Line, kindName(v))
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for i, e := range v.Content {
		e = resolveAlias(e)
		if e == nil || e.Kind != yaml.ScalarNode || isNull(e) {
			d.addf("key %q entry %d at line %d is not a string; an entry is full, sliding, chunked, dense, moe or a pair such as sliding/dense", key, i, v.Line)
			continue
		}
		out = append(out, e.Value)
	}
	return out
}

// resolveAlias follows alias nodes to the node they name.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// isNull reports whether n is an explicit YAML null (null, ~ or empty).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// kindName names a node's kind for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		v := n.Value
		if r := []rune(v); len(r) > 40 {
			v = string(r[:40]) + "..."
		}
		return fmt.Sprintf("scalar %q", v)
	}
	return "YAML node"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
