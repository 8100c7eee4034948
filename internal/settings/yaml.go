package settings

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/text"
	"regexp"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// ReadYAML reads data, a YAML document of settings (a --config file or a
// sweep configuration), into v. A second document, a key given twice (each
// named once, at most bounded.MaxProblems of them), a document that is not YAML, whose top
// level is not a mapping of keys to values (an empty document is none), or
// whose keys are not plain names, is an error in the user's terms, giving
// the line, rather than the YAML library's or viper's wording.
func ReadYAML(v *viper.Viper, data []byte) error {
	root, err := bounded.YAML(data)
	if pe, ok := errors.AsType[*bounded.ProblemsError](err); ok {
		return errors.New(strings.Join(pe.Problems, "; "))
	}
	if err != nil {
		return yamlError(err)
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	for root.Kind == yaml.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	switch {
	case root.Kind == 0 || root.Kind == yaml.DocumentNode || root.Kind == yaml.MappingNode:
	case root.Kind == yaml.ScalarNode && root.Tag == "!!null":
	default:
		return fmt.Errorf("line %d: want a mapping of keys to values (e.g. batch: 16), got %s", root.Line, kindName(root))
	}
	var m map[string]any
	if err := safeUnmarshal(data, &m); err != nil {
		return yamlError(err)
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("cannot read the settings: %s", text.OneLine(strings.TrimPrefix(err.Error(), "While parsing config: ")))
	}
	return nil
}

// lineRE matches the "line N: " that begins each of a yaml.TypeError's
// messages.
var lineRE = regexp.MustCompile(`^line (\d+): `)

// yamlError rewords an error of the YAML library: a syntax error keeps its
// position and reason; a value that could not be decoded (a key that is a
// list or a mapping, a key given twice) is named by its line.
func yamlError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("not YAML: %s", text.OneLine(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		switch m := lineRE.FindStringSubmatch(e); {
		case strings.Contains(e, "already defined"):
			msgs[i] = e
		case m != nil:
			msgs[i] = "line " + m[1] + ": a key must be a plain name (e.g. batch), not a list, a mapping or a null"
		default:
			msgs[i] = "a key must be a plain name (e.g. batch), not a list, a mapping or a null"
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// safeUnmarshal parses data into out, turning a panic of the YAML library
// on hostile input into an error.
func safeUnmarshal(data []byte, out any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	return yaml.Unmarshal(data, out)
}

// kindName names the kind of a YAML node for a message.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	default:
		return "no mapping"
	}
}
