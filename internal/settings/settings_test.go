package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

func TestParseWhole(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"512", 512}, {" 7 ", 7}, {"0", 0}, {"-4", -4}, {"+3", 3}, {"1_000", 1000},
		{"4M", 4_000_000}, {"4m", 4_000_000}, {"4Mi", 4_194_304}, {"4mi", 4_194_304},
		{"2.5K", 2500}, {"8Ki", 8192}, {"1.5Ki", 1536}, {"300B", 300e9}, {"300G", 300e9},
		{"15T", 15e12}, {"1Ti", 1 << 40}, {"2e12", 2e12}, {"1.5e3", 1500}, {"2.5e-1K", 250},
		{"1e18", 1e18}, {"007", 7}, {"0.5Ki", 512}, {"-2K", -2000}, {"10Ti", 10 << 40},
	} {
		got, err := ParseWhole(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseWhole(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"16.5", `"16.5" is not a whole number`},
		{"1.0001K", `"1.0001K" is not a whole number`},
		{"4Q", `"4Q" is not a whole number; write digits`},
		{"", `"" is not a whole number; write digits`},
		{"K", `"K" is not a whole number; write digits`},
		{"0x10", `"0x10" is not a whole number`},
		{"1/2", `"1/2" is not a whole number`},
		{"NaN", `"NaN" is not a whole number`},
		{"inf", `"inf" is not a whole number`},
		{"1e30", `"1e30" is out of range (at most 9223372036854775807)`},
		{"1e999999999", `"1e999999999" is out of range`},
		{"9999999T", `"9999999T" is out of range`},
	} {
		_, err := ParseWhole(tt.in)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("ParseWhole(%q) error %v, want it to start %q", tt.in, err, tt.want)
		}
	}
}

// testConfig has a field of every kind DecodeHook handles.
type testConfig struct {
	Batch  int      `mapstructure:"batch"`
	Seed   int64    `mapstructure:"seed"`
	Price  float64  `mapstructure:"price"`
	Quiet  bool     `mapstructure:"quiet"`
	Model  string   `mapstructure:"model"`
	Seqs   []int    `mapstructure:"seqs"`
	Models []string `mapstructure:"models"`
	Cells  []struct {
		Batch int `mapstructure:"batch"`
	} `mapstructure:"cells"`
	Search struct {
		Top int `mapstructure:"top"`
	} `mapstructure:"search"`
}

// decodeYAML decodes a YAML document as viper does with DecodeHook.
func decodeYAML(t *testing.T, doc string) (testConfig, error) {
	t.Helper()
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	var c testConfig
	err := v.UnmarshalExact(&c, viper.DecodeHook(DecodeHook()))
	return c, err
}

func TestDecodeHook(t *testing.T) {
	c, err := decodeYAML(t, "batch: 4Ki\nseed: 1e3\nprice: 2\nquiet: TRUE\nmodel: 70\nseqs: [8Ki, 4096]\nmodels: a\ncells: [{batch: 2.5K}]\nsearch: {top: 3}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Batch != 4096 || c.Seed != 1000 || c.Price != 2 || !c.Quiet || c.Model != "70" ||
		len(c.Seqs) != 2 || c.Seqs[0] != 8192 || c.Seqs[1] != 4096 || len(c.Models) != 1 || c.Models[0] != "a" ||
		len(c.Cells) != 1 || c.Cells[0].Batch != 2500 || c.Search.Top != 3 {
		t.Errorf("decoded %+v", c)
	}

	_, err = decodeYAML(t, "batch: 8.7\nseed: true\nprice: cheap\nquiet: 1\nmodel: [a]\nseqs: [16.5, 8]\ncells: [{batch: x, extra: 1}]\nsearch: 5\n")
	var got []string
	for _, fe := range FieldErrors(err) {
		got = append(got, fe.Error())
	}
	want := []string{
		`batch: 8.7 is not a whole number`,
		`cells[0]: unknown key "extra"`,
		`cells[0].batch: "x" is not a whole number; ` + Hint,
		`model: a list is not a string`,
		`price: "cheap" is not a number (e.g. 2.5 or 1e3)`,
		`quiet: 1 is not true or false`,
		`search: 5 is not a mapping of keys`,
		`seed: true is not a whole number`,
		`seqs[0]: 16.5 is not a whole number`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("field errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFlagError checks the messages of bad flag values: the flag, the
// value as typed and what the flag takes, without strconv's wording.
func TestFlagError(t *testing.T) {
	fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
	fs.Var(NewInt(0, 0), "batch", "")
	fs.Var(NewInt(1, 64), "seed", "")
	fs.Float64("price", 0, "")
	fs.Bool("quiet", false, "")
	fs.Int("plain", 0, "")
	for _, tt := range []struct{ arg, want string }{
		{"--batch=16.5", `--batch: "16.5" is not a whole number`},
		{"--batch=4Q", `--batch: "4Q" is not a whole number; ` + Hint},
		{"--seed=1.5", `--seed: "1.5" is not a whole number`},
		{"--price=abc", `--price: "abc" is not a number (e.g. 2.5 or 1e3)`},
		{"--quiet=maybe", `--quiet: "maybe" is not true or false`},
		{"--plain=x", `--plain: "x" is not a whole number`},
	} {
		err := FlagError(fs.Parse([]string{tt.arg}))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.arg, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "strconv") {
			t.Errorf("%s: %q leaks strconv", tt.arg, err)
		}
	}
	if err := fs.Parse([]string{"--batch=4Mi"}); err != nil {
		t.Fatal(err)
	}
	if n, err := fs.GetInt("batch"); err != nil || n != 4<<20 {
		t.Errorf("GetInt(batch) = %d, %v", n, err)
	}
	other := errors.New("unknown flag: --x")
	if FlagError(other) != other {
		t.Error("FlagError changed an error that is not about a value")
	}
}

// FuzzParseWhole: ParseWhole never panics, and a number it accepts reads
// back the same when written in decimal.
func FuzzParseWhole(f *testing.F) {
	for _, s := range []string{"4M", "4Mi", "2.5K", "1e18", "16.5", "-3", "1_000", "0x10", "1e999", ".5K", "+.e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseWhole(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), `"`) {
				t.Fatalf("ParseWhole(%q) error %q does not start with the quoted input", s, err)
			}
			return
		}
		back, err := ParseWhole(strings.TrimSpace(yamlInt(n)))
		if err != nil || back != n {
			t.Fatalf("ParseWhole(%q) = %d, which reads back as %d, %v", s, n, back, err)
		}
	})
}

// yamlInt writes n as YAML does.
func yamlInt(n int64) string {
	b, _ := yaml.Marshal(n)
	return string(b)
}
