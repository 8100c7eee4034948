package cmd

import (
	"strings"
	"testing"
)

// leaks are phrases of Go's, viper's and mapstructure's own messages: an
// error a user sees should say what they typed and what is allowed instead.
var leaks = []string{"strconv.", "mapstructure", "decoding failed", "interface {}", "While parsing config", "reflect.", "%!", "unmarshal errors"}

// checkNoLeak fails t when msg carries one of leaks that the input in does
// not: a message may quote what the user typed.
func checkNoLeak(t *testing.T, in []byte, msg string) {
	t.Helper()
	for _, l := range leaks {
		if strings.Contains(msg, l) && !strings.Contains(string(in), l) {
			t.Errorf("reading %q: the message %q leaks %q", in, msg, l)
		}
	}
}

// FuzzConfigFile reads arbitrary bytes as a --config file the way plan does
// (readConfigFile, decodeConfig, then Config.Validate), with no PLAN_
// variable set. It must not panic, every error reading the file must name
// it, and no message may leak Go's or a library's wording.
func FuzzConfigFile(f *testing.F) {
	keys, err := configKeys()
	if err != nil {
		f.Fatal(err)
	}
	for k := range keys {
		f.Setenv("PLAN_"+strings.ToUpper(k), "")
	}
	for _, s := range []string{
		"model: llama3-8b\ncluster: h100-8\nbatch: 16\n",
		"batch: 8.7\n", "batch_tokens: 4Mi\nseq: 8Ki\n", "batch_tokens: 4M\ntokens: 15T\nprice: 2.5\n",
		"quiet: 1\n", "top: [1]\n", "seed: 1e18\n", "price: 1e308\ntokens: 1T\n", "{]", "- a\n", "hello\n",
		"model: {a: 1}\n", "format: bogus\nsearch: greedy\n", "min_chips: yes\nout: \"-\"\n", "batch: 0\n", "modle: x\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "fuzz.yaml"
		v := newConfigViper(keys)
		if err := readConfigFile(v, path, data, keys); err != nil {
			if !strings.HasPrefix(err.Error(), "--config "+path+": ") {
				t.Errorf("reading %q: the error %q does not name the file", data, err)
			}
			checkNoLeak(t, data, err.Error())
			return
		}
		cfg, err := decodeConfig(v)
		if err != nil {
			if !strings.Contains(err.Error(), "--config "+path+": ") {
				t.Errorf("decoding %q: the error %q does not name the file", data, err)
			}
			checkNoLeak(t, data, err.Error())
			return
		}
		if err := cfg.Validate(); err != nil {
			checkNoLeak(t, data, err.Error())
		}
	})
}

// TestConfigFileMessages pins the message of a --config file that is not a
// mapping of settings: the file and line named, in the user's terms.
func TestConfigFileMessages(t *testing.T) {
	clearEnv(t)
	keys, err := configKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"not YAML", "{]", "--config c.yaml: not YAML: did not find expected node content"},
		{"a list", "- a\n", "--config c.yaml: line 1: want a mapping of keys to values (e.g. batch: 16), got a list"},
		{"a word", "hello\n", `--config c.yaml: line 1: want a mapping of keys to values (e.g. batch: 16), got the value "hello"`},
		{"a list as a key", "[a]: 1\n", "--config c.yaml: line 1: a key must be a plain name (e.g. batch), not a list, a mapping or a null"},
		{"a key twice", "batch: 1\nbatch: 2\n", `--config c.yaml: line 1: key "batch" is given 2 times (lines 1, 2); give it once`},
		{"a key 2000 times", strings.Repeat("batch: 1\n", 2000), "--config c.yaml: line 1: the mapping has 2000 keys, more than the 1000 a mapping may have; " +
			`line 1: key "batch" is given 2000 times (lines 1, 2, 3, ...); give it once`},
		{"two documents", "batch: 1\n---\nbatch: 2\n", "--config c.yaml: the file holds more than one YAML document (the second begins at line 2); keep one document, without ---"},
		{"unknown key", "modle: x\n", `--config c.yaml: unknown key "modle"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readConfigFile(newConfigViper(keys), "c.yaml", []byte(tc.yaml), keys)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want it to begin %q", err, tc.want)
			}
		})
	}
	for _, ok := range []string{"", "# nothing\n", "~\n", "batch: 16\nmodel: llama3-8b\n"} {
		if err := readConfigFile(newConfigViper(keys), "c.yaml", []byte(ok), keys); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
