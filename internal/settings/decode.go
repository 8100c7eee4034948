package settings

import (
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// ValueError is a value of the wrong kind for its field: Given (as the
// user wrote it, or "a list", "a mapping") is not Want.
type ValueError struct {
	Given, Want string
}

// Error returns "GIVEN is not WANT".
func (e *ValueError) Error() string { return e.Given + " is not " + e.Want }

// DecodeHook returns the mapstructure decode hook for settings read by
// viper from YAML, the environment and flags. It replaces viper's weak
// conversions, which truncate 8.7 to 8 and take "1" for true, with strict
// ones:
//
//   - a whole-number field takes an integer, a float that is whole (1e6),
//     or a string ParseWhole reads ("4Mi", "2.5K"); a fraction, a
//     boolean, a list or a mapping is a *ValueError (or ParseWhole's error);
//   - a float field takes a number or a string strconv.ParseFloat reads;
//   - a boolean field takes a boolean or "true"/"false" (any case);
//   - a string field takes a string or a number (written back as the
//     shortest decimal that reads back the same), not a boolean, a list or
//     a mapping;
//   - a struct or map field takes a mapping;
//   - a list field takes a list, or a string of comma-separated values
//     (the environment's form: PLAN_MODELS=a,b).
func DecodeHook() mapstructure.DecodeHookFunc {
	return mapstructure.DecodeHookFuncValue(strict)
}

// strict is DecodeHook's conversion of one value.
func strict(from, to reflect.Value) (any, error) {
	in := from.Interface()
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := wholeOf(in)
		if err != nil {
			return nil, err
		}
		if to.OverflowInt(n) {
			return nil, &ValueError{Given: describe(in), Want: fmt.Sprintf("a whole number of at most %d", int64(1)<<(to.Type().Bits()-1)-1)}
		}
		return n, nil
	case reflect.Float32, reflect.Float64:
		return numberOf(in)
	case reflect.Bool:
		switch v := in.(type) {
		case bool:
			return v, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		}
		return nil, &ValueError{Given: describe(in), Want: "true or false"}
	case reflect.String:
		switch v := in.(type) {
		case string:
			return v, nil
		case int, int64, int32, uint64, uint:
			return fmt.Sprint(v), nil
		case float64:
			return strconv.FormatFloat(v, 'g', -1, 64), nil
		}
		return nil, &ValueError{Given: describe(in), Want: "a string"}
	case reflect.Struct, reflect.Map:
		if from.Kind() != reflect.Map {
			return nil, &ValueError{Given: describe(in), Want: "a mapping of keys"}
		}
	case reflect.Slice:
		switch v := in.(type) {
		case string:
			if strings.TrimSpace(v) == "" {
				return []string{}, nil
			}
			parts := strings.Split(v, ",")
			for i := range parts {
				parts[i] = strings.TrimSpace(parts[i])
			}
			return parts, nil
		case map[string]any:
			return nil, &ValueError{Given: "a mapping", Want: "a list"}
		}
	}
	return in, nil
}

// wholeOf converts a decoded value to a whole number.
func wholeOf(in any) (int64, error) {
	switch v := in.(type) {
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return 0, &ValueError{Given: fmt.Sprint(v), Want: "a whole number within range"}
		}
		return int64(v), nil
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) || math.Abs(v) > 1<<62 {
			return 0, &ValueError{Given: strconv.FormatFloat(v, 'g', -1, 64), Want: "a whole number"}
		}
		return int64(v), nil
	case string:
		return ParseWhole(v)
	}
	return 0, &ValueError{Given: describe(in), Want: "a whole number"}
}

// numberOf converts a decoded value to a finite float.
func numberOf(in any) (float64, error) {
	var f float64
	switch v := in.(type) {
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case float64:
		f = v
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, &ValueError{Given: strconv.Quote(v), Want: "a number (e.g. 2.5 or 1e3)"}
		}
		f = p
	default:
		return 0, &ValueError{Given: describe(in), Want: "a number"}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, &ValueError{Given: describe(in), Want: "a finite number"}
	}
	return f, nil
}

// describe names a decoded value for a message: a string quoted, a number
// or boolean as written, a list or mapping by its kind.
func describe(in any) string {
	switch v := in.(type) {
	case string:
		return strconv.Quote(v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case nil:
		return "empty"
	}
	rv := reflect.ValueOf(in)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return fmt.Sprint(in)
}

// FieldError is one field that could not be decoded.
type FieldError struct {
	// Field is the field's key as mapstructure names it: "batch",
	// "search.seed", "batches[0]", "cells[1].batch".
	Field string
	// Err says what is wrong with the value, without the field's name.
	Err error
}

// Error returns "FIELD: REASON".
func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *FieldError) Unwrap() error { return e.Err }

// FieldErrors returns the fields that a mapstructure (or viper Unmarshal)
// error names, in the order of the field names, each with a reason free of
// the decoder's wording: DecodeHook's errors as they are, "has invalid keys:
// a, b" as unknown keys, anything else as a value of the wrong type. An
// error that names no field gives one FieldError with an empty Field.
func FieldErrors(err error) []*FieldError {
	if err == nil {
		return nil
	}
	var out []*FieldError
	collect(err, &out)
	if len(out) == 0 {
		return []*FieldError{{Err: errors.New(text.OneLine(err.Error()))}}
	}
	slices.SortStableFunc(out, func(a, b *FieldError) int { return strings.Compare(a.Field, b.Field) })
	return out
}

// collect walks err's tree and appends the leaves that name a field.
func collect(err error, out *[]*FieldError) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			collect(e, out)
		}
		return
	}
	de, ok := err.(*mapstructure.DecodeError)
	if !ok {
		if w := errors.Unwrap(err); w != nil {
			collect(w, out)
		}
		return
	}
	inner := de.Unwrap()
	var nested *mapstructure.DecodeError
	if _, ok := inner.(interface{ Unwrap() []error }); ok || errors.As(inner, &nested) {
		collect(inner, out)
		return
	}
	*out = append(*out, &FieldError{Field: de.Name(), Err: reason(inner)})
}

// reason rewrites a leaf decoding error in the user's terms.
func reason(err error) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		return ve
	}
	msg := err.Error()
	if keys, ok := strings.CutPrefix(msg, "has invalid keys: "); ok {
		var quoted []string
		for _, k := range strings.Split(keys, ", ") {
			quoted = append(quoted, strconv.Quote(k))
		}
		return fmt.Errorf("unknown key %s", strings.Join(quoted, ", "))
	}
	if strings.HasPrefix(msg, `"`) {
		return err // ParseWhole's errors start with the quoted input
	}
	return errors.New("has a value of the wrong type")
}
