package bounded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxDuplicateLines is how many lines of a repeated key a message lists.
const maxDuplicateLines = 3

// MaxMappingKeys is the most keys one mapping of a YAML file may have. The
// YAML library compares every pair of keys of a mapping it decodes into
// Go values, which for a mapping of n keys costs n(n-1)/2 comparisons;
// the planner's files have tens of keys a mapping.
const MaxMappingKeys = 1000

// YAML parses data, which must hold at most one YAML document, into a node
// tree (a *yaml.Node of kind DocumentNode, or of kind 0 for an empty
// input). A second document, a syntax error or a key given more than once
// in a mapping, or a mapping of more than MaxMappingKeys keys, is an
// error: each repeated key is named once, with how
// many times and on which lines it is given, and the problems are bounded
// as Join bounds them, one a line. The YAML library's own report of a
// repeated key names every pair of copies, n(n-1)/2 messages; a tree
// that passes YAML has no repeated key left for it to report. A panic of
// the library on hostile input is an error.
func YAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := safeDecode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{}, nil
		}
		return nil, err
	}
	var next yaml.Node
	switch err := safeDecode(dec, &next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, fmt.Errorf("the file holds more than one YAML document, and the second is not YAML (%s); keep one document, without ---", strings.TrimPrefix(err.Error(), "yaml: "))
	default:
		return nil, &ProblemsError{Problems: []string{fmt.Sprintf("the file holds more than one YAML document (the second begins at line %d); keep one document, without ---", next.Line)}}
	}
	var problems []string
	duplicates(&doc, &problems)
	if err := Join("", problems); err != nil {
		return nil, err
	}
	return &doc, nil
}

// safeDecode decodes the next document of dec into n, turning a panic of
// the YAML library into an error.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	return dec.Decode(n)
}

// duplicates appends to problems one message for each key given more than
// once in a mapping of the tree n, and one for each mapping of more than
// MaxMappingKeys keys (aliases are not followed: the node they point to is
// checked where it stands).
func duplicates(n *yaml.Node, problems *[]string) {
	if n == nil || n.Kind == yaml.AliasNode {
		return
	}
	if n.Kind == yaml.MappingNode && len(n.Content)/2 > MaxMappingKeys {
		*problems = append(*problems, fmt.Sprintf("line %d: the mapping has %d keys, more than the %d a mapping may have", n.Line, len(n.Content)/2, MaxMappingKeys))
	}
	if n.Kind == yaml.MappingNode {
		type seen struct {
			lines []int
			count int
		}
		var order []string
		keys := map[string]*seen{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Value == "<<" {
				continue
			}
			s, ok := keys[k.Value]
			if !ok {
				s = &seen{}
				keys[k.Value] = s
				order = append(order, k.Value)
			}
			s.count++
			if len(s.lines) <= maxDuplicateLines {
				s.lines = append(s.lines, k.Line)
			}
		}
		for _, k := range order {
			s := keys[k]
			if s.count < 2 {
				continue
			}
			shown := s.lines[:min(len(s.lines), maxDuplicateLines)]
			lines := make([]string, len(shown))
			for i, l := range shown {
				lines[i] = strconv.Itoa(l)
			}
			list := strings.Join(lines, ", ")
			if s.count > len(shown) {
				list += ", ..."
			}
			*problems = append(*problems, fmt.Sprintf("line %d: key %s is given %d times (lines %s); give it once",
				s.lines[0], strconv.Quote(Cut(k, 60)), s.count, list))
		}
	}
	for _, c := range n.Content {
		duplicates(c, problems)
	}
}
