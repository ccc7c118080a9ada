package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

// fastSchemas are schemas the fast path handles; the cases below check it
// against the full validator.
var fastSchemas = []string{
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10}}}`,
	`{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":0.5,"exclusiveMaximum":2}}}`,
	`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3,"description":"d"}},"required":["s"]}`,
	`{"type":"object","properties":{"e":{"type":"string","enum":["a","b","ü"]}}}`,
	`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2}}}`,
	`{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":["string","null"]}},"additionalProperties":false}}}`,
	`{"type":"object","properties":{"b":{"type":"boolean"},"f":{"type":"number","minimum":-1.5}}}`,
}

var fastInstances = []string{
	`{}`, `{"a":1,"b":2}`, `{"a":1}`, `{"a":1,"b":2,"c":3}`, `{"a":1.0,"b":2}`, `{"a":"1","b":2}`, `{"a":1e2,"b":2}`,
	`{"n":0}`, `{"n":10}`, `{"n":11}`, `{"n":-1}`, `{"n":5.5}`, `{"n":99999999999999999999}`,
	`{"x":0.5}`, `{"x":0.50000000000000001}`, `{"x":1}`, `{"x":2}`, `{"x":1.9999999999999999}`,
	`{"s":"ab"}`, `{"s":"a"}`, `{"s":"abcd"}`, `{"s":"üü"}`, `{"s":"\u00fc\u00fc\u00fc"}`, `{"s":3}`,
	`{"e":"a"}`, `{"e":"c"}`, `{"e":"\u00fc"}`, `{"e":null}`,
	`{"l":[]}`, `{"l":["x"]}`, `{"l":["x","y","z"]}`, `{"l":[1]}`,
	`{"o":{"k":null}}`, `{"o":{"k":"v"}}`, `{"o":{"k":1}}`, `{"o":{"z":1}}`,
	`{"b":true,"f":-1.5}`, `{"b":"true"}`, `{"f":-1.50000000000000000001}`, `{"f":-2}`,
	`{"a":1,"a":2,"b":3}`, `{"\u0061":1,"b":2}`, `[]`, `"x"`, `null`, `12`,
}

// TestFastSchemaAgreesWithValidator: whatever the fast path proves valid, the
// full validator accepts (the converse is not required: the fast path may
// defer).
func TestFastSchemaAgreesWithValidator(t *testing.T) {
	proven := 0
	for _, sch := range fastSchemas {
		c, err := Compile(json.RawMessage(sch), true)
		if err != nil {
			t.Fatal(err)
		}
		if c.fast == nil {
			t.Fatalf("schema %s has no fast path", sch)
		}
		for _, inst := range fastInstances {
			v, err := DecodeForValidation([]byte(inst))
			if err != nil {
				t.Fatal(err)
			}
			full := c.Validate(v) == nil
			if c.ProvenValid([]byte(inst)) {
				proven++
				if !full {
					t.Errorf("schema %s: the fast path accepts %s, the validator rejects it", sch, inst)
				}
			}
		}
	}
	if proven < 40 {
		t.Fatalf("the fast path proved only %d instances valid: it is not doing its job", proven)
	}
}

func TestFastSchemaDeclines(t *testing.T) {
	for _, sch := range []string{
		`{"type":"object","properties":{"a":{"pattern":"^x"}}}`,
		`{"type":"object","anyOf":[{"required":["a"]}]}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","properties":{"e":{"enum":[1,2]}}}`,
		`{"$ref":"#/$defs/x","$defs":{"x":{"type":"object"}}}`,
		`{"type":"object","properties":{"c":{"const":"x"}}}`,
	} {
		if compileFast(json.RawMessage(sch)) != nil {
			t.Errorf("schema %s got a fast path; it uses keywords the fast path does not decide", sch)
		}
	}
}

// FuzzFastSchema checks, for arbitrary instances, that the fast path never
// accepts what the validator rejects.
func FuzzFastSchema(f *testing.F) {
	for _, inst := range fastInstances {
		f.Add(inst, 0)
	}
	compiled := make([]*Compiled, len(fastSchemas))
	for i, sch := range fastSchemas {
		c, err := Compile(json.RawMessage(sch), true)
		if err != nil {
			f.Fatal(err)
		}
		compiled[i] = c
	}
	f.Fuzz(func(t *testing.T, inst string, which int) {
		if !json.Valid([]byte(inst)) {
			return
		}
		if which < 0 {
			which = -which
		}
		c := compiled[which%len(compiled)]
		if !c.ProvenValid([]byte(inst)) {
			return
		}
		v, err := DecodeForValidation([]byte(inst))
		if err != nil {
			return
		}
		if err := c.Validate(v); err != nil {
			t.Fatalf("fast path accepts %s, validator says %v", inst, err)
		}
	})
}

// Schemas derived from Go types are resolved lazily, on the first call the
// fast path cannot prove: they must always resolve.
func TestDerivedSchemasResolve(t *testing.T) {
	type inner struct {
		X float64 `json:"x" jsonschema:"minimum=1"`
	}
	type kitchen struct {
		S    string            `json:"s" jsonschema:"enum=a,enum=b"`
		I    int64             `json:"i,omitempty"`
		U    uint8             `json:"u"`
		F    float32           `json:"f"`
		B    bool              `json:"b"`
		L    []string          `json:"l"`
		M    map[string]int    `json:"m"`
		P    *inner            `json:"p"`
		N    inner             `json:"n"`
		A    any               `json:"a"`
		R    json.RawMessage   `json:"r"`
		T    []inner           `json:"t"`
		MM   map[string]*inner `json:"mm"`
		Skip string            `json:"-"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[kitchen](), reflect.TypeFor[inner](), reflect.TypeFor[[]kitchen](),
		reflect.TypeFor[map[string]any](), reflect.TypeFor[int](), reflect.TypeFor[string]()} {
		raw, err := For(typ)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if _, err := Compile(raw, true); err != nil {
			t.Errorf("%v: the derived schema %s does not resolve: %v", typ, raw, err)
		}
	}
}
