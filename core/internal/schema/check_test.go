package schema

import (
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
)

type ptrSchema struct{ A int }

func (*ptrSchema) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

type embeddedBase struct {
	ID string `json:"id"`
}

// TestCheckTypeRefuses checks the registration errors of the tool dialect
// that the core tests do not reach: each names the field and says why.
func TestCheckTypeRefuses(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[struct {
			P ptrSchema `json:"p"`
		}](), []string{"field P", "pointer receiver", "func (schema.ptrSchema) JSONSchema"}},
		{reflect.TypeFor[struct {
			embeddedBase `jsonschema:"description=x"`
		}](), []string{"field embeddedBase", "embedded struct", "ignores"}},
		{reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"minimum=5,maximum=1"`
		}](), []string{"field N", "minimum=5", "maximum=1"}},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"minLength=1,minLength=2"`
		}](), []string{"field S", `"minLength"`, "twice"}},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema_extras:"x-mcp-header"`
		}](), []string{"field S", "jsonschema_extras", "'='"}},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"title=T,description:the s"`
		}](), []string{"field S", "description=..."}},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"Nullable"`
		}](), []string{"field S", `did you mean the flag "nullable"`}},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"Optional"`
		}](), nil}, // a one-word description
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"title=T,Nullable"`
		}](), []string{"field S", `did you mean "nullable"`}},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"enum=a,enumTitles=A"`
		}](), nil}, // a form's struct used by a tool
		{reflect.TypeFor[struct {
			R any `json:"r" jsonschema:"minimum=1"`
		}](), []string{"field R", "without a JSON type"}},
		{reflect.TypeFor[struct {
			L [][]int `json:"l" jsonschema:"minimum=1"`
		}](), []string{"field L", "array of array"}},
		{reflect.TypeFor[struct {
			F float64 `json:"f" jsonschema:"multipleOf=0"`
		}](), []string{"field F", "greater than 0"}},
		{reflect.TypeFor[struct {
			B bool `json:"b" jsonschema:"default=yes"`
		}](), []string{"field B", "true or false"}},
		{reflect.TypeFor[struct {
			N int `json:"n,string" jsonschema:"minimum=1"`
		}](), []string{"field N", "JSON type string"}},
	} {
		err := checkType(c.typ)
		if c.want == nil {
			if err != nil {
				t.Errorf("%v: %v", c.typ, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%v: accepted", c.typ)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", c.typ, err, w)
			}
		}
	}
}

// TestFormTagRefuses checks NewForm's dialect: flags and keys of the tool
// dialect forms do not read, and keys of another kind of field.
func TestFormTagRefuses(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"required"`
		}](), "forms read no flags"},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"pattern=^a"`
		}](), "not read by forms"},
		{reflect.TypeFor[struct {
			B bool `json:"b" jsonschema:"minimum=1"`
		}](), "does not apply to a bool field"},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"title: Name"`
		}](), `jsonschema:"title=..."`},
		{reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"titel=Name"`
		}](), `did you mean "title"`},
	} {
		_, err := Form(c.typ)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "field ") {
			t.Errorf("%v: %v, want an error naming the field and saying %q", c.typ, err, c.want)
		}
	}
	if _, err := Form(reflect.TypeFor[struct {
		S string   `json:"s" jsonschema:"title=S,description=d,format=email,minLength=1,maxLength=9,enum=a@b.c,enumTitles=A,default=a@b.c"`
		N int      `json:"n" jsonschema:"minimum=1,maximum=3,default=2"`
		L []string `json:"l" jsonschema:"enum=x,enum=y,minItems=1,maxItems=2,default=x"`
		B bool     `json:"b" jsonschema:"Say yes: or no"`
	}]()); err != nil {
		t.Errorf("a form using the whole dialect: %v", err)
	}
}
