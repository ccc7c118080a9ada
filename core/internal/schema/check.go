package schema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/mcpfn/mcpfn/internal/mcpheader"
)

// Registration checks. invopop/jsonschema reads the jsonschema tag
// leniently: a key it does not know, a key that does not apply to the
// field's type, or a value it cannot parse is dropped without a word
// (jsonschema:"descripton=...", jsonschema:"minimum=abc"), and a type it
// cannot reflect (chan, func, complex, uintptr) is a panic that names
// neither the tool nor the field. checkType walks a type as the generator
// will and turns each of those into an error that names the field and
// says what to write instead.

var (
	timeType       = reflect.TypeFor[time.Time]()
	ipType         = reflect.TypeFor[net.IP]()
	uriType        = reflect.TypeFor[url.URL]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	jsonNumberType = reflect.TypeFor[json.Number]()
	byteType       = reflect.TypeFor[byte]()

	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	// The invopop methods by which a type describes itself.
	extendSchemaType = reflect.TypeFor[interface{ JSONSchemaExtend(*jsonschema.Schema) }]()
	aliasSchemaType  = reflect.TypeFor[interface{ JSONSchemaAlias() any }]()
	propAliasType    = reflect.TypeFor[interface{ JSONSchemaProperty(string) any }]()
)

// selfSchemaTypes are the invopop methods by which a type supplies or
// changes its own schema. invopop looks for them on the type itself (value
// receivers), never on its pointer.
var selfSchemaTypes = []reflect.Type{customSchemaType, extendSchemaType, aliasSchemaType, propAliasType}

// selfSchemaMethods are the names of selfSchemaTypes' methods, in order.
// They are spelled out rather than read with reflect.Type.Method: a
// program that calls Method keeps every exported method of every type it
// converts to an interface, because the linker can no longer prove one
// unused (on js/wasm that alone linked libyaml and the TLS stack).
var selfSchemaMethods = []string{"JSONSchema", "JSONSchemaExtend", "JSONSchemaAlias", "JSONSchemaProperty"}

// describesItself reports whether t supplies or changes its own schema
// through one of invopop's methods.
func describesItself(t reflect.Type) bool {
	for _, m := range selfSchemaTypes {
		if t.Implements(m) {
			return true
		}
	}
	return false
}

// replacesSchema reports whether the generator takes t's schema from t
// instead of reflecting its fields (JSONSchema, JSONSchemaAlias).
func replacesSchema(t reflect.Type) bool {
	return t.Implements(customSchemaType) || t.Implements(aliasSchemaType)
}

// checkReceivers refuses a schema method declared on *T only: invopop
// reads those methods on T, so it would never call it.
func checkReceivers(t reflect.Type) error {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return nil
	}
	for i, m := range selfSchemaTypes {
		if !t.Implements(m) && reflect.PointerTo(t).Implements(m) {
			name := selfSchemaMethods[i]
			return fmt.Errorf("method %s of %v has a pointer receiver: the schema generator reads it on %v only and would ignore it; declare func (%v) %s", name, reflect.PointerTo(t), t, t, name)
		}
	}
	return nil
}

// genericKeys are the jsonschema tag keys invopop reads on a field of any
// type; typeKeys those it reads by the JSON type of the field (for an
// array, also the keys of its items' type).
var (
	genericKeys = map[string]bool{"title": true, "description": true, "type": true, "anchor": true,
		"oneof_required": true, "anyof_required": true, "oneof_ref": true, "oneof_type": true, "anyof_ref": true, "anyof_type": true}
	numberKeys = map[string]bool{"multipleOf": true, "minimum": true, "maximum": true, "exclusiveMaximum": true,
		"exclusiveMinimum": true, "default": true, "example": true, "enum": true}
	typeKeys = map[string]map[string]bool{
		"string": {"minLength": true, "maxLength": true, "pattern": true, "format": true, "readOnly": true,
			"writeOnly": true, "default": true, "example": true, "enum": true},
		"number":  numberKeys,
		"integer": numberKeys,
		"boolean": {"default": true},
		"array":   {"minItems": true, "maxItems": true, "uniqueItems": true, "default": true, "format": true, "pattern": true},
	}
	// toolFlags are the items without '=' of the tool dialect.
	toolFlags = map[string]bool{"-": true, "required": true, "nullable": true, "inline": true}
	// annotationKeys assert nothing about an instance (format is an
	// annotation in 2020-12, and the validator here does not assert it).
	annotationKeys = map[string]bool{"title": true, "description": true, "default": true, "example": true,
		"format": true, "readOnly": true, "writeOnly": true, "anchor": true, "enumTitles": true}
	jsonTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true,
		"array": true, "object": true, "null": true}
)

// knownToolKey reports whether invopop reads key on a field of some type.
func knownToolKey(key string) bool {
	if genericKeys[key] {
		return true
	}
	for _, keys := range typeKeys {
		if keys[key] {
			return true
		}
	}
	return false
}

// schemaTypeOf is the JSON type invopop gives a field of type t (pointers
// are looked through): "" when the type describes itself, "none" when the
// schema has no type (an interface, json.RawMessage).
func schemaTypeOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case describesItself(t):
		return ""
	case t == timeType, t == ipType, t == uriType:
		return "string"
	case t == rawMessageType:
		return "none"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		if t.Elem() == byteType {
			return "string" // base64
		}
		return "array"
	case reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "none"
}

// hasOption reports whether the comma-separated json tag options opts
// hold opt.
func hasOption(opts, opt string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == opt {
			return true
		}
	}
	return false
}

// fieldSchemaType is schemaTypeOf for a field: the json ",string" option
// makes numbers and booleans strings (invopop follows encoding/json).
func fieldSchemaType(f reflect.StructField) string {
	st := schemaTypeOf(f.Type)
	switch st {
	case "integer", "number", "boolean":
		if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); hasOption(opts, "string") {
			return "string"
		}
	}
	return st
}

var (
	jsonNumberRE  = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	tagColonKeyRE = regexp.MustCompile(`^\s*([A-Za-z_]+)\s*:`)
)

// isInteger reports whether v is a JSON number with an integral value.
func isInteger(v string) bool {
	if !jsonNumberRE.MatchString(v) {
		return false
	}
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f == math.Trunc(f)
}

// checkToolTag checks the jsonschema and jsonschema_extras tags of a field
// of a tool's argument or result type.
func checkToolTag(f reflect.StructField) error {
	if err := checkExtras(f); err != nil {
		return err
	}
	tag, ok := f.Tag.Lookup("jsonschema")
	if !ok || tag == "" {
		return nil
	}
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.Anonymous && name == "" && derefType(f.Type).Kind() == reflect.Struct {
		return fmt.Errorf("jsonschema tag %q on an embedded struct: its fields are promoted and the schema generator ignores the tag; tag the promoted fields, or name the field with a json tag", tag)
	}
	st, err := parseSchemaTag(f)
	if err != nil {
		return err
	}
	if st.desc != "" {
		// A one-word description that is a near miss of a flag
		// ("Nullable", "requried") is a misspelt flag.
		for flag := range toolFlags {
			if len(flag) > 1 && !strings.ContainsAny(tag, " ,") && nearMiss(tag, flag) {
				return fmt.Errorf("jsonschema tag %q reads as a description; did you mean the flag %q?", tag, flag)
			}
		}
		return checkBareDescription(tag, knownToolKey)
	}
	jt := fieldSchemaType(f)
	if v, ok := st.get("type"); ok {
		jt = v
	}
	itemType := ""
	if jt == "array" {
		if et := derefType(f.Type); et.Kind() == reflect.Slice || et.Kind() == reflect.Array {
			itemType = schemaTypeOf(et.Elem())
		}
	}
	seen := map[string]bool{}
	for _, it := range splitTagItems(tag) {
		k, v, hasValue := strings.Cut(it, "=")
		if !hasValue {
			if toolFlags[it] {
				continue
			}
			return unknownItem(it, "flag", knownToolKey, toolWords)
		}
		if k == "enumTitles" {
			continue // read by NewForm; a form's struct may be a tool's type too
		}
		if !knownToolKey(k) {
			if k == mcpheader.Keyword {
				return fmt.Errorf("jsonschema tag key %q is not read there: write jsonschema_extras:\"%s=%s\"", k, k, v)
			}
			return unknownItem(k, "key", knownToolKey, toolWords)
		}
		repeatable := k == "enum" || k == "example" || (k == "default" && jt == "array")
		if seen[k] && !repeatable {
			return fmt.Errorf("jsonschema tag key %q is given twice; the last value would win", k)
		}
		seen[k] = true
		target := jt
		if !genericKeys[k] && jt != "" {
			switch {
			case typeKeys[jt][k]:
			case jt == "array" && itemType == "":
				target = "" // items that describe themselves: not known here
			case jt == "array" && itemType != "array" && typeKeys[itemType][k]:
				target = itemType // invopop applies it to the items
			default:
				of := "a field of JSON type " + jt
				if jt == "none" {
					of = "a field without a JSON type (an interface or json.RawMessage)"
				}
				if jt == "array" {
					of += " of " + itemType
				}
				return fmt.Errorf("jsonschema tag key %q does not apply to %s: the schema generator would ignore it", k, of)
			}
		}
		if err := checkTagValue(k, v, target); err != nil {
			return err
		}
	}
	return checkTagBounds(st)
}

// formKeys are the jsonschema tag keys NewForm reads, by the kind of the
// field (see core.NewForm).
var (
	formCommonKeys = []string{"title", "description", "default"}
	formKindKeys   = map[string][]string{
		"string":  {"format", "minLength", "maxLength", "enum", "enumTitles"},
		"boolean": nil,
		"number":  {"minimum", "maximum"},
		"array":   {"enum", "enumTitles", "minItems", "maxItems"},
	}
	formWords = func() []string {
		words := slices.Clone(formCommonKeys)
		for _, keys := range formKindKeys {
			for _, k := range keys {
				if !slices.Contains(words, k) {
					words = append(words, k)
				}
			}
		}
		sort.Strings(words)
		return words
	}()
)

// checkFormTag checks the jsonschema tag of a form's field: a key forms do
// not read, or read on another kind of field, and a flag are errors (the
// form would not be what its author wrote).
func checkFormTag(f reflect.StructField, st schemaTag) error {
	tag := f.Tag.Get("jsonschema")
	if tag == "" {
		return nil
	}
	known := func(k string) bool { return slices.Contains(formWords, k) }
	if st.desc != "" {
		return checkBareDescription(tag, known)
	}
	kind := ""
	switch f.Type.Kind() {
	case reflect.String:
		kind = "string"
	case reflect.Bool:
		kind = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		kind = "number"
	case reflect.Slice:
		kind = "array"
	}
	for _, it := range splitTagItems(tag) {
		k, _, hasValue := strings.Cut(it, "=")
		if !hasValue {
			if toolFlags[it] {
				return fmt.Errorf("jsonschema tag flag %q: forms read no flags (a field is required unless tagged omitempty or given a default; json:\"-\" leaves it out)", it)
			}
			return unknownItem(it, "flag", known, formWords)
		}
		if !known(k) {
			if knownToolKey(k) {
				return fmt.Errorf("jsonschema tag key %q is not read by forms, whose schemas are flat and restricted (2026-07-28 client/elicitation); forms read %s", k, strings.Join(formWords, ", "))
			}
			return unknownItem(k, "key", known, formWords)
		}
		if kind != "" && !slices.Contains(formCommonKeys, k) && !slices.Contains(formKindKeys[kind], k) {
			return fmt.Errorf("jsonschema tag key %q does not apply to a %v field of a form", k, f.Type)
		}
	}
	return nil
}

// checkTagValue checks the value v of key on a field (or items) of JSON
// type jt ("" when unknown).
func checkTagValue(key, v, jt string) error {
	bad := func(want string) error {
		return fmt.Errorf("jsonschema tag %s=%q: the value is not %s; the schema generator would drop it", key, v, want)
	}
	switch key {
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if !jsonNumberRE.MatchString(v) {
			return bad("a number")
		}
	case "multipleOf":
		if f, err := strconv.ParseFloat(v, 64); err != nil || !jsonNumberRE.MatchString(v) || f <= 0 {
			return bad("a number greater than 0")
		}
	case "minLength", "maxLength", "minItems", "maxItems":
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return bad("a non-negative integer")
		}
	case "pattern":
		if _, err := regexp.Compile(v); err != nil {
			return fmt.Errorf("jsonschema tag pattern=%q: %v", v, err)
		}
	case "readOnly", "writeOnly":
		if _, err := strconv.ParseBool(v); err != nil {
			return bad("a boolean (true or false)")
		}
	case "uniqueItems":
		if v != "true" {
			return fmt.Errorf("jsonschema tag uniqueItems=%q: the generator sets uniqueItems whatever the value; write uniqueItems=true, or leave it out", v)
		}
	case "type":
		if !jsonTypes[v] {
			return bad("a JSON type (string, number, integer, boolean, array, object or null)")
		}
	case "oneof_type", "anyof_type":
		for _, t := range strings.Split(v, ";") {
			if !jsonTypes[t] {
				return fmt.Errorf("jsonschema tag %s=%q: %q is not a JSON type", key, v, t)
			}
		}
	case "default", "example", "enum":
		switch jt {
		case "integer":
			if !isInteger(v) {
				return bad("an integer")
			}
		case "number":
			if !jsonNumberRE.MatchString(v) {
				return bad("a number")
			}
		case "boolean":
			if v != "true" && v != "false" {
				return bad("true or false")
			}
		}
	}
	return nil
}

// checkTagBounds refuses lower bounds above their upper bounds: a schema no
// value satisfies.
func checkTagBounds(st schemaTag) error {
	for _, p := range [][2]string{{"minimum", "maximum"}, {"minLength", "maxLength"}, {"minItems", "maxItems"}} {
		lo, ok1 := st.get(p[0])
		hi, ok2 := st.get(p[1])
		if !ok1 || !ok2 {
			continue
		}
		l, err1 := strconv.ParseFloat(lo, 64)
		h, err2 := strconv.ParseFloat(hi, 64)
		if err1 == nil && err2 == nil && l > h {
			return fmt.Errorf("jsonschema tag %s=%s is above %s=%s: no value would be valid", p[0], lo, p[1], hi)
		}
	}
	return nil
}

// checkBareDescription refuses a description that starts as a key written
// with a colon (jsonschema:"description: The city"), which reads as the
// whole text being the description.
func checkBareDescription(tag string, known func(string) bool) error {
	if m := tagColonKeyRE.FindStringSubmatch(tag); m != nil && known(m[1]) {
		return fmt.Errorf("jsonschema tag %q reads as a description that starts with %q; a key is written with '=': jsonschema:\"%s=...\"", tag, m[1]+":", m[1])
	}
	return nil
}

// checkExtras checks the jsonschema_extras tag, whose keys invopop copies
// into the schema as they are: a near miss of x-mcp-header declares
// nothing. (x-mcp-header in a result type, often the argument type
// echoed, is an annotation there and harmless.)
func checkExtras(f reflect.StructField) error {
	tag, ok := f.Tag.Lookup("jsonschema_extras")
	if !ok || tag == "" {
		return nil
	}
	for _, it := range splitTagItems(tag) {
		k, _, hasValue := strings.Cut(it, "=")
		switch {
		case !hasValue:
			return fmt.Errorf("jsonschema_extras item %q has no '=': the schema generator would ignore it; write key=value", it)
		case k != mcpheader.Keyword && nearMiss(k, mcpheader.Keyword):
			return fmt.Errorf("jsonschema_extras key %q is not known; did you mean %q?", k, mcpheader.Keyword)
		}
	}
	return nil
}

// unknownItem is the error of a tag item that is not a known key (kind
// "key") or flag (kind "flag") of a dialect, with the nearest of its words
// when one is close. known reports the dialect's keys.
func unknownItem(item, kind string, known func(string) bool, words []string) error {
	if m := tagColonKeyRE.FindStringSubmatch(item); m != nil && known(m[1]) {
		return fmt.Errorf("jsonschema tag item %q: a key is written with '=': %s=...", item, m[1])
	}
	for _, w := range words {
		if nearMiss(item, w) {
			return fmt.Errorf("jsonschema tag %s %q is not known; did you mean %q?", kind, item, w)
		}
	}
	return fmt.Errorf("jsonschema tag %s %q is not known (docs/design.md, \"Tools, arguments and results\", lists the dialect)", kind, item)
}

// toolWords are the keys and flags of the tool dialect, sorted.
var toolWords = func() []string {
	var words []string
	for k := range toolFlags {
		words = append(words, k)
	}
	for k := range genericKeys {
		words = append(words, k)
	}
	for _, keys := range typeKeys {
		for k := range keys {
			if !slices.Contains(words, k) {
				words = append(words, k)
			}
		}
	}
	sort.Strings(words)
	return words
}()

// nearMiss reports whether a is a likely misspelling of b: equal but for
// case, or within a small edit distance (an adjacent transposition counts
// as one edit).
func nearMiss(a, b string) bool {
	if a == b {
		return false
	}
	if strings.EqualFold(a, b) {
		return true
	}
	limit := 1
	if len(b) >= 6 {
		limit = 2
	}
	return editDistance(a, b) <= limit
}

// editDistance is the optimal string alignment distance of a and b.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// checkType walks t as the schema generator will (exported and embedded
// fields not tagged json:"-" or jsonschema:"-", elements, map values; not
// into a type that describes itself) and refuses a recursive type, a kind
// encoding/json cannot encode or the generator cannot reflect, a map key
// encoding/json refuses, and a jsonschema tag that does not say what its
// author meant (checkToolTag).
func checkType(t reflect.Type) error {
	var onPath []reflect.Type
	var path []string
	fieldErr := func(f reflect.StructField, err error) error {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		return &fieldError{fmt.Errorf("field %s (json %q): %w", strings.Join(path, "."), name, err)}
	}
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for {
			switch t.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Array:
				t = t.Elem()
				continue
			case reflect.Map:
				if err := checkMapKey(t); err != nil {
					return err
				}
				t = t.Elem()
				continue
			case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer, reflect.Uintptr:
				return fmt.Errorf("type %v has no JSON Schema (encoding/json cannot encode a %v, or the schema generator cannot describe it): tag the field json:\"-\", or change its type", t, t.Kind())
			}
			break
		}
		if err := checkReceivers(t); err != nil {
			return err
		}
		if t.Kind() != reflect.Struct || replacesSchema(t) {
			return nil
		}
		for _, p := range onPath {
			if p == t {
				return fmt.Errorf("%w: %v contains itself through %s; a derived schema is inline and cannot describe recursion: supply Tool.InputSchema/OutputSchema written by hand, or give the type a JSONSchema() *jsonschema.Schema method", errRecursive, t, strings.Join(path, "."))
			}
		}
		onPath = append(onPath, t)
		defer func() { onPath = onPath[:len(onPath)-1] }()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "-" {
				continue // invopop skips "-," too
			}
			if st, _, _ := strings.Cut(f.Tag.Get("jsonschema"), ","); st == "-" {
				continue
			}
			path = append(path, f.Name)
			err := checkToolTag(f)
			if err != nil {
				err = fieldErr(f, err)
			} else if err = walk(f.Type); err != nil && !isFieldError(err) && !errors.Is(err, errRecursive) {
				err = fieldErr(f, err)
			}
			path = path[:len(path)-1]
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk(t)
}

// fieldError is an error that names its field (the innermost).
type fieldError struct{ error }

func (e *fieldError) Unwrap() error { return e.error }

func isFieldError(err error) bool {
	var fe *fieldError
	return errors.As(err, &fe)
}

// checkMapKey refuses a map whose keys encoding/json cannot encode: a key
// is a string, an integer, or a type with a MarshalText method.
func checkMapKey(t reflect.Type) error {
	k := t.Key()
	switch k.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return nil
	}
	if k.Implements(textMarshalerType) {
		return nil
	}
	return fmt.Errorf("map key type %v: encoding/json writes only string, integer and encoding.TextMarshaler keys; change the key type", k)
}
