package core

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcpfn/mcpfn/internal/jsonwire"

	jsonv2 "github.com/go-json-experiment/json"
)

// encodeCallToolResult encodes a tools/call result for the request's era.
// st is nil for results not produced by a registered tool's handler.
func (r *Request) encodeCallToolResult(res *CallToolResult, st *serverTool) ([]byte, error) {
	b := r.resultBuffer(256)
	b = append(b, `{"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if c == nil {
			return nil, errors.New("nil content block")
		}
		if t, ok := c.(*TextContent); ok && t != nil && t.Annotations == nil && t.Meta == nil {
			// TextContent.MarshalJSON's bytes, without its own buffer.
			b = append(b, `{"type":"text","text":`...)
			b = jsonwire.AppendString(b, t.Text)
			b = append(b, '}')
			continue
		}
		cj, err := c.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(b, cj...)
	}
	b = append(b, "],"...)
	if res.StructuredContent != nil {
		sj, ok := res.StructuredContent.(json.RawMessage)
		if !ok {
			var err error
			if sj, err = json.Marshal(res.StructuredContent); err != nil {
				return nil, fmt.Errorf("encoding structuredContent: %w", err)
			}
		}
		if r.era.structuredContent(r.ProtocolVersion, st, sj) {
			b = append(b, `"structuredContent":`...)
			b = append(b, sj...)
			b = append(b, ',')
		}
	}
	if res.IsError {
		r.isError = true
		b = append(b, `"isError":true,`...)
	}
	b = r.resultTail(b, "", res.Meta, nil)
	b = append(b, '}')
	return b[:len(b):len(b)], nil // whoever appends to it copies
}

// A typed tool's result is usually a flat struct of scalars
// (struct{ Sum int `json:"sum"` }) or a bare scalar. encoding/json costs a
// reflective walk and the boxing of the value into an interface for it;
// fastEncoder writes that common shape directly from the value's memory,
// and hands anything it is not certain of back to json.Marshal
// (typedResult), so a call sends exactly the bytes json.Marshal would
// send. FuzzFastEncode checks the two against each other.

// fastEncoder encodes values of one type: a struct whose JSON fields are
// all scalars, or a bare scalar. It is built once per tool, at
// registration, and is safe for concurrent use (it is read-only after
// newFastEncoder).
type fastEncoder struct {
	fields []encField
	// bare: the type is a scalar, fields holds it alone (key "", offset
	// 0) and the output has no braces.
	bare bool
	// size is the output's length when every field is written and every
	// string is empty and needs no escape, or more: encode's first guess
	// at its buffer.
	size int
}

// encField is one JSON member of the struct: its key as encoding/json
// writes it (`,"name":`, the comma dropped for the first member written),
// its kind, its offset in the struct, whether it is omitted when zero
// (omitempty and omitzero agree on scalars: false, 0, -0 and ""), and its
// Go field index (for agreesWithMarshal).
type encField struct {
	key   string
	kind  reflect.Kind
	off   uintptr
	omit  bool
	index int
}

var (
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonMarshalerToType = reflect.TypeFor[jsonv2.MarshalerTo]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType        = reflect.TypeFor[interface{ IsZero() bool }]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
)

// newFastEncoder returns the encoder of t, or nil when t is not eligible.
// Eligible are the scalar kinds bool, int*, uint* (not uintptr) and
// float*, and structs (not pointers to them) whose JSON fields are each
// exported, not embedded, of kind bool, string, int*, uint* or float*,
// with a json tag that is absent, "-" (the field is skipped), "-," (the
// name "-"), or a name followed by the options omitempty and omitzero
// only (fieldName; the string option is not). Neither the struct nor a
// field's type (T or *T) may implement json.Marshaler, jsonv2.MarshalerTo
// or encoding.TextMarshaler, a field's type may not have an IsZero method
// (omitzero would call it), json.Number is excluded (encoding/json writes
// it as a number), and no two fields may share a name (encoding/json then
// writes neither). Unexported fields that are not embedded are skipped, as
// encoding/json skips them. A bare string is not eligible: typedResult
// has its own path for it.
//
// Finally newFastEncoder checks its reading of the type against
// encoding/json itself (agreesWithMarshal). Any doubt makes t ineligible:
// its results are encoded by json.Marshal alone.
func newFastEncoder(t reflect.Type) *fastEncoder {
	e := &fastEncoder{}
	switch {
	case t.Kind() == reflect.Struct:
		if hasMarshalMethod(t) {
			return nil
		}
		fields, ok := scalarFields(t, encKind)
		if !ok {
			return nil
		}
		for _, f := range fields {
			// json.Marshal of the name is the key encoding/json writes
			// (HTML-escaped); agreesWithMarshal confirms it.
			key, err := json.Marshal(f.name)
			if err != nil {
				return nil
			}
			_, opts, _ := strings.Cut(f.sf.Tag.Get("json"), ",")
			e.fields = append(e.fields, encField{
				key:   "," + string(key) + ":",
				kind:  f.sf.Type.Kind(),
				off:   f.sf.Offset,
				omit:  opts != "", // fieldName admits omitempty and omitzero only
				index: f.sf.Index[0],
			})
		}
	case t.Kind() != reflect.String && encKind(t):
		e.bare = true
		e.fields = []encField{{kind: t.Kind()}}
	default:
		return nil
	}
	e.size = 2
	for _, f := range e.fields {
		e.size += len(f.key) + maxScalarLen(f.kind)
	}
	if !e.agreesWithMarshal(t) {
		return nil
	}
	return e
}

// encKind reports whether values of t are scalars encode writes exactly
// as encoding/json does: the kinds bool, string, int*, uint* (not
// uintptr) and float*, without marshal or IsZero methods, and not
// json.Number.
func encKind(t reflect.Type) bool {
	return scalarKind(t.Kind()) && t != jsonNumberType && !hasMarshalMethod(t) && !implementsAny(t, isZeroerType)
}

// hasMarshalMethod reports whether t or *t encodes itself.
func hasMarshalMethod(t reflect.Type) bool {
	return implementsAny(t, jsonMarshalerType, jsonMarshalerToType, textMarshalerType)
}

// maxScalarLen is the longest output of encode for a value of kind k,
// strings aside (their quotes only).
func maxScalarLen(k reflect.Kind) int {
	switch k {
	case reflect.Bool:
		return len("false")
	case reflect.String:
		return len(`""`)
	case reflect.Float32, reflect.Float64:
		return len("-2.2250738585072014e-308")
	}
	return len("-9223372036854775808")
}

// agreesWithMarshal encodes three values of t, with encode and with
// json.Marshal, and reports whether the outputs are the same bytes: the
// zero value (every omitted field omitted) and two with a distinct
// non-zero value in every field (bools alternate between them; strings
// need escapes; floats take both of encoding/json's formats).
func (e *fastEncoder) agreesWithMarshal(t reflect.Type) bool {
	for probe := range 3 {
		v := reflect.New(t).Elem()
		for k, f := range e.fields {
			if probe == 0 {
				break
			}
			fv := v
			if !e.bare {
				fv = v.Field(f.index)
			}
			n := k%100 + 1
			switch f.kind {
			case reflect.Bool:
				fv.SetBool((k+probe)%2 == 0)
			case reflect.String:
				fv.SetString(strconv.Itoa(n) + "<&>\"\\\n\u2028\xff é")
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				fv.SetInt(int64(n * (2*probe - 3))) // negative, then positive
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				fv.SetUint(uint64(n * probe))
			case reflect.Float32, reflect.Float64:
				fv.SetFloat(float64(n) * []float64{0, 0.25, 1e-7}[probe])
			}
		}
		want, err := json.Marshal(v.Interface())
		if err != nil {
			return false
		}
		p := reflect.New(t)
		p.Elem().Set(v)
		got, ok := e.encode(p.UnsafePointer())
		if !ok || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}

// encodeStack bounds the estimated output that encode builds on its stack
// and copies out at its exact length; a longer one is built in a slice of
// the estimated size.
const encodeStack = 256

// encode returns the JSON encoding of the value at p, of the type e was
// built for, in a new slice (one allocation, unless escapes outgrow the
// estimate), and reports whether it wrote it; false means "not
// certain": the caller encodes with json.Marshal, which fails on a NaN or
// infinite float (encode reports false on those) and writes a string
// holding U+FFFD with the character as it is, where jsonwire.AppendString
// escapes it (encode reports false on those too).
func (e *fastEncoder) encode(p unsafe.Pointer) ([]byte, bool) {
	n := e.size
	for i := range e.fields {
		if f := &e.fields[i]; f.kind == reflect.String {
			n += len(*(*string)(unsafe.Add(p, f.off)))
		}
	}
	if n > encodeStack {
		return e.appendTo(make([]byte, 0, n), p)
	}
	var buf [encodeStack]byte
	b, ok := e.appendTo(buf[:0], p)
	if !ok {
		return nil, false
	}
	return append([]byte(nil), b...), true
}

// appendTo appends the JSON encoding of the value at p to b, as encode.
func (e *fastEncoder) appendTo(b []byte, p unsafe.Pointer) ([]byte, bool) {
	if !e.bare {
		b = append(b, '{')
	}
	first := true
	for i := range e.fields {
		f := &e.fields[i]
		fp := unsafe.Add(p, f.off)
		key := f.key
		if first && key != "" {
			key = key[1:]
		}
		switch f.kind {
		case reflect.Bool:
			v := *(*bool)(fp)
			if f.omit && !v {
				continue
			}
			b = strconv.AppendBool(append(b, key...), v)
		case reflect.String:
			v := *(*string)(fp)
			if f.omit && v == "" {
				continue
			}
			if strings.Contains(v, "\uFFFD") {
				return nil, false
			}
			b = jsonwire.AppendString(append(b, key...), v)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v := intAt(fp, f.kind)
			if f.omit && v == 0 {
				continue
			}
			b = strconv.AppendInt(append(b, key...), v, 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v := uintAt(fp, f.kind)
			if f.omit && v == 0 {
				continue
			}
			b = strconv.AppendUint(append(b, key...), v, 10)
		case reflect.Float32, reflect.Float64:
			v, bits := float64(0), 64
			if f.kind == reflect.Float32 {
				v, bits = float64(*(*float32)(fp)), 32
			} else {
				v = *(*float64)(fp)
			}
			if f.omit && v == 0 {
				continue
			}
			var ok bool
			if b, ok = appendFloat(append(b, key...), v, bits); !ok {
				return nil, false
			}
		}
		first = false
	}
	if !e.bare {
		b = append(b, '}')
	}
	return b, true
}

// intAt reads the signed integer of kind k at p.
func intAt(p unsafe.Pointer, k reflect.Kind) int64 {
	switch k {
	case reflect.Int:
		return int64(*(*int)(p))
	case reflect.Int8:
		return int64(*(*int8)(p))
	case reflect.Int16:
		return int64(*(*int16)(p))
	case reflect.Int32:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

// uintAt reads the unsigned integer of kind k at p.
func uintAt(p unsafe.Pointer, k reflect.Kind) uint64 {
	switch k {
	case reflect.Uint:
		return uint64(*(*uint)(p))
	case reflect.Uint8:
		return uint64(*(*uint8)(p))
	case reflect.Uint16:
		return uint64(*(*uint16)(p))
	case reflect.Uint32:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

// appendFloat appends f, a float of the given size in bits, as
// encoding/json's floatEncoder writes it (ES6 number to string: 'f'
// unless the magnitude is below 1e-6 or at least 1e21, compared in the
// float's own size, and e-07 shortened to e-7), and reports false, having
// appended nothing, for a NaN or an infinity, which encoding/json refuses.
func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// The exponent is the last two or three bytes: e-07 → e-7.
		if n := len(b); b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// encodeResult is typedResult for the value at v: with enc when it is
// certain, else with json.Marshal. enc is newFastEncoder(T) (nil:
// json.Marshal only).
func encodeResult[T any](enc *fastEncoder, v *T, structured bool) (*CallToolResult, error) {
	if enc != nil {
		if b, ok := enc.encode(unsafe.Pointer(v)); ok {
			return bytesResult(b, structured), nil
		}
	}
	return typedResult(*v, structured)
}
