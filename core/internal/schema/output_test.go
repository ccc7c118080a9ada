package schema

import (
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invopop/jsonschema"
)

type fitLeaf struct {
	N int    `json:"n"`
	S string `json:"s,omitempty"`
}

type FitEmbedded struct {
	E  string   `json:"e"`
	EL []string `json:"el"`
}

type fitDeep struct {
	D int `json:"d"`
}

type fitSelfText int

func (fitSelfText) MarshalText() ([]byte, error) { return []byte("text"), nil }

type fitSelfJSON struct{ A, B int }

func (fitSelfJSON) MarshalJSON() ([]byte, error) { return []byte(`[1,"two"]`), nil }

type fitByte byte

// fitConflictA and fitConflictB both promote "c" at the same depth:
// encoding/json writes neither.
type fitConflictA struct {
	C int
}
type fitConflictB struct {
	C string
}

// fitAll has a field of every shape whose encoding differs from what
// invopop reflects from the Go type.
type fitAll struct {
	List     []string            `json:"list"`
	Map      map[string]int      `json:"map"`
	Ptr      *int                `json:"ptr"`
	Leaf     *fitLeaf            `json:"leaf"`
	Bytes    []byte              `json:"bytes"`
	MyBytes  []fitByte           `json:"myBytes"`
	ByteArr  [3]byte             `json:"byteArr"`
	Num      json.Number         `json:"num"`
	NumStr   json.Number         `json:"numStr,string"`
	IntKeys  map[int8]string     `json:"intKeys"`
	UintKeys map[uint16]bool     `json:"uintKeys"`
	TextKeys map[fitSelfText]int `json:"textKeys"`
	Nested   [][]*fitLeaf        `json:"nested"`
	Values   map[string][]int    `json:"values"`
	When     time.Time           `json:"when"`
	WhenPtr  *time.Time          `json:"whenPtr"`
	Raw      json.RawMessage     `json:"raw"`
	URL      url.URL             `json:"url"`
	URLPtr   *url.URL            `json:"urlPtr"`
	IP       net.IP              `json:"ip"`
	Addr     netip.Addr          `json:"addr"`
	Text     fitSelfText         `json:"text"`
	SelfJSON fitSelfJSON         `json:"selfJSON"`
	Opt      string              `json:"opt,omitempty"`
	Zero     int                 `json:"zero,omitzero"`
	Any      any                 `json:"any"`
	Arr      [2]*fitLeaf         `json:"arr"`
	Nilable  *string             `json:"nilable" jsonschema:"nullable"`
	NilSlice []int               `json:"nilSlice" jsonschema:"nullable"`
	Quoted   *int                `json:"quoted,string"`
	QBool    bool                `json:"qbool,string"`
	Items    []map[string]*int   `json:"items"`
	Hidden   string              `json:"hidden" jsonschema:"-"`
	Dash     string              `json:"-,"`
	NoTag    float64
	Desc     string `json:"desc" jsonschema:"A description, with a comma"`
	*FitEmbedded
	fitDeep
	fitConflictA
	fitConflictB
}

// exactTypes are result types whose derived schema must be exact: every
// value encoding/json writes for them validates.
var exactTypes = []reflect.Type{
	reflect.TypeFor[fitAll](),
	reflect.TypeFor[*fitAll](),
	reflect.TypeFor[[]fitAll](),
	reflect.TypeFor[map[string]*fitAll](),
	reflect.TypeFor[map[int]fitLeaf](),
	reflect.TypeFor[[]byte](),
	reflect.TypeFor[[]*int](),
	reflect.TypeFor[*string](),
	reflect.TypeFor[[4]int](),
	reflect.TypeFor[time.Time](),
	reflect.TypeFor[struct {
		Inner struct {
			L []fitLeaf `json:"l"`
		} `json:"inner"`
	}](),
}

// TestOutputSchemaIsExact checks Output's promise: for result types
// without constraints in their tags, the derived schema is exact, and the
// full validator accepts what encoding/json writes for many random values
// of each (nil and empty and filled slices, maps and pointers; negative
// integer keys; strings that need escapes).
func TestOutputSchemaIsExact(t *testing.T) {
	for _, typ := range exactTypes {
		t.Run(typ.String(), func(t *testing.T) {
			raw, exact, err := Output(typ)
			if err != nil {
				t.Fatal(err)
			}
			if !exact {
				t.Fatalf("not exact: %s", raw)
			}
			c, err := Compile(raw, true)
			if err != nil {
				t.Fatalf("the derived schema does not resolve: %v\n%s", err, raw)
			}
			r := rand.New(rand.NewPCG(1, uint64(len(typ.String()))))
			for i := range 300 {
				v := reflect.New(typ).Elem()
				if i > 0 { // the zero value first
					fillRandom(r, v, 0)
				}
				b, err := json.Marshal(v.Interface())
				if err != nil {
					t.Fatal(err)
				}
				inst, err := DecodeForValidation(b)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Validate(inst); err != nil {
					t.Fatalf("%s\ndoes not conform to the derived schema %s:\n%v", b, raw, err)
				}
			}
		})
	}
}

// fillRandom sets v to a random value of its type: pointers, slices and
// maps nil, empty or filled, scalars zero or not.
func fillRandom(r *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) == 0 || depth > 6 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[time.Time]():
			v.Set(reflect.ValueOf(time.Unix(r.Int64N(1<<33), r.Int64N(1e9)).UTC()))
			return
		case reflect.TypeFor[netip.Addr]():
			if r.IntN(2) == 0 {
				v.Set(reflect.ValueOf(netip.MustParseAddr("2001:db8::1")))
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() || v.Type().Field(i).Anonymous {
				fillRandom(r, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			if r.IntN(2) == 0 {
				v.SetBytes([]byte(`{"k":[1,"x",null]}`))
			}
			return
		}
		if v.Type() == reflect.TypeFor[net.IP]() {
			ips := []net.IP{nil, net.ParseIP("192.0.2.1"), net.ParseIP("2001:db8::2")}
			v.Set(reflect.ValueOf(ips[r.IntN(len(ips))]))
			return
		}
		n := r.IntN(4) - 1 // -1: nil
		if n < 0 || depth > 6 {
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fillRandom(r, v.Index(i), depth+1)
		}
	case reflect.Map:
		n := r.IntN(4) - 1
		if n < 0 || depth > 6 {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), n)
		for range n {
			k := reflect.New(v.Type().Key()).Elem()
			fillRandom(r, k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fillRandom(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		if v.Type() == reflect.TypeFor[json.Number]() {
			nums := []string{"", "0", "-12.5e3", "7"}
			v.SetString(nums[r.IntN(len(nums))])
			return
		}
		strs := []string{"", "a", "<&>\"\\\n\u2028", "\xff", strings.Repeat("x", 40)}
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int64N(200) - 100)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.Uint64N(200))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(r.NormFloat64() * 1e3)
	case reflect.Interface:
		vals := []any{nil, 1, "s", []any{true}, map[string]any{"k": nil}}
		if x := vals[r.IntN(len(vals))]; x != nil {
			v.Set(reflect.ValueOf(x))
		}
	}
}

// TestOutputSchemaInexact checks that a derived schema that asserts more
// than the Go type guarantees is reported inexact, so that its results
// are validated: constraints from tags, required on an omitempty field,
// and types that describe themselves.
func TestOutputSchemaInexact(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"minimum=1"`
		}](),
		reflect.TypeFor[struct {
			E string `json:"e" jsonschema:"enum=a,enum=b"`
		}](),
		reflect.TypeFor[struct {
			L []string `json:"l" jsonschema:"minItems=1"`
		}](),
		reflect.TypeFor[struct {
			S string `json:"s,omitempty" jsonschema:"required"`
		}](),
		reflect.TypeFor[struct {
			N int `json:"n" jsonschema_extras:"multipleOf=2"`
		}](),
		reflect.TypeFor[[]struct {
			P *string `json:"p" jsonschema:"pattern=^a"`
		}](),
		reflect.TypeFor[struct {
			C fitCustom `json:"c"`
		}](),
	} {
		raw, exact, err := Output(typ)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if exact {
			t.Errorf("%v: exact, but its schema asserts more than the type: %s", typ, raw)
		}
	}
	// Annotations assert nothing.
	_, exact, err := Output(reflect.TypeFor[struct {
		S string `json:"s" jsonschema:"title=S,description=The s,format=email,example=x,default=y"`
		H string `json:"h" jsonschema_extras:"x-mcp-header=H"`
	}]())
	if err != nil || !exact {
		t.Errorf("annotations only: exact %v, %v", exact, err)
	}
}

type fitCustom struct{ A int }

func (fitCustom) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

// TestOutputSchemaShapes pins the fitted schema of a few members.
func TestOutputSchemaShapes(t *testing.T) {
	raw, _, err := Output(reflect.TypeFor[fitAll]())
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"list":     `{"items":{"type":"string"},"type":["array","null"]}`,
		"bytes":    `{"contentEncoding":"base64","type":["string","null"]}`,
		"myBytes":  `{"contentEncoding":"base64","type":["string","null"]}`,
		"num":      `{"type":"number"}`,
		"numStr":   `{"type":"string"}`,
		"intKeys":  `{"additionalProperties":false,"patternProperties":{"^-?[0-9]+$":{"type":"string"}},"type":["object","null"]}`,
		"textKeys": `{"additionalProperties":{"type":"integer"},"type":["object","null"]}`,
		"url":      `{}`,
		"addr":     `{}`,
		"text":     `{}`,
		"selfJSON": `{}`,
		"ip":       `{"type":"string"}`, // MarshalText writes "" for nil
		"hidden":   `{}`,
		"-":        `{}`,
		"quoted":   `{"type":["string","null"]}`,
		"nilSlice": `{"anyOf":[{"items":{"type":"integer"},"type":["array","null"]},{"type":"null"}]}`,
		"desc":     `{"description":"A description, with a comma","type":"string"}`,
	} {
		if got := string(s.Properties[name]); got != want {
			t.Errorf("%s: %s\nwant %s", name, got, want)
		}
	}
	if _, ok := s.Properties["C"]; !ok {
		t.Errorf("the conflicting member C is no longer described")
	}
	for _, r := range s.Required {
		switch r {
		case "C", "e", "el", "opt", "zero":
			t.Errorf("%q is required, but encoding/json may leave it out", r)
		}
	}
	if !strings.Contains(strings.Join(s.Required, ","), "d") {
		t.Errorf("required %v lost the promoted member d", s.Required)
	}
}

// TestOutputKeepsInputSchemas checks that fitting is for results only: the
// schema For derives for arguments does not accept null for a slice.
func TestOutputKeepsInputSchemas(t *testing.T) {
	in, err := For(reflect.TypeFor[struct {
		L []string `json:"l"`
	}]())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(in), "null") {
		t.Errorf("input schema accepts null: %s", in)
	}
}
