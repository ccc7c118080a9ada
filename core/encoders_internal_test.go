package core

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// The hand-written encoders of core's own types against encoding/json:
// each is given a value whose every field is set (fillAll), and its output
// must be byte for byte encoding/json's and name every json member of the
// type. A field added to Implementation, Tool or ElicitFormParams and
// forgotten by its encoder fails here.

// fillAll sets every exported, JSON-encoded field of the struct v points
// to, recursively, to a non-zero value. Fields of interface type get
// compact JSON (what a prepared schema holds).
func fillAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillAll(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			fillAll(v.Field(i))
		}
	case reflect.String:
		v.SetString("s<&>\u2028")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"type":"object"}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillAll(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		if e.Kind() == reflect.Interface {
			e.Set(reflect.ValueOf("v"))
		} else {
			fillAll(e)
		}
		m.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), e)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(json.RawMessage(`{"type":"object"}`)))
	}
}

// jsonNames lists the json member names of struct type t.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// sameAsJSON compares got with encoding/json's encoding of v.
func sameAsJSON(t *testing.T, name string, got []byte, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s (encoding/json)", name, got, want)
	}
}

// checkEncoder compares got with encoding/json's encoding of v and checks
// it names every member of v's type.
func checkEncoder(t *testing.T, name string, got []byte, v any) {
	t.Helper()
	sameAsJSON(t, name, got, v)
	var members map[string]json.RawMessage
	if err := json.Unmarshal(got, &members); err != nil {
		t.Fatalf("%s: %s: %v", name, got, err)
	}
	for _, n := range jsonNames(reflect.TypeOf(v).Elem()) {
		if _, ok := members[n]; !ok {
			t.Errorf("%s: member %q of %T is not written", name, n, v)
		}
	}
}

func TestHandEncodersWriteEveryField(t *testing.T) {
	t.Parallel()
	impl := &Implementation{}
	fillAll(reflect.ValueOf(impl))
	checkEncoder(t, "appendImplementation", appendImplementation(nil, impl), impl)

	tool := &Tool{}
	fillAll(reflect.ValueOf(tool))
	got, err := toolJSON(tool)
	if err != nil {
		t.Fatal(err)
	}
	checkEncoder(t, "toolJSON", got, tool)

	p := &ElicitFormParams{}
	fillAll(reflect.ValueOf(p))
	ir := &InputRequest{Method: MethodElicit, Params: p}
	got, err = appendInputRequest(nil, ir)
	if err != nil {
		t.Fatal(err)
	}
	checkEncoder(t, "appendInputRequest", got, ir)
	var env struct{ Params json.RawMessage }
	json.Unmarshal(got, &env)
	checkEncoder(t, "appendInputRequest params", env.Params, p)
}

// TestHandEncodersMinimal compares the encoders with encoding/json on
// values whose optional fields are empty.
func TestHandEncodersMinimal(t *testing.T) {
	t.Parallel()
	impl := &Implementation{Name: "n", Version: "1"}
	sameAsJSON(t, "appendImplementation", appendImplementation(nil, impl), impl)
	tool := &Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}
	got, err := toolJSON(tool)
	if err != nil {
		t.Fatal(err)
	}
	sameAsJSON(t, "toolJSON", got, tool)
	ir := &InputRequest{Method: MethodElicit, Params: &ElicitFormParams{Message: "m", RequestedSchema: json.RawMessage(`{"type":"object"}`)}}
	if got, err = appendInputRequest(nil, ir); err != nil {
		t.Fatal(err)
	}
	sameAsJSON(t, "appendInputRequest", got, ir)
}

// TestArgumentLimitsAgree keeps core's exported limits equal to the ones
// jsonwire enforces.
func TestArgumentLimitsAgree(t *testing.T) {
	t.Parallel()
	if MaxArgumentDepth != jsonwire.MaxDepth || MaxArgumentMembers != jsonwire.MaxMembers {
		t.Fatalf("core limits %d/%d, jsonwire %d/%d", MaxArgumentDepth, MaxArgumentMembers, jsonwire.MaxDepth, jsonwire.MaxMembers)
	}
}
