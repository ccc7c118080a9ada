package core

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpfn/mcpfn/internal/jsonwire"

	jsonv2 "github.com/go-json-experiment/json"
)

// A typed tool's arguments are usually a flat object of scalars bound to a
// struct of scalar fields ({"a":40,"b":2} into struct{ A, B int }). The
// reflection-based decoder costs about a tenth of such a call; fastBinder
// binds that common shape directly from the bytes, and hands anything it
// is not certain of back to the decoder (bindValidatedWith with
// bindCheckedOptions), so a call binds exactly what the decoder would bind.
// FuzzFastBind checks the two against each other.

// fastBinder binds a JSON object to one struct type whose JSON fields are
// all scalars. It is built once per tool, at registration, and is safe for
// concurrent use (it is read-only after newFastBinder).
type fastBinder struct {
	fields []fastField
	// byName indexes fields by JSON name when there are many; nil for a
	// few fields, which a linear scan finds faster.
	byName map[string]int
}

// fastField is one JSON member of the struct: its name as the decoder
// matches it (case-sensitively, bindOptions), its kind and its offset in
// the struct.
type fastField struct {
	name string
	kind reflect.Kind
	off  uintptr
}

// fastBinderMaxFields bounds the fields of an eligible struct: bind tracks
// the members it has seen in one uint64.
const fastBinderMaxFields = 64

// fastBinderLinear is how many fields bind searches linearly before it
// uses a map.
const fastBinderLinear = 8

var (
	// jsonv2.Unmarshaler has json.Unmarshaler's method.
	jsonUnmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	jsonUnmarshalerFromType = reflect.TypeFor[jsonv2.UnmarshalerFrom]()
	textUnmarshalerType     = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeDurationType        = reflect.TypeFor[time.Duration]()
)

// newFastBinder returns the binder of t, or nil when t is not eligible: a
// struct (not a pointer to one) of at most 64 JSON fields, each exported,
// not embedded, of kind bool, string, int*, uint* (not uintptr) or float*,
// with a json tag that is absent, "-" (the field is ignored), "-," (the
// name "-"), or a name (encoding/json's: the tag up to the first comma,
// the Go field name when empty; see fieldName for the names admitted)
// followed by the options omitempty and omitzero only (they change
// encoding, not decoding). Neither the
// struct nor a field's type (T or *T) may implement json.Unmarshaler,
// jsonv2.UnmarshalerFrom or encoding.TextUnmarshaler, time.Duration is
// excluded (jsonv2 formats it specially), and no two fields may share a
// name (v1 then binds neither). Unexported fields that are not embedded
// are ignored, as the decoder ignores them.
//
// Finally newFastBinder checks its reading of names against the decoder
// itself: each field must be the one the decoder sets for a member of
// that name, and the decoder must accept {}. Any doubt makes t ineligible:
// such a type is bound by the decoder alone.
func newFastBinder(t reflect.Type) *fastBinder {
	if t.Kind() != reflect.Struct || hasUnmarshalMethod(t) {
		return nil
	}
	fields, ok := scalarFields(t, fastKind)
	if !ok {
		return nil
	}
	b := &fastBinder{}
	for _, f := range fields {
		b.fields = append(b.fields, fastField{name: f.name, kind: f.sf.Type.Kind(), off: f.sf.Offset})
	}
	if len(b.fields) > fastBinderMaxFields {
		return nil
	}
	if len(b.fields) > fastBinderLinear {
		b.byName = make(map[string]int, len(b.fields))
		for i, f := range b.fields {
			b.byName[f.name] = i
		}
	}
	if !b.agreesWithDecoder(t) {
		return nil
	}
	return b
}

// scalarField is a JSON member of a struct as newFastBinder and
// newFastEncoder read it: the Go field and its JSON name.
type scalarField struct {
	sf   reflect.StructField
	name string
}

// scalarFields returns the JSON members of the struct t in declaration
// order, and false when the fast paths cannot be certain of them: an
// embedded field (it promotes its own members), a tag fieldName cannot
// read, two fields of one name, or a field whose type kindOK refuses.
// Unexported fields and fields tagged "-" are skipped, as encoding/json
// skips them.
func scalarFields(t reflect.Type, kindOK func(reflect.Type) bool) ([]scalarField, bool) {
	var fields []scalarField
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, ok := fieldName(sf.Name, tag)
		if !ok || seen[name] || !kindOK(sf.Type) {
			return nil, false
		}
		seen[name] = true
		fields = append(fields, scalarField{sf: sf, name: name})
	}
	return fields, true
}

// fieldName returns the JSON name of a struct field from its json tag as
// encoding/json reads it, and false for a tag whose reading is not
// certain: a quoted or escaped name, a control character or invalid
// UTF-8 in it (a key holding one is escaped), an empty option
// (except in "-,", which names the field "-"), or an option other than
// omitempty and omitzero (string, inline, unknown, format, case, nocase,
// ...).
func fieldName(goName, tag string) (string, bool) {
	if tag == "-," {
		return "-", true // encoding/json's way to name a field "-"
	}
	name, opts, _ := strings.Cut(tag, ",")
	if strings.ContainsAny(name, "\\'\"`") || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return "", false
	}
	if name == "" {
		name = goName
	}
	if strings.Contains(tag, ",") {
		for opt := range strings.SplitSeq(opts, ",") {
			if opt != "omitempty" && opt != "omitzero" {
				return "", false
			}
		}
	}
	return name, true
}

// fastKind reports whether values of t are scalars bind decodes exactly as
// the decoder does: the kinds bool, string, int*, uint* (not uintptr) and
// float*, without unmarshal methods, and not time.Duration.
func fastKind(t reflect.Type) bool {
	return scalarKind(t.Kind()) && t != timeDurationType && !hasUnmarshalMethod(t)
}

// scalarKind reports whether k is one of the kinds the fast binder and
// the fast encoder handle: bool, string, int*, uint* (not uintptr) and
// float*.
func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// hasUnmarshalMethod reports whether t or *t decodes itself.
func hasUnmarshalMethod(t reflect.Type) bool {
	return implementsAny(t, jsonUnmarshalerType, jsonUnmarshalerFromType, textUnmarshalerType)
}

// implementsAny reports whether t or *t implements one of the interfaces.
func implementsAny(t reflect.Type, interfaces ...reflect.Type) bool {
	for _, it := range interfaces {
		if t.Implements(it) || reflect.PointerTo(t).Implements(it) {
			return true
		}
	}
	return false
}

// agreesWithDecoder decodes {} and, for each field, an object with only
// that field's member, with the decoder, and reports whether it accepts
// them and sets exactly the field bind would set.
func (b *fastBinder) agreesWithDecoder(t reflect.Type) bool {
	zero := reflect.Zero(t).Interface()
	try := func(raw []byte) (reflect.Value, bool) {
		v := reflect.New(t)
		return v.Elem(), jsonv2.Unmarshal(raw, v.Interface(), bindCheckedOptions) == nil
	}
	if v, ok := try([]byte(`{}`)); !ok || !reflect.DeepEqual(v.Interface(), zero) {
		return false
	}
	for _, f := range b.fields {
		// The name as it is (fieldName admits no quote, backslash or
		// control character): bind defers on escaped keys.
		raw := append(append([]byte(`{"`), f.name...), '"')
		sample := `1`
		switch f.kind {
		case reflect.Bool:
			sample = `true`
		case reflect.String:
			sample = `"x"`
		}
		raw = append(append(append(raw, ':'), sample...), '}')
		slow, ok := try(raw)
		if !ok || reflect.DeepEqual(slow.Interface(), zero) {
			return false
		}
		fast := reflect.New(t)
		if !b.bind(raw, fast.UnsafePointer()) || !reflect.DeepEqual(slow.Interface(), fast.Elem().Interface()) {
			return false
		}
	}
	return true
}

// bind decodes the JSON object raw into the struct at p, which must be a
// zeroed value of the type b was built for, and reports whether it did.
// raw is valid JSON (jsonwire.Valid; on other input bind reports false or
// a value, and never panics). false means "not certain": the
// caller discards *p and decodes raw with the decoder, which may succeed
// or fail. bind returns false on a key with an escape or invalid UTF-8, a
// field named twice, null, a value of another JSON type than the field's,
// an integer written with a fraction or an exponent, a number out of the
// field's range (strconv's errors), a negative number for an unsigned
// field, and a string with an escape or invalid UTF-8. Members of other
// names are skipped, as encoding/json skips them. It does not allocate
// beyond the strings it stores.
func (b *fastBinder) bind(raw []byte, p unsafe.Pointer) bool {
	i := jsonwire.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	var seen uint64
	i = jsonwire.SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return jsonwire.SkipSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) && raw[i] == '"' {
		end := jsonwire.SkipString(raw, i)
		if end <= i+1 || raw[end-1] != '"' {
			return false // unterminated
		}
		key := raw[i+1 : end-1]
		if !plainKey(key) {
			return false
		}
		i = jsonwire.SkipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = jsonwire.SkipSpace(raw, i+1)
		vend := jsonwire.SkipValue(raw, i)
		if vend == i {
			return false // no value
		}
		if k := b.lookup(key); k >= 0 {
			if seen&(1<<k) != 0 || !b.fields[k].set(p, raw[i:vend]) {
				return false
			}
			seen |= 1 << k
		}
		i = jsonwire.SkipSpace(raw, vend)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case '}':
			return jsonwire.SkipSpace(raw, i+1) == len(raw)
		case ',':
			i = jsonwire.SkipSpace(raw, i+1)
		default:
			return false
		}
	}
	return false
}

// plainKey reports whether the raw key k is its own decoded form: no
// escape, no control character, valid UTF-8 (the decoder would replace
// invalid UTF-8 with U+FFFD).
func plainKey(k []byte) bool {
	ascii := true
	for _, c := range k {
		if c == '\\' || c < 0x20 {
			return false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	return ascii || utf8.Valid(k)
}

// lookup returns the index of the field named key, or -1.
func (b *fastBinder) lookup(key []byte) int {
	if b.byName != nil {
		if k, ok := b.byName[string(key)]; ok {
			return k
		}
		return -1
	}
	for k := range b.fields {
		if b.fields[k].name == string(key) {
			return k
		}
	}
	return -1
}

// set stores the JSON value v into the field at p+f.off, or reports false
// when it is not certain to store what the decoder would. Floats are
// parsed with the strconv call the decoder makes (ParseFloat with the
// field's size), integers to the same values within the field's range.
func (f *fastField) set(p unsafe.Pointer, v []byte) bool {
	fp := unsafe.Add(p, f.off)
	switch f.kind {
	case reflect.Bool:
		switch string(v) {
		case "true":
			*(*bool)(fp) = true
		case "false":
			*(*bool)(fp) = false
		default:
			return false
		}
		return true
	case reflect.String:
		s, ok := jsonPlainString(v)
		if ok {
			*(*string)(fp) = s
		}
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := parseInt(v, intBits(f.kind))
		if !ok {
			return false
		}
		switch f.kind {
		case reflect.Int:
			*(*int)(fp) = int(n)
		case reflect.Int8:
			*(*int8)(fp) = int8(n)
		case reflect.Int16:
			*(*int16)(fp) = int16(n)
		case reflect.Int32:
			*(*int32)(fp) = int32(n)
		default:
			*(*int64)(fp) = n
		}
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := parseUint(v, intBits(f.kind))
		if !ok {
			return false
		}
		switch f.kind {
		case reflect.Uint:
			*(*uint)(fp) = uint(n)
		case reflect.Uint8:
			*(*uint8)(fp) = uint8(n)
		case reflect.Uint16:
			*(*uint16)(fp) = uint16(n)
		case reflect.Uint32:
			*(*uint32)(fp) = uint32(n)
		default:
			*(*uint64)(fp) = n
		}
		return true
	case reflect.Float32, reflect.Float64:
		if !jsonNumber(v) {
			return false
		}
		bits := 64
		if f.kind == reflect.Float32 {
			bits = 32
		}
		x, err := strconv.ParseFloat(string(v), bits)
		if err != nil {
			return false
		}
		if bits == 32 {
			*(*float32)(fp) = float32(x)
		} else {
			*(*float64)(fp) = x
		}
		return true
	}
	return false
}

// maxShortDigits is how many decimal digits any value fits in an int64.
const maxShortDigits = 18

// parseInt returns the value of the JSON integer v (no fraction, no
// exponent) if it fits in a signed integer of the given size, as
// strconv.ParseInt(v, 10, bits) would. Up to 18 digits it adds them up
// itself (no such value overflows an int64); longer ones go to strconv.
func parseInt(v []byte, bits int) (int64, bool) {
	if !jsonInteger(v) {
		return 0, false
	}
	d := v
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) > maxShortDigits {
		n, err := strconv.ParseInt(string(v), 10, bits)
		return n, err == nil
	}
	var n int64
	for _, c := range d {
		n = n*10 + int64(c-'0')
	}
	if v[0] == '-' {
		n = -n
	}
	if lim := int64(1) << (bits - 1); bits < 64 && (n < -lim || n >= lim) {
		return 0, false
	}
	return n, true
}

// parseUint returns the value of the JSON integer v if it is not negative
// and fits in an unsigned integer of the given size, as
// strconv.ParseUint(v, 10, bits) would; it reports false on a '-' even
// for -0, which the decoder binds as 0 (its canonical retry).
func parseUint(v []byte, bits int) (uint64, bool) {
	if len(v) == 0 || v[0] == '-' || !jsonInteger(v) {
		return 0, false
	}
	if len(v) > maxShortDigits {
		n, err := strconv.ParseUint(string(v), 10, bits)
		return n, err == nil
	}
	var n uint64
	for _, c := range v {
		n = n*10 + uint64(c-'0')
	}
	if bits < 64 && n >= 1<<bits {
		return 0, false
	}
	return n, true
}

// intBits is the size in bits of an integer kind.
func intBits(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int, reflect.Uint:
		return strconv.IntSize
	}
	return 64
}

// jsonPlainString decodes the JSON string v when it holds no escape, no
// control character and only valid UTF-8 (then its bytes are its value),
// and reports false for anything else.
func jsonPlainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	ascii := true
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// jsonInteger reports whether v is a JSON number without fraction or
// exponent (RFC 8259 §6: -?(0|[1-9][0-9]*)).
func jsonInteger(v []byte) bool {
	n := intPart(v)
	return n > 0 && n == len(v)
}

// jsonNumber reports whether v is a JSON number (RFC 8259 §6). strconv
// accepts more (a leading '+', "Inf", hexadecimal, leading zeros), none of
// which the decoder would read as a number.
func jsonNumber(v []byte) bool {
	i := intPart(v)
	if i <= 0 {
		return false
	}
	if i < len(v) && v[i] == '.' {
		j := digits(v, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := digits(v, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(v)
}

// intPart returns the length of the integer part of the JSON number that
// v starts with (-?(0|[1-9][0-9]*)), or 0 when v does not start with one.
func intPart(v []byte) int {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i >= len(v):
		return 0
	case v[i] == '0':
		return i + 1
	case '1' <= v[i] && v[i] <= '9':
		return digits(v, i+1)
	}
	return 0
}

// digits returns the index of the first byte at or after i of v that is
// not a decimal digit.
func digits(v []byte, i int) int {
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	return i
}

// bindArguments decodes a typed tool's arguments (valid JSON that
// jsonwire.Check passed, see checkArguments) into T: with fb when it is
// certain, else with the decoder from a zero value, so a partial fast
// binding never shows. fb is newFastBinder(T) (nil: the decoder only).
func bindArguments[T any](fb *fastBinder, raw []byte) (T, error) {
	if fb != nil {
		var v T
		if fb.bind(raw, unsafe.Pointer(&v)) {
			return v, nil
		}
	}
	return bindValidatedWith[T](raw, bindCheckedOptions)
}
