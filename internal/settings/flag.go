package settings

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// Int is a pflag.Value for an integer flag that reads its argument as
// ParseWhole does, so that --batch-tokens 4Mi works like --tokens 4M. Its
// Type is "int" or "int64" and its String the plain decimal, so that
// viper, cobra and pflag's GetInt treat it as pflag's own integer flags.
type Int struct {
	v    int64
	bits int
}

// NewInt returns an Int of Go type int (bits 0) or int64 (bits 64) that
// holds def.
func NewInt(def int64, bits int) *Int { return &Int{v: def, bits: bits} }

// Set parses s with ParseWhole.
func (i *Int) Set(s string) error {
	n, err := ParseWhole(s)
	if err != nil {
		return err
	}
	if i.bits != 64 && n != int64(int(n)) {
		return fmt.Errorf("%q is out of range", s)
	}
	i.v = n
	return nil
}

// String returns the value in decimal.
func (i *Int) String() string { return strconv.FormatInt(i.v, 10) }

// Type returns "int64" or "int".
func (i *Int) Type() string {
	if i.bits == 64 {
		return "int64"
	}
	return "int"
}

// FlagError rewrites a pflag parse error in the user's terms: an invalid
// value names the flag, the value and what the flag takes (an Int's own
// message, "a number" for a float, "true or false" for a boolean) instead
// of strconv's wording. Other errors are returned as they are.
func FlagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	f := ive.GetFlag()
	var why error
	switch f.Value.Type() {
	case "float64", "float32":
		why = &ValueError{Given: strconv.Quote(ive.GetValue()), Want: "a number (e.g. 2.5 or 1e3)"}
	case "bool":
		why = &ValueError{Given: strconv.Quote(ive.GetValue()), Want: "true or false"}
	case "int", "int64":
		if _, own := f.Value.(*Int); own {
			why = ive.Unwrap()
			break
		}
		why = &ValueError{Given: strconv.Quote(ive.GetValue()), Want: "a whole number"}
	default:
		if _, once := f.Value.(*Once); once {
			return &FieldError{Field: "--" + f.Name, Err: fmt.Errorf("given twice (%s, then %s); give it once", strconv.Quote(f.Value.String()), strconv.Quote(ive.GetValue()))}
		}
		why = &ValueError{Given: strconv.Quote(ive.GetValue()), Want: "valid here"}
	}
	return &FieldError{Field: "--" + f.Name, Err: why}
}

// Once is a pflag.Value for a string flag that may be given once: a second
// --model or --fix is an error rather than silently replacing the first.
// Its Type is "string", so that viper and pflag's GetString treat it as
// pflag's own string flags.
type Once struct {
	v   string
	set bool
}

// NewOnce returns a Once that holds def.
func NewOnce(def string) *Once { return &Once{v: def} }

// Set takes s, unless a value was set before.
func (o *Once) Set(s string) error {
	if o.set {
		return errors.New("given twice; give it once")
	}
	o.v, o.set = s, true
	return nil
}

// String returns the value.
func (o *Once) String() string { return o.v }

// Type returns "string".
func (o *Once) Type() string { return "string" }
