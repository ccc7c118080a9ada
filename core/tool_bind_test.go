package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpfn/mcpfn/internal/jsonwire"

	"github.com/go-json-experiment/json/jsontext"
)

// The struct types the fast binder is checked on.
type (
	bindInts struct {
		I   int
		I8  int8  `json:"i8"`
		I16 int16 `json:"i16"`
		I32 int32 `json:"i32"`
		I64 int64 `json:"i64"`
	}
	bindUints struct {
		U   uint   `json:"u"`
		U8  uint8  `json:"u8"`
		U16 uint16 `json:"u16"`
		U32 uint32 `json:"u32"`
		U64 uint64 `json:"u64"`
	}
	bindFloats struct {
		F32 float32 `json:"f32"`
		F64 float64 `json:"f64"`
	}
	bindMixed struct {
		S      string   `json:"s"`
		B      bool     `json:"b,omitempty"`
		N      bindInt  `json:"n,omitzero"`
		Skip   int      `json:"-"`
		Dash   int      `json:"-,"`
		hidden int      // unexported: the decoder ignores it
		Plain  string   // no tag: the Go name
		L      bindStr  `json:"l,omitempty,omitzero"`
		E      int      `json:"é"`
		Empty  uint16   `json:""`
		Fl     bindF64  `json:"fl"`
		Slice  []string `json:"-"` // ignored, so any type
		Amp    int      `json:"<a&b>"`
	}
	bindEmpty struct{}
	// bindMany has more fields than bind searches linearly.
	bindMany struct {
		A, B, C, D, E, F, G, H, I, J int
		K                            string `json:"k"`
	}
)

type (
	bindInt int
	bindStr string
	bindF64 float64
)

// Types that decode themselves, for the eligibility test.
type (
	bindText    string
	bindJSON    int
	bindJSONv2  int
	bindSelf    struct{ A int }
	bindSelfPtr struct{ A int }
)

func (*bindText) UnmarshalText([]byte) error                       { return nil }
func (bindJSON) UnmarshalJSON([]byte) error                        { return nil }
func (*bindJSONv2) UnmarshalJSONFrom(*jsontext.Decoder) error      { return nil }
func (bindSelf) UnmarshalJSON([]byte) error                        { return nil }
func (*bindSelfPtr) UnmarshalJSONFrom(dec *jsontext.Decoder) error { return dec.SkipValue() }

// sameValue reports whether a and b are deeply equal and print alike, so
// that -0 and 0 differ, as do strings that differ in invalid bytes.
func sameValue(a, b any) bool {
	return reflect.DeepEqual(a, b) && fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

// fastVsSlow binds raw with fb into T and with the decoder, and fails t
// when fb reports success with another value than the decoder's, or where
// the decoder fails. It returns whether fb bound raw.
func fastVsSlow[T any](t testing.TB, fb *fastBinder, raw []byte) (T, bool) {
	t.Helper()
	var fast T
	ok := fb.bind(raw, unsafe.Pointer(&fast))
	slow, err := bindValidatedWith[T](raw, bindCheckedOptions)
	if ok {
		if err != nil {
			t.Fatalf("%T %s: fast bound %#v, the decoder failed: %v", fast, raw, fast, err)
		}
		if !sameValue(fast, slow) {
			t.Fatalf("%T %s: fast bound %#v, the decoder %#v", fast, raw, fast, slow)
		}
	}
	return fast, ok
}

// bindCase is one input of the table: the type, the arguments, whether the
// fast binder binds them (else it defers to the decoder), and for bound
// input the value (checked on top of the decoder's agreement).
type bindCase struct {
	typ  string
	json string
	ok   bool
	want any
}

var bindCases = []bindCase{
	// Integers of every size, their bounds and past them.
	{"ints", `{"I":1,"i8":-128,"i16":32767,"i32":-2147483648,"i64":9223372036854775807}`, true,
		bindInts{1, -128, 32767, -2147483648, 9223372036854775807}},
	{"ints", `{"i8":127,"i16":-32768,"i32":2147483647,"i64":-9223372036854775808}`, true,
		bindInts{0, 127, -32768, 2147483647, -9223372036854775808}},
	{"ints", `{"I":9223372036854775807}`, true, bindInts{I: 9223372036854775807}},
	{"ints", `{"I":-999999999999999999,"i64":999999999999999999}`, true,
		bindInts{I: -999999999999999999, I64: 999999999999999999}},
	{"ints", `{"I":-1000000000000000000,"i64":1000000000000000000}`, true,
		bindInts{I: -1000000000000000000, I64: 1000000000000000000}},
	{"ints", `{"i32":999999999999999999}`, false, nil},
	{"ints", `{"I":-0}`, true, bindInts{}},
	{"ints", `{"I":0}`, true, bindInts{}},
	{"ints", `{"i8":128}`, false, nil},
	{"ints", `{"i8":-129}`, false, nil},
	{"ints", `{"i16":32768}`, false, nil},
	{"ints", `{"i32":-2147483649}`, false, nil},
	{"ints", `{"i64":9223372036854775808}`, false, nil},
	{"ints", `{"I":99999999999999999999999}`, false, nil},
	{"ints", `{"I":1.0}`, false, nil}, // the decoder's canonical retry binds 1
	{"ints", `{"I":1e2}`, false, nil},
	{"ints", `{"I":1E+0}`, false, nil},
	{"ints", `{"I":1.5}`, false, nil},
	{"ints", `{"I":-0.0}`, false, nil},
	{"ints", `{"I":"1"}`, false, nil},
	{"ints", `{"I":null}`, false, nil},
	{"ints", `{"I":true}`, false, nil},
	{"ints", `{"I":[1]}`, false, nil},
	{"ints", `{"I":{}}`, false, nil},
	{"ints", `{"i":1,"I8":2}`, true, bindInts{}}, // names match case-sensitively
	{"ints", " {\n\t\"I\" : 1 ,\r\"i8\" :2 } ", true, bindInts{I: 1, I8: 2}},
	{"ints", `{"x":{"I":5,"y":[1,{"z":null}],"s":"}\"]"},"I":3,"w":[[]]}`, true, bindInts{I: 3}},
	{"ints", `{"\u0049":1}`, false, nil},
	{"ints", `{"I\u0000":1}`, false, nil},
	{"ints", `{"\\":1}`, false, nil},
	{"ints", "{\"\xff\":1}", false, nil},
	{"ints", `{"I":1,"x":null}`, true, bindInts{I: 1}},
	{"ints", `{}`, true, bindInts{}},
	{"ints", `{ }`, true, bindInts{}},
	// Unsigned integers.
	{"uints", `{"u":0,"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615}`, true,
		bindUints{0, 255, 65535, 4294967295, 18446744073709551615}},
	{"uints", `{"u":18446744073709551615}`, true, bindUints{U: 18446744073709551615}},
	{"uints", `{"u64":999999999999999999,"u32":1}`, true, bindUints{U64: 999999999999999999, U32: 1}},
	{"uints", `{"u64":1000000000000000000}`, true, bindUints{U64: 1000000000000000000}},
	{"uints", `{"u32":999999999999999999}`, false, nil},
	{"uints", `{"u8":256}`, false, nil},
	{"uints", `{"u16":65536}`, false, nil},
	{"uints", `{"u32":4294967296}`, false, nil},
	{"uints", `{"u64":18446744073709551616}`, false, nil},
	{"uints", `{"u":-1}`, false, nil},
	{"uints", `{"u":-0}`, false, nil},
	{"uints", `{"u":1e1}`, false, nil},
	{"uints", `{"u":false}`, false, nil},
	// Floats.
	{"floats", `{"f32":0.1,"f64":1.5}`, true, bindFloats{0.1, 1.5}},
	{"floats", `{"f64":-0}`, true, nil},
	{"floats", `{"f64":-0.0,"f32":-0e5}`, true, nil},
	{"floats", `{"f64":2.5E+3,"f32":25e-1}`, true, bindFloats{2.5, 2500}},
	{"floats", `{"f64":1e-400}`, true, bindFloats{}},
	{"floats", `{"f64":123456789012345678901234567890}`, true, bindFloats{F64: 123456789012345678901234567890}},
	{"floats", `{"f32":3.4028235e38}`, true, bindFloats{F32: 3.4028235e38}},
	{"floats", `{"f32":16777217}`, true, bindFloats{F32: 16777216}},
	{"floats", `{"f64":1e400}`, false, nil},
	{"floats", `{"f64":-1e400}`, false, nil},
	{"floats", `{"f32":1e39}`, false, nil},
	{"floats", `{"f64":"1"}`, false, nil},
	{"floats", `{"f64":null}`, false, nil},
	// Strings, booleans, tags, named types.
	{"mixed", `{"s":"hello","b":true,"n":7,"-":5,"Plain":"p","l":"x","é":9,"Empty":3,"fl":0.5}`, true,
		bindMixed{S: "hello", B: true, N: 7, Dash: 5, Plain: "p", L: "x", E: 9, Empty: 3, Fl: 0.5}},
	{"mixed", `{"s":""}`, true, bindMixed{}},
	{"mixed", `{"s":"héllo ✓ 😀 <&>"}`, true, bindMixed{S: "héllo ✓ 😀 <&>"}},
	{"mixed", `{"s":"\u00e9"}`, false, nil},
	{"mixed", `{"s":"a\nb"}`, false, nil},
	{"mixed", `{"s":"\/"}`, false, nil},
	{"mixed", `{"s":"\ud800"}`, false, nil},
	{"mixed", `{"s":"\ud83d\ude00"}`, false, nil},
	{"mixed", "{\"s\":\"a\xffb\"}", false, nil},
	{"mixed", "{\"s\":\"\xed\xa0\x80\"}", false, nil}, // an encoded surrogate is invalid UTF-8
	{"mixed", `{"s":1}`, false, nil},
	{"mixed", `{"s":null}`, false, nil},
	{"mixed", `{"s":["a"]}`, false, nil},
	{"mixed", `{"b":false}`, true, bindMixed{}},
	{"mixed", `{"b":"true"}`, false, nil},
	{"mixed", `{"b":1}`, false, nil},
	{"mixed", `{"b":null}`, false, nil},
	{"mixed", `{"Skip":5,"hidden":1,"Slice":["a"],"S":"x","plain":"y","L":"z","É":1,"e":2}`, true, bindMixed{}},
	{"mixed", `{"n":-3,"fl":-1e-3}`, true, bindMixed{N: -3, Fl: -1e-3}},
	{"mixed", `{"n":1.5}`, false, nil},
	{"mixed", `{"Empty":-1}`, false, nil},
	{"mixed", `{"\u00e9":2}`, false, nil},
	{"mixed", `{"<a&b>":2}`, true, bindMixed{Amp: 2}},
	{"mixed", `{"\u003ca&b>":2}`, false, nil},
	// No fields; many fields (the map lookup).
	{"empty", `{}`, true, bindEmpty{}},
	{"empty", `{"a":1,"b":{"c":[null]}}`, true, bindEmpty{}},
	{"many", `{"A":1,"J":10,"k":"K","j":3,"Z":0}`, true, bindMany{A: 1, J: 10, K: "K"}},
	{"many", `{"E":1,"k":null}`, false, nil},
}

// runBindCase checks one table input on its type and returns whether the
// fast binder bound it and the value it bound.
func runBindCase(t testing.TB, b map[string]*fastBinder, typ string, raw []byte) (any, bool) {
	fb := b[typ]
	switch typ {
	case "ints":
		return fastVsSlow[bindInts](t, fb, raw)
	case "uints":
		return fastVsSlow[bindUints](t, fb, raw)
	case "floats":
		return fastVsSlow[bindFloats](t, fb, raw)
	case "mixed":
		return fastVsSlow[bindMixed](t, fb, raw)
	case "empty":
		return fastVsSlow[bindEmpty](t, fb, raw)
	case "many":
		return fastVsSlow[bindMany](t, fb, raw)
	}
	t.Fatalf("unknown type %q", typ)
	return nil, false
}

// bindTypes are the binders of the table's types; every one is eligible.
func bindTypes(t testing.TB) map[string]*fastBinder {
	m := map[string]*fastBinder{}
	for name, typ := range map[string]reflect.Type{
		"ints":   reflect.TypeFor[bindInts](),
		"uints":  reflect.TypeFor[bindUints](),
		"floats": reflect.TypeFor[bindFloats](),
		"mixed":  reflect.TypeFor[bindMixed](),
		"empty":  reflect.TypeFor[bindEmpty](),
		"many":   reflect.TypeFor[bindMany](),
	} {
		if m[name] = newFastBinder(typ); m[name] == nil {
			t.Fatalf("%v is not eligible for the fast binder", typ)
		}
	}
	return m
}

// TestFastBindTable checks the fast binder against the decoder on every
// table input: where it binds, the decoder binds the same value; and it
// binds or defers exactly where the table says.
func TestFastBindTable(t *testing.T) {
	t.Parallel()
	binders := bindTypes(t)
	var bound, deferred int
	for _, c := range bindCases {
		raw := []byte(c.json)
		if !jsonwire.Valid(raw) || jsonwire.Check(raw) != nil {
			t.Fatalf("%s: not valid, checked arguments", c.json)
		}
		got, ok := runBindCase(t, binders, c.typ, raw)
		if ok != c.ok {
			t.Errorf("%s %s: fast bind ok = %v, want %v", c.typ, c.json, ok, c.ok)
			continue
		}
		if ok {
			bound++
			if c.want != nil && !sameValue(got, c.want) {
				t.Errorf("%s %s: bound %#v, want %#v", c.typ, c.json, got, c.want)
			}
		} else {
			deferred++
		}
	}
	if bound < 30 || deferred < 40 {
		t.Errorf("the table has %d bound and %d deferred inputs, want at least 30 and 40", bound, deferred)
	}
}

// TestFastBindNegativeZero checks that -0 reaches a float field as -0, as
// the decoder stores it (sameValue tells the two zeros apart).
func TestFastBindNegativeZero(t *testing.T) {
	t.Parallel()
	got, ok := fastVsSlow[bindFloats](t, newFastBinder(reflect.TypeFor[bindFloats]()), []byte(`{"f64":-0,"f32":-0.0}`))
	if !ok || fmt.Sprintf("%v %v", got.F64, got.F32) != "-0 -0" {
		t.Fatalf("bound %v %v (ok %v), want -0 -0", got.F64, got.F32, ok)
	}
	if sameValue(bindFloats{}, got) {
		t.Fatal("sameValue does not tell -0 from 0")
	}
}

// TestFastBindMalformed checks that bind defers, without panicking, on a
// member named twice (checkArguments refuses such arguments before
// binding; bind does not rely on it) and on input that is not one object.
func TestFastBindMalformed(t *testing.T) {
	t.Parallel()
	fb := newFastBinder(reflect.TypeFor[bindInts]())
	for _, raw := range []string{`{"I":1,"I":2}`, `{"I":1} {}`, `[1]`, `"I"`, ``, `{"I":1`, `{"I":1,}`, `{"I" 1}`, `{"I":1]`,
		`{"`, `{"I`, `{"I\"`, `{"I":`, `{"I":}`, `{"x":}`, `{"x":1 `, `{`, ` `,
		`{"I":01}`, `{"I":+1}`, `{"I":-}`, `{"I":1x}`, `{"I":Infinity}`} {
		var v bindInts
		if fb.bind([]byte(raw), unsafe.Pointer(&v)) {
			t.Errorf("%s: bound %+v, want a deferral", raw, v)
		}
	}
}

// TestBindArguments checks the binding a typed tool's handler uses: fast
// where it can, the decoder's result (from a zero value) where it defers,
// and the decoder's error where the decoder fails.
func TestBindArguments(t *testing.T) {
	t.Parallel()
	type add struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	fb := newFastBinder(reflect.TypeFor[add]())
	if fb == nil {
		t.Fatal("add is not eligible")
	}
	for _, c := range []struct {
		raw  string
		want add
		err  bool
	}{
		{`{"a":40,"b":2}`, add{40, 2}, false},
		{`{"a":40,"b":2.0}`, add{40, 2}, false}, // the decoder's canonical retry
		{`{"a":40,"b":1e1}`, add{40, 10}, false},
		{`{"a":40,"b":null}`, add{40, 0}, false}, // deferred after a was set
		{`{"a":40,"b":"2"}`, add{}, true},
		{`{"a":40,"b":99999999999999999999}`, add{}, true},
	} {
		got, err := bindArguments[add](fb, []byte(c.raw))
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("%s: bound %+v, %v; want %+v (error %v)", c.raw, got, err, c.want, c.err)
		}
	}
}

// TestBindArgumentsAllocations: binding {"a":40,"b":2} on the fast path
// allocates nothing (AllocsPerRun cannot run in parallel tests).
func TestBindArgumentsAllocations(t *testing.T) {
	type add struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	fb := newFastBinder(reflect.TypeFor[add]())
	raw := []byte(`{"a":40,"b":2}`)
	if n := testing.AllocsPerRun(100, func() {
		if v, err := bindArguments[add](fb, raw); err != nil || v.A != 40 || v.B != 2 {
			t.Fatal(v, err)
		}
	}); n != 0 {
		t.Errorf("fast binding allocates %v times, want 0", n)
	}
}

// oneField returns struct{ A T } with tag on its field. It builds the type
// at run time, so tags go vet refuses in source can be tried too.
func oneField[T any](tag reflect.StructTag) reflect.Type {
	return reflect.StructOf([]reflect.StructField{{Name: "A", Type: reflect.TypeFor[T](), Tag: tag}})
}

// ineligibleStructs returns struct types, keyed by what they show, whose
// fields or tags neither the fast binder nor the fast encoder handles.
func ineligibleStructs() map[string]reflect.Type {
	type inner struct{ A int }
	return map[string]reflect.Type{
		"pointer field":       reflect.TypeFor[struct{ P *int }](),
		"slice field":         reflect.TypeFor[struct{ S []int }](),
		"bytes field":         reflect.TypeFor[struct{ S []byte }](),
		"array field":         reflect.TypeFor[struct{ S [2]int }](),
		"map field":           reflect.TypeFor[struct{ M map[string]int }](),
		"struct field":        reflect.TypeFor[struct{ N inner }](),
		"interface field":     reflect.TypeFor[struct{ X any }](),
		"raw message field":   reflect.TypeFor[struct{ X json.RawMessage }](),
		"uintptr field":       reflect.TypeFor[struct{ U uintptr }](),
		"complex field":       reflect.TypeFor[struct{ C complex128 }](),
		"time.Time field":     reflect.TypeFor[struct{ T time.Time }](),
		"embedded unexported": reflect.TypeFor[struct{ inner }](),
		"embedded named int":  reflect.TypeFor[struct{ bindInt }](),
		"string option":       oneField[int](`json:"a,string"`),
		"inline option":       oneField[int](`json:"a,inline"`),
		"unknown option":      oneField[int](`json:"a,unknown"`),
		"format option":       oneField[float64](`json:"a,format:nonfinite"`),
		"trailing comma":      oneField[int](`json:"a,"`),
		"quoted name":         oneField[int](`json:"'a'"`),
		"name with backslash": oneField[int](`json:"a\\b"`),
		"control character":   oneField[int]("json:\"a\x01\""),
		"tag names a Go field": reflect.TypeFor[struct {
			A int
			B int `json:"A"`
		}](),
	}
}

// TestFastBinderEligibility checks which argument types get a fast binder.
func TestFastBinderEligibility(t *testing.T) {
	t.Parallel()
	ineligible := map[string]reflect.Type{
		"pointer to struct":   reflect.TypeFor[*bindInts](),
		"map":                 reflect.TypeFor[map[string]any](),
		"int":                 reflect.TypeFor[int](),
		"any":                 reflect.TypeFor[any](),
		"time.Duration field": reflect.TypeFor[struct{ D time.Duration }](),
		"TextUnmarshaler":     reflect.TypeFor[struct{ T bindText }](),
		"json.Unmarshaler":    reflect.TypeFor[struct{ T bindJSON }](),
		"UnmarshalerFrom":     reflect.TypeFor[struct{ T bindJSONv2 }](),
		"struct Unmarshaler":  reflect.TypeFor[bindSelf](),
		"*struct Unmarshaler": reflect.TypeFor[bindSelfPtr](),
		"embedded":            reflect.TypeFor[struct{ bindInts }](),
		"embedded pointer":    reflect.TypeFor[struct{ *bindInts }](),
		"case option":         oneField[int](`json:"a,case:ignore"`),
		"nocase option":       oneField[int](`json:"a,nocase"`),
		// Built at run time: go vet refuses this tag in source.
		"duplicate tag names": reflect.StructOf([]reflect.StructField{
			{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
			{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		}),
	}
	maps.Copy(ineligible, ineligibleStructs())
	for name, typ := range ineligible {
		if newFastBinder(typ) != nil {
			t.Errorf("%s (%v): eligible, want not", name, typ)
		}
	}
	type add struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	type named struct {
		L bindInt
		S bindStr `json:",omitempty"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[add](), reflect.TypeFor[named](), reflect.TypeFor[struct{}]()} {
		if newFastBinder(typ) == nil {
			t.Errorf("%v: not eligible, want eligible", typ)
		}
	}
	var names []string
	for _, f := range newFastBinder(reflect.TypeFor[bindMixed]()).fields {
		names = append(names, f.name)
	}
	if got, want := strings.Join(names, " "), "s b n - Plain l é Empty fl <a&b>"; got != want {
		t.Errorf("bindMixed's JSON names are %q, want %q", got, want)
	}
}

// FuzzFastBind checks the fast binder against the decoder on arbitrary
// arguments: on any valid object that checkArguments passes, where the
// fast binder binds, the decoder must succeed with the same value.
func FuzzFastBind(f *testing.F) {
	for _, c := range bindCases {
		f.Add([]byte(c.json))
	}
	for _, s := range []string{
		`{"I":1,"i8":2,"u":3,"f64":4,"s":"5","b":true,"n":6,"fl":7.5,"k":"8","A":9}`,
		`{"u64":18446744073709551615,"f32":1e-46,"i16":-32768,"l":"ü","-":0}`,
	} {
		f.Add([]byte(s))
	}
	binders := bindTypes(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsonwire.Valid(raw) || !jsonwire.IsObject(raw[jsonwire.SkipSpace(raw, 0):]) || jsonwire.Check(raw) != nil {
			return
		}
		for typ := range binders {
			runBindCase(t, binders, typ, raw)
		}
	})
}

// BenchmarkBindArguments binds {"a":40,"b":2} as a typed tool's handler
// does (fast) and with the decoder alone.
func BenchmarkBindArguments(b *testing.B) {
	type add struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	raw := []byte(`{"a":40,"b":2}`)
	for _, c := range []struct {
		name string
		fb   *fastBinder
	}{{"fast", newFastBinder(reflect.TypeFor[add]())}, {"decoder", nil}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v, err := bindArguments[add](c.fb, raw); err != nil || v.B != 2 {
					b.Fatal(v, err)
				}
			}
		})
	}
}
