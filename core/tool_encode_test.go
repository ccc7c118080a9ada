package core

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// The types the fast encoder is checked on.
type (
	encInts struct {
		I   int
		I8  int8  `json:"i8"`
		I16 int16 `json:"i16,omitempty"`
		I32 int32 `json:"i32,omitzero"`
		I64 int64 `json:"i64"`
	}
	encUints struct {
		U   uint   `json:"u"`
		U8  uint8  `json:"u8,omitempty"`
		U16 uint16 `json:"u16"`
		U32 uint32 `json:"u32,omitzero"`
		U64 uint64 `json:"u64"`
	}
	encFloats struct {
		F32  float32 `json:"f32"`
		F64  float64 `json:"f64"`
		F32o float32 `json:"f32o,omitempty"`
		F64o float64 `json:"f64o,omitzero"`
	}
	encMixed struct {
		S      string        `json:"s"`
		B      bool          `json:"b,omitempty"`
		N      bindInt       `json:"n,omitzero"`
		Skip   int           `json:"-"`
		Dash   int           `json:"-,"`
		hidden int           // unexported: encoding/json skips it
		Plain  string        // no tag: the Go name
		L      bindStr       `json:"l,omitempty,omitzero"`
		E      string        `json:"é,omitempty"`
		Empty  uint16        `json:""`
		Fl     bindF64       `json:"fl"`
		Slice  []string      `json:"-"` // skipped, so any type
		Amp    bool          `json:"<a&b>"`
		D      time.Duration `json:"d,omitempty"`
	}
	encSum struct {
		Sum int `json:"sum"`
	}
)

// Types that encode themselves or report their zero, for the eligibility
// test.
type (
	encText      int
	encJSON      string
	encJSONTo    bool
	encZero      int
	encZeroPtr   string
	encSelf      struct{ A int }
	encSelfPtr   struct{ A int }
	encTextPtr   float64
	encNamedJSON int
)

func (encText) MarshalText() ([]byte, error)                 { return []byte("t"), nil }
func (encJSON) MarshalJSON() ([]byte, error)                 { return []byte("1"), nil }
func (*encJSONTo) MarshalJSONTo(enc *jsontext.Encoder) error { return enc.WriteToken(jsontext.Null) }
func (encZero) IsZero() bool                                 { return true }
func (*encZeroPtr) IsZero() bool                             { return true }
func (encSelf) MarshalJSON() ([]byte, error)                 { return []byte("{}"), nil }
func (*encSelfPtr) MarshalText() ([]byte, error)             { return []byte("x"), nil }
func (*encTextPtr) MarshalText() ([]byte, error)             { return []byte("x"), nil }
func (*encNamedJSON) MarshalJSON() ([]byte, error)           { return []byte("1"), nil }

// fastVsMarshal encodes v with e and with json.Marshal and fails t when e
// writes other bytes than json.Marshal, or writes where json.Marshal
// fails. It returns whether e wrote v.
func fastVsMarshal[T any](t testing.TB, e *fastEncoder, v T) bool {
	t.Helper()
	got, ok := e.encode(unsafe.Pointer(&v))
	want, err := json.Marshal(v)
	if ok {
		if err != nil {
			t.Fatalf("%#v: fast wrote %s, json.Marshal failed: %v", v, got, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%#v: fast wrote\n%s\njson.Marshal\n%s", v, got, want)
		}
	}
	return ok
}

// encoderOf returns the fast encoder of T and fails t when there is none.
func encoderOf[T any](t testing.TB) *fastEncoder {
	t.Helper()
	e := newFastEncoder(reflect.TypeFor[T]())
	if e == nil {
		t.Fatalf("%v is not eligible for the fast encoder", reflect.TypeFor[T]())
	}
	return e
}

// encCase is one value of the table and whether the fast encoder writes
// it (else json.Marshal does).
type encCase struct {
	v  any
	ok bool
}

const (
	maxInt64  = math.MaxInt64
	minInt64  = math.MinInt64
	maxUint64 = math.MaxUint64
)

var encCases = []encCase{
	{encInts{}, true},
	{encInts{I: 1, I8: -128, I16: 32767, I32: -2147483648, I64: maxInt64}, true},
	{encInts{I: minInt64, I8: 127, I16: -32768, I32: 2147483647, I64: minInt64}, true},
	{encInts{I: -1, I16: -1}, true},
	{encUints{}, true},
	{encUints{U: maxUint64, U8: 255, U16: 65535, U32: 4294967295, U64: maxUint64}, true},
	{encUints{U8: 1}, true},
	{encFloats{}, true},
	{encFloats{F32: 0.1, F64: 0.1, F32o: 1.5, F64o: -2.5}, true},
	{encFloats{F32: float32(math.Copysign(0, -1)), F64: math.Copysign(0, -1)}, true},
	{encFloats{F32o: float32(math.Copysign(0, -1)), F64o: math.Copysign(0, -1)}, true}, // -0 is omitted
	{encFloats{F32: 1e-7, F64: 1e-7, F32o: 1e-6, F64o: 1e-6}, true},
	{encFloats{F32: 1e21, F64: 1e21, F32o: 9.999999e20, F64o: 999999999999999900000}, true},
	{encFloats{F32: 1e20, F64: 123456789e13, F32o: 3.4028235e38, F64o: math.MaxFloat64}, true},
	{encFloats{F32: math.SmallestNonzeroFloat32, F64: math.SmallestNonzeroFloat64, F64o: 5e-324}, true},
	{encFloats{F32: 1e-10, F64: -1.5e-300, F32o: -1e-45, F64o: 2.2250738585072014e-308}, true},
	{encFloats{F64: 1e100, F32: 1e30}, true},
	{encFloats{F64: math.NaN()}, false},
	{encFloats{F64: math.Inf(1)}, false},
	{encFloats{F32: float32(math.Inf(-1))}, false},
	{encFloats{F64o: math.NaN()}, false},
	{encMixed{}, true},
	{encMixed{S: "hello", B: true, N: 7, Skip: 1, Dash: 5, hidden: 3, Plain: "p", L: "x", E: "é",
		Empty: 3, Fl: 0.5, Slice: []string{"a"}, Amp: true, D: time.Second}, true},
	{encMixed{S: `<script>&"quoted"\back</script>`}, true},
	{encMixed{S: "nul\x00 tab\t nl\n cr\r bs\b ff\f del\x7f \x1f"}, true},
	{encMixed{S: "line\u2028para\u2029"}, true},
	{encMixed{S: "bad \xff\xfe utf-8 \xed\xa0\x80 \xc3"}, true},
	{encMixed{Plain: "ü€😀", L: "\u00e9"}, true},
	{encMixed{S: "\ufffd"}, false}, // json.Marshal writes U+FFFD as it is
	{encMixed{Plain: "a\uFFFDb"}, false},
	{encMixed{N: -1, Fl: -1e-9, D: -1}, true},
	{encSum{}, true},
	{encSum{Sum: 42}, true},
	{0, true},
	{-42, true},
	{int8(-128), true},
	{uint64(maxUint64), true},
	{true, true},
	{false, true},
	{1.5, true},
	{float32(1e-7), true},
	{math.NaN(), false},
	{bindInt(7), true},
	{time.Duration(5), true},
	{struct{}{}, true},
}

// runEncCase checks one value with the encoder of its type and returns
// whether the encoder wrote it.
func runEncCase(t testing.TB, v any) bool {
	switch v := v.(type) {
	case encInts:
		return fastVsMarshal(t, encoderOf[encInts](t), v)
	case encUints:
		return fastVsMarshal(t, encoderOf[encUints](t), v)
	case encFloats:
		return fastVsMarshal(t, encoderOf[encFloats](t), v)
	case encMixed:
		return fastVsMarshal(t, encoderOf[encMixed](t), v)
	case encSum:
		return fastVsMarshal(t, encoderOf[encSum](t), v)
	case int:
		return fastVsMarshal(t, encoderOf[int](t), v)
	case int8:
		return fastVsMarshal(t, encoderOf[int8](t), v)
	case uint64:
		return fastVsMarshal(t, encoderOf[uint64](t), v)
	case bool:
		return fastVsMarshal(t, encoderOf[bool](t), v)
	case float64:
		return fastVsMarshal(t, encoderOf[float64](t), v)
	case float32:
		return fastVsMarshal(t, encoderOf[float32](t), v)
	case bindInt:
		return fastVsMarshal(t, encoderOf[bindInt](t), v)
	case time.Duration:
		return fastVsMarshal(t, encoderOf[time.Duration](t), v)
	case struct{}:
		return fastVsMarshal(t, encoderOf[struct{}](t), v)
	}
	t.Fatalf("no encoder for %T", v)
	return false
}

// TestFastEncodeTable checks the fast encoder against json.Marshal on
// every table value: where it writes, it writes json.Marshal's bytes; and
// it writes or defers exactly where the table says.
func TestFastEncodeTable(t *testing.T) {
	t.Parallel()
	for _, c := range encCases {
		if ok := runEncCase(t, c.v); ok != c.ok {
			t.Errorf("%#v: fast encode ok = %v, want %v", c.v, ok, c.ok)
		}
	}
}

// TestFastEncodeKeys checks the keys as the encoder writes them: declared
// order, skipped fields, Go names for empty tags, "-" from "-,", and
// HTML-escaped characters, as encoding/json writes them.
func TestFastEncodeKeys(t *testing.T) {
	t.Parallel()
	got, ok := encoderOf[encMixed](t).encode(unsafe.Pointer(&encMixed{B: true, N: 1, L: "l", E: "e", D: 1}))
	want := `{"s":"","b":true,"n":1,"-":0,"Plain":"","l":"l","é":"e","Empty":0,"fl":0,"\u003ca\u0026b\u003e":false,"d":1}`
	if !ok || string(got) != want {
		t.Fatalf("wrote %s (ok %v), want %s", got, ok, want)
	}
}

// TestEncodeResult checks the result a typed handler's value becomes:
// json.Marshal's bytes as its text block and structuredContent, on the
// fast path and where it defers; and json.Marshal's error for a value it
// refuses.
func TestEncodeResult(t *testing.T) {
	t.Parallel()
	e := encoderOf[encFloats](t)
	for _, v := range []encFloats{{F64: 1.5}, {F64: 1e-7}, {F32: 3}} {
		r, err := encodeResult(e, &v, true)
		want, _ := json.Marshal(v)
		if err != nil || string(r.StructuredContent.(json.RawMessage)) != string(want) ||
			len(r.Content) != 1 || r.Content[0].(*TextContent).Text != string(want) {
			t.Errorf("%+v: result %+v, %v; want %s", v, r, err, want)
		}
		if r, err := encodeResult(e, &v, false); err != nil || r.StructuredContent != nil {
			t.Errorf("%+v unstructured: structuredContent %v, %v", v, r.StructuredContent, err)
		}
	}
	v := encFloats{F64: math.Inf(-1)}
	_, err := encodeResult(e, &v, true)
	_, want := json.Marshal(v)
	if err == nil || want == nil || !strings.Contains(err.Error(), want.Error()) {
		t.Errorf("infinite float: error %v, want json.Marshal's %v", err, want)
	}
	s := encMixed{S: "\ufffd"}
	r, err := encodeResult(encoderOf[encMixed](t), &s, true)
	if want, _ := json.Marshal(s); err != nil || string(r.StructuredContent.(json.RawMessage)) != string(want) {
		t.Errorf("U+FFFD: result %+v, %v; want %s", r, err, want)
	}
	// Ineligible types go to json.Marshal.
	m := map[string]int{"b": 2, "a": 1}
	if r, err := encodeResult(nil, &m, true); err != nil || string(r.StructuredContent.(json.RawMessage)) != `{"a":1,"b":2}` {
		t.Errorf("map: result %+v, %v", r, err)
	}
}

// TestEncodeResultAllocations: the fast path allocates the result, its
// bytes and the json.RawMessage that structuredContent (an any) holds,
// nothing else: the value is not boxed (AllocsPerRun cannot run in
// parallel tests).
func TestEncodeResultAllocations(t *testing.T) {
	e := encoderOf[encSum](t)
	v := encSum{Sum: 123456}
	if n := testing.AllocsPerRun(100, func() {
		if r, err := encodeResult(e, &v, true); err != nil || r == nil {
			t.Fatal(r, err)
		}
	}); n != 3 {
		t.Errorf("encoding a result allocates %v times, want 3", n)
	}
}

// TestFastEncoderEligibility checks which result types get a fast
// encoder.
func TestFastEncoderEligibility(t *testing.T) {
	t.Parallel()
	ineligible := map[string]reflect.Type{
		"pointer to struct":    reflect.TypeFor[*encSum](),
		"pointer to int":       reflect.TypeFor[*int](),
		"string":               reflect.TypeFor[string](),
		"map":                  reflect.TypeFor[map[string]any](),
		"slice":                reflect.TypeFor[[]int](),
		"any":                  reflect.TypeFor[any](),
		"error":                reflect.TypeFor[error](),
		"uintptr":              reflect.TypeFor[uintptr](),
		"complex":              reflect.TypeFor[complex128](),
		"json.Number":          reflect.TypeFor[json.Number](),
		"json.RawMessage":      reflect.TypeFor[json.RawMessage](),
		"CallToolResult":       reflect.TypeFor[*CallToolResult](),
		"time.Time":            reflect.TypeFor[time.Time](),
		"Marshaler int":        reflect.TypeFor[encJSON](),
		"TextMarshaler int":    reflect.TypeFor[encText](),
		"*TextMarshaler float": reflect.TypeFor[encTextPtr](),
		"json.Number field":    reflect.TypeFor[struct{ X json.Number }](),
		"TextMarshaler field":  reflect.TypeFor[struct{ T encText }](),
		"Marshaler field":      reflect.TypeFor[struct{ T encJSON }](),
		"*Marshaler field":     reflect.TypeFor[struct{ T encNamedJSON }](),
		"*MarshalerTo field":   reflect.TypeFor[struct{ T encJSONTo }](),
		"*TextMarshaler field": reflect.TypeFor[struct{ T encTextPtr }](),
		"IsZero field":         reflect.TypeFor[struct{ Z encZero }](),
		"*IsZero field omitzero": reflect.TypeFor[struct {
			Z encZeroPtr `json:"z,omitzero"`
		}](),
		"*IsZero field":           reflect.TypeFor[struct{ Z encZeroPtr }](), // no omitzero: still a doubt
		"struct Marshaler":        reflect.TypeFor[encSelf](),
		"*struct TextMarshaler":   reflect.TypeFor[encSelfPtr](),
		"embedded":                reflect.TypeFor[struct{ encSum }](),
		"embedded pointer":        reflect.TypeFor[struct{ *encSum }](),
		"string option on string": oneField[string](`json:",string"`),
		// encoding/json ignores a name with a character outside its set
		// (isValidTag) and writes the Go name; agreesWithMarshal sees it.
		"invalid tag name": oneField[int](`json:"a✓"`),
		// Built at run time: go vet refuses this tag in source.
		"duplicate tag names": reflect.StructOf([]reflect.StructField{
			{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
			{Name: "B", Type: reflect.TypeFor[string](), Tag: `json:"x"`},
		}),
	}
	maps.Copy(ineligible, ineligibleStructs())
	for name, typ := range ineligible {
		if newFastEncoder(typ) != nil {
			t.Errorf("%s (%v): eligible, want not", name, typ)
		}
	}
	type unexportedOnly struct{ a, b int }
	for _, typ := range []reflect.Type{
		reflect.TypeFor[encSum](), reflect.TypeFor[encMixed](), reflect.TypeFor[struct{}](),
		reflect.TypeFor[unexportedOnly](),
		reflect.TypeFor[int](), reflect.TypeFor[uint8](), reflect.TypeFor[bool](), reflect.TypeFor[float32](),
	} {
		if newFastEncoder(typ) == nil {
			t.Errorf("%v: not eligible, want eligible", typ)
		}
	}
	var names []string
	for _, f := range encoderOf[encMixed](t).fields {
		names = append(names, f.key)
	}
	if got, want := strings.Join(names, " "), `,"s": ,"b": ,"n": ,"-": ,"Plain": ,"l": ,"é": ,"Empty": ,"fl": ,"\u003ca\u0026b\u003e": ,"d":`; got != want {
		t.Errorf("encMixed's keys are %q, want %q", got, want)
	}
}

// FuzzFastEncode checks the fast encoder against json.Marshal on values
// the fuzzer chooses: every integer size from i and u, floats from f64,
// f32 and the bits of u, strings s and s2 in every string field; where the
// encoder writes, it writes json.Marshal's bytes, and it defers only on a
// NaN or an infinity (json.Marshal fails) or a string holding U+FFFD.
func FuzzFastEncode(f *testing.F) {
	f.Add("hello", "<&>\u2028\u2029", int64(-1), uint64(1), 0.1, float32(1e-7), true)
	f.Add("\xff\xfe", "\ufffd", int64(math.MinInt64), uint64(math.MaxUint64), 1e21, float32(1e21), false)
	f.Add("", "a\"b\\c\x00\x1f\x7f", int64(math.MaxInt64), uint64(0), math.Copysign(0, -1), float32(-1e-45), true)
	f.Add("é😀", "\xed\xa0\x80", int64(0), uint64(0x7ff0000000000001), 5e-324, float32(3.4028235e38), false)
	ints, uints, floats, mixed, sum := encoderOf[encInts](f), encoderOf[encUints](f), encoderOf[encFloats](f), encoderOf[encMixed](f), encoderOf[encSum](f)
	bare64, bare32 := encoderOf[float64](f), encoderOf[float32](f)
	f.Fuzz(func(t *testing.T, s, s2 string, i int64, u uint64, f64 float64, f32 float32, b bool) {
		bad := func(fs ...float64) bool {
			for _, x := range fs {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return true
				}
			}
			return false
		}
		want := func(ok, wantOK bool, v any) {
			t.Helper()
			if ok != wantOK {
				t.Fatalf("%#v: fast encode ok = %v, want %v", v, ok, wantOK)
			}
		}
		iv := encInts{I: int(i), I8: int8(i), I16: int16(i), I32: int32(i >> 3), I64: i}
		want(fastVsMarshal(t, ints, iv), true, iv)
		uv := encUints{U: uint(u), U8: uint8(u), U16: uint16(u), U32: uint32(u >> 5), U64: u}
		want(fastVsMarshal(t, uints, uv), true, uv)
		bf64, bf32 := math.Float64frombits(u), math.Float32frombits(uint32(u))
		for _, fv := range []encFloats{{f32, f64, bf32, bf64}, {bf32, bf64, f32, f64}, {float32(f64), float64(f32), -f32, -f64}} {
			want(fastVsMarshal(t, floats, fv), !bad(float64(fv.F32), fv.F64, float64(fv.F32o), fv.F64o), fv)
		}
		want(fastVsMarshal(t, bare64, f64), !bad(f64), f64)
		want(fastVsMarshal(t, bare64, bf64), !bad(bf64), bf64)
		want(fastVsMarshal(t, bare32, f32), !bad(float64(f32)), f32)
		mv := encMixed{S: s, B: b, N: bindInt(i), Plain: s2, L: bindStr(s2), E: s, Empty: uint16(u),
			Fl: bindF64(bf64), Amp: !b, D: time.Duration(i)}
		fffd := strings.Contains(s+s2, "\ufffd")
		want(fastVsMarshal(t, mixed, mv), !fffd && !bad(bf64), mv)
		want(fastVsMarshal(t, sum, encSum{int(i)}), true, i)
	})
}

// BenchmarkTypedResult encodes a Sum-like result as a typed tool's handler
// does (fast) and with json.Marshal alone.
func BenchmarkTypedResult(b *testing.B) {
	v := encSum{Sum: 42}
	for _, c := range []struct {
		name string
		enc  *fastEncoder
	}{{"fast", encoderOf[encSum](b)}, {"marshal", nil}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r, err := encodeResult(c.enc, &v, true); err != nil || len(r.StructuredContent.(json.RawMessage)) != len(`{"sum":42}`) {
					b.Fatal(r, err)
				}
			}
		})
	}
}
