package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// fastSchema proves common arguments valid without building a value tree:
// it walks the raw JSON against the simple schemas most tools have (objects
// of typed properties, required, additionalProperties: false, numeric and
// length bounds, string enums, arrays of those). It never has the last word
// on invalid input: when it cannot prove an instance valid (an error, or a
// case it does not decide exactly, such as a bound hit exactly by a float),
// the full JSON Schema 2020-12 validator decides and writes the message. A
// schema using any other keyword gets no fast path at all.
type fastSchema struct {
	types      uint8 // bit set of fastType*; 0: any type
	props      map[string]*fastSchema
	required   []string
	closed     bool // additionalProperties: false
	min, max   *float64
	xmin, xmax *float64 // exclusiveMinimum, exclusiveMaximum
	minLen     int      // -1: none
	maxLen     int      // -1: none
	enum       []string // string enum; nil: none
	items      *fastSchema
	minItems   int // -1: none
	maxItems   int // -1: none

	// Object checks without allocation: every property and required name
	// gets a bit (at most 64; beyond, no fast path).
	index    map[string]int
	slots    []*fastSchema // by bit; nil for a required name without a property schema
	reqMask  uint64
	declared uint64 // bits of names in "properties"
}

const (
	fastObject uint8 = 1 << iota
	fastArray
	fastString
	fastInteger
	fastNumber
	fastBoolean
	fastNull
)

// annotation keywords that never affect validity (format is an annotation by
// default in 2020-12, and the validator here does not assert it).
var fastAnnotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$comment": true, "format": true,
}

// compileFast returns the fast validator of raw, or nil when raw uses a
// keyword it does not handle.
func compileFast(raw json.RawMessage) *fastSchema {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return compileFastMap(m, true)
}

// fastTypes maps the JSON Schema type names to their bits.
var fastTypes = map[string]uint8{"object": fastObject, "array": fastArray, "string": fastString,
	"integer": fastInteger, "number": fastNumber, "boolean": fastBoolean, "null": fastNull}

func compileFastMap(m map[string]json.RawMessage, root bool) *fastSchema {
	f := &fastSchema{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	num := func(v json.RawMessage) (*float64, bool) {
		var x float64
		if json.Unmarshal(v, &x) != nil {
			return nil, false
		}
		return &x, true
	}
	count := func(v json.RawMessage) (int, bool) {
		var x int
		if json.Unmarshal(v, &x) != nil || x < 0 {
			return 0, false
		}
		return x, true
	}
	bounds := map[string]**float64{"minimum": &f.min, "maximum": &f.max, "exclusiveMinimum": &f.xmin, "exclusiveMaximum": &f.xmax}
	counts := map[string]*int{"minLength": &f.minLen, "maxLength": &f.maxLen, "minItems": &f.minItems, "maxItems": &f.maxItems}
	for k, v := range m {
		var ok = true
		switch {
		case fastAnnotations[k], len(k) > 2 && k[:2] == "x-":
		case k == "$schema":
			var s string
			ok = root && json.Unmarshal(v, &s) == nil && s == "https://json-schema.org/draft/2020-12/schema"
		case k == "type":
			var one string
			var many []string
			if json.Unmarshal(v, &one) == nil {
				many = []string{one}
			} else if json.Unmarshal(v, &many) != nil || len(many) == 0 {
				return nil
			}
			for _, t := range many {
				bit, known := fastTypes[t]
				if !known {
					return nil
				}
				f.types |= bit
			}
		case k == "properties":
			var props map[string]map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
			f.props = make(map[string]*fastSchema, len(props))
			for name, ps := range props {
				sub := compileFastMap(ps, false)
				if sub == nil {
					return nil
				}
				f.props[name] = sub
			}
		case k == "required":
			ok = json.Unmarshal(v, &f.required) == nil
		case k == "additionalProperties":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return nil // a schema: not handled
			}
			f.closed = !b
		case bounds[k] != nil:
			*bounds[k], ok = num(v)
		case counts[k] != nil:
			*counts[k], ok = count(v)
		case k == "enum":
			ok = json.Unmarshal(v, &f.enum) == nil && f.enum != nil
		case k == "items":
			var im map[string]json.RawMessage
			if json.Unmarshal(v, &im) != nil {
				return nil
			}
			if f.items = compileFastMap(im, false); f.items == nil {
				return nil
			}
		default:
			return nil
		}
		if !ok {
			return nil
		}
	}
	if f.props != nil || f.required != nil {
		f.index = map[string]int{}
		add := func(name string, sub *fastSchema) int {
			if i, ok := f.index[name]; ok {
				return i
			}
			f.index[name] = len(f.slots)
			f.slots = append(f.slots, sub)
			return len(f.slots) - 1
		}
		for name, sub := range f.props {
			f.declared |= 1 << add(name, sub)
			if len(f.slots) > 64 {
				return nil
			}
		}
		for _, name := range f.required {
			f.reqMask |= 1 << add(name, nil)
			if len(f.slots) > 64 {
				return nil
			}
		}
	}
	return f
}

// valid reports whether v (a raw JSON value, known to be well-formed) is
// proven valid. false means "not proven", not "invalid".
func (f *fastSchema) valid(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case '{':
		if f.types != 0 && f.types&fastObject == 0 {
			return false
		}
		return f.validObject(v)
	case '[':
		if f.types != 0 && f.types&fastArray == 0 {
			return false
		}
		return f.validArray(v)
	case '"':
		if f.types != 0 && f.types&fastString == 0 {
			return false
		}
		if f.minLen < 0 && f.maxLen < 0 && f.enum == nil {
			return true
		}
		s, ok := jsonwire.RawString(v)
		if !ok {
			return false
		}
		if f.minLen >= 0 || f.maxLen >= 0 {
			n := utf8.RuneCountInString(s)
			if (f.minLen >= 0 && n < f.minLen) || (f.maxLen >= 0 && n > f.maxLen) {
				return false
			}
		}
		if f.enum != nil {
			for _, e := range f.enum {
				if e == s {
					return true
				}
			}
			return false
		}
		return true
	case 't', 'f':
		return f.enum == nil && (f.types == 0 || f.types&fastBoolean != 0)
	case 'n':
		return f.enum == nil && (f.types == 0 || f.types&fastNull != 0)
	default:
		return f.enum == nil && f.validNumber(v)
	}
}

// validNumber decides plain integers exactly and other numbers when no bound
// is hit exactly.
func (f *fastSchema) validNumber(v []byte) bool {
	plainInt := true
	for i, c := range v {
		if !(c >= '0' && c <= '9' || (i == 0 && c == '-')) {
			plainInt = false
			break
		}
	}
	if f.types != 0 && f.types&fastNumber == 0 {
		if f.types&fastInteger == 0 || !plainInt {
			return false // not a number type, or maybe 1.0: let the validator decide
		}
	}
	if f.min == nil && f.max == nil && f.xmin == nil && f.xmax == nil {
		return true
	}
	var x float64
	if plainInt {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) {
			return false
		}
		x = float64(n)
	} else {
		var err error
		if x, err = strconv.ParseFloat(string(v), 64); err != nil || math.IsInf(x, 0) {
			return false
		}
	}
	// A strict float inequality implies the exact one; equality does not
	// (unless the value is an integer that floats represent exactly).
	below := func(b float64) int { // -1: x < b, 0: undecided, 1: x >= b
		switch {
		case x < b:
			return -1
		case x > b || (plainInt && x == b):
			return 1
		}
		return 0
	}
	if f.min != nil && below(*f.min) != 1 {
		return false
	}
	if f.max != nil {
		if c := below(*f.max); !(c == -1 || (plainInt && x == *f.max)) {
			return false
		}
	}
	if f.xmin != nil && !(x > *f.xmin) {
		return false
	}
	if f.xmax != nil && below(*f.xmax) != -1 {
		return false
	}
	return true
}

func (f *fastSchema) validObject(v []byte) bool {
	var seen uint64
	ok := true
	err := jsonwire.EachMember(v, func(k, val []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			ok = false // an escaped key: not decided here
			return false
		}
		i, known := f.index[string(k)]
		if !known {
			if f.closed {
				ok = false
				return false
			}
			return true
		}
		bit := uint64(1) << i
		if seen&bit != 0 || (f.closed && f.declared&bit == 0) {
			ok = false // a duplicate key, or a required name the schema does not declare
			return false
		}
		seen |= bit
		if p := f.slots[i]; p != nil && !p.valid(val) {
			ok = false
			return false
		}
		return true
	})
	return err == nil && ok && seen&f.reqMask == f.reqMask
}

func (f *fastSchema) validArray(v []byte) bool {
	n := 0
	i := jsonwire.SkipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end := jsonwire.SkipValue(v, i)
		if f.items != nil && !f.items.valid(v[i:end]) {
			return false
		}
		n++
		i = jsonwire.SkipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = jsonwire.SkipSpace(v, i+1)
		}
	}
	return (f.minItems < 0 || n >= f.minItems) && (f.maxItems < 0 || n <= f.maxItems)
}
