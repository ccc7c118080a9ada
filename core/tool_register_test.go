package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// addWeather registers the tool "weather" with arguments In and result
// Out, returning the panic message ("" for none).
func addWeather[In, Out any](t *testing.T) (msg string) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			msg = p.(string)
		}
	}()
	core.AddTool(core.NewServer(testImpl, nil), &core.Tool{Name: "weather"},
		func(context.Context, *core.CallToolRequest, In) (Out, error) { var zero Out; return zero, nil })
	return ""
}

type where struct {
	City string `json:"city" jsonschema:"descripton=The city"`
}

// TestToolRegistrationMistakes checks that tag and type mistakes that
// invopop/jsonschema would ignore, or panic on without context, are
// registration panics naming the tool, the field and the fix.
func TestToolRegistrationMistakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		add  func(t *testing.T) string
		want []string
	}{
		{"typo", addWeather[struct {
			City string `json:"city" jsonschema:"descripton=The city"`
		}, string], []string{`AddTool "weather"`, `field City (json "city")`, `"descripton"`, `did you mean "description"`}},
		{"colon", addWeather[struct {
			City string `json:"city" jsonschema:"description: The city"`
		}, string], []string{`AddTool "weather"`, "City", `description=`}},
		{"not a number", addWeather[struct {
			Days int `json:"days" jsonschema:"minimum=abc"`
		}, string], []string{`AddTool "weather"`, "Days", "minimum", `"abc"`, "number"}},
		{"count", addWeather[struct {
			Name string `json:"name" jsonschema:"maxLength=-1"`
		}, string], []string{"Name", "maxLength", `"-1"`}},
		{"enum of an integer", addWeather[struct {
			Days int `json:"days" jsonschema:"enum=1,enum=two"`
		}, string], []string{"Days", "enum", `"two"`}},
		{"enum of a boolean", addWeather[struct {
			On bool `json:"on" jsonschema:"enum=true"`
		}, string], []string{"On", `"enum"`, "boolean"}},
		{"key of another type", addWeather[struct {
			Days int `json:"days" jsonschema:"minLength=1"`
		}, string], []string{"Days", `"minLength"`, "integer"}},
		{"default of a struct", addWeather[struct {
			At where `json:"at" jsonschema:"default=x"`
		}, string], []string{"At", `"default"`}},
		{"pattern", addWeather[struct {
			Zip string `json:"zip" jsonschema:"pattern=[0-9"`
		}, string], []string{"Zip", "pattern"}},
		{"type", addWeather[struct {
			Zip string `json:"zip" jsonschema:"type=strin"`
		}, string], []string{"Zip", `"strin"`}},
		{"uniqueItems", addWeather[struct {
			Tags []string `json:"tags" jsonschema:"uniqueItems=false"`
		}, string], []string{"Tags", "uniqueItems"}},
		{"unknown flag", addWeather[struct {
			City string `json:"city" jsonschema:"description=The city,requird"`
		}, string], []string{"City", `"requird"`, `did you mean "required"`}},
		{"x-mcp-header in jsonschema", addWeather[struct {
			Region string `json:"region" jsonschema:"x-mcp-header=Region"`
		}, string], []string{"Region", "jsonschema_extras"}},
		{"x-mcp-header misspelt", addWeather[struct {
			Region string `json:"region" jsonschema_extras:"x-mcp-headers=Region"`
		}, string], []string{"Region", `"x-mcp-headers"`, `did you mean "x-mcp-header"`}},
		{"nested field", addWeather[struct {
			Where where `json:"where"`
		}, string], []string{"field Where.City", `"descripton"`}},
		{"chan argument", addWeather[struct {
			Updates chan int `json:"updates"`
		}, string], []string{`AddTool "weather"`, "field Updates", "chan int", `json:"-"`}},
		{"func result", addWeather[struct{}, struct {
			Done func() `json:"done"`
		}], []string{`AddTool "weather"`, "output", "field Done", "func()"}},
		{"complex in a slice", addWeather[struct {
			Z []complex128 `json:"z"`
		}, string], []string{"field Z", "complex128"}},
		{"uintptr", addWeather[struct {
			P uintptr `json:"p"`
		}, string], []string{"field P", "uintptr"}},
		{"map key", addWeather[struct{}, struct {
			M map[float64]string `json:"m"`
		}], []string{"field M", "float64", "key"}},
		{"nil server", func(t *testing.T) string {
			return mustPanic(t, func() {
				core.AddTool(nil, &core.Tool{Name: "weather"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil })
			})
		}, []string{`AddTool "weather"`, "nil *Server"}},
		{"nil server, session tool", func(t *testing.T) string {
			return mustPanic(t, func() {
				core.AddSessionTool(nil, &core.Tool{Name: "weather"},
					func(context.Context, *core.CallToolRequest, *core.Session, struct{}) (string, error) { return "", nil })
			})
		}, []string{`AddSessionTool "weather"`, "nil *Server"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := c.add(t)
			if msg == "" {
				t.Fatalf("registration did not panic")
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("panic %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestToolRegistrationAcceptsTheDialect checks that what the dialect allows
// still registers: every documented key on a field of its type, flags, a
// bare description that mentions a colon, repeated enum values, escaped
// commas, x-mcp-header where it belongs.
func TestToolRegistrationAcceptsTheDialect(t *testing.T) {
	t.Parallel()
	type args struct {
		City   string   `json:"city" jsonschema:"title=City,description=The city\\, in English,minLength=1,maxLength=80,pattern=^[A-Z],format=hostname,default=Paris,example=Rome,enum=Paris,enum=Rome"`
		Note   string   `json:"note,omitempty" jsonschema:"Note: free text, anything"`
		Days   int      `json:"days" jsonschema:"minimum=1,maximum=16,exclusiveMaximum=17,multipleOf=1,default=3,enum=1,enum=3"`
		Ratio  float64  `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0.5,example=0.75"`
		Tags   []string `json:"tags,omitempty" jsonschema:"minItems=1,maxItems=3,uniqueItems=true,enum=a,enum=b"`
		Counts []int    `json:"counts,omitempty" jsonschema:"minimum=0"`
		On     *bool    `json:"on,omitempty" jsonschema:"default=true,nullable"`
		Region string   `json:"region,omitempty" jsonschema:"required" jsonschema_extras:"x-mcp-header=Region"`
		Maybe  *int     `json:"maybe,omitempty" jsonschema:"nullable"`
		Skip   chan int `json:"-"`
		hidden chan int
	}
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "weather"}, func(context.Context, *core.CallToolRequest, args) (string, error) { return "", nil })
	in := at(listTools(t, srv)["weather"], "inputSchema", "properties")
	if d := str(at(in, "note", "description")); d != "Note: free text, anything" {
		t.Errorf("bare description = %q", d)
	}
	if d := str(at(in, "city", "description")); d != "The city, in English" {
		t.Errorf("description = %q", d)
	}
	for _, p := range []string{"on", "maybe"} {
		if has(in, p, "description") {
			t.Errorf("the nullable flag was read as a description: %v", at(in, p))
		}
	}
}

// TestFormRegistrationMistakes checks NewForm's side of the dialect: a key
// forms do not read, or one that does not apply to the field's type, is an
// error naming the field instead of being ignored.
func TestFormRegistrationMistakes(t *testing.T) {
	t.Parallel()
	type typo struct {
		Name string `json:"name" jsonschema:"titel=Name"`
	}
	type notForStrings struct {
		Name string `json:"name" jsonschema:"minimum=3"`
	}
	type notForForms struct {
		Name string `json:"name" jsonschema:"pattern=^a"`
	}
	for name, err := range map[string]error{
		"typo":          formErr[typo](),
		"notForStrings": formErr[notForStrings](),
		"notForForms":   formErr[notForForms](),
	} {
		if err == nil || !strings.Contains(err.Error(), "field Name") {
			t.Errorf("%s: NewForm error %v, want one naming the field", name, err)
		}
	}
	if err := formErr[typo](); err == nil || !strings.Contains(err.Error(), `did you mean "title"`) {
		t.Errorf("typo: %v", err)
	}
}

func formErr[T any]() error { _, err := core.NewForm[T](); return err }

// treeNode is a recursive argument type.
type treeNode struct {
	Name     string     `json:"name"`
	Children []treeNode `json:"children,omitempty"`
}

type linked struct {
	Value int     `json:"value"`
	Next  *linked `json:"next,omitempty"`
}

// TestRecursiveTypeRefused checks that a recursive argument or result type is
// a clear registration panic, not a stack overflow that kills the process.
func TestRecursiveTypeRefused(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	msg := mustPanic(t, func() {
		core.AddTool(srv, &core.Tool{Name: "tree", Description: "Walks a tree."},
			func(ctx context.Context, req *core.CallToolRequest, in treeNode) (string, error) { return in.Name, nil })
	})
	if !strings.Contains(msg, `AddTool "tree"`) || !strings.Contains(msg, "recursive") || !strings.Contains(msg, "Children") {
		t.Errorf("panic message %q does not name the tool, the recursion and the field", msg)
	}
	msg = mustPanic(t, func() {
		core.AddTool(srv, &core.Tool{Name: "list", Description: "Returns a list."},
			func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (*linked, error) { return nil, nil })
	})
	if !strings.Contains(msg, "output schema") || !strings.Contains(msg, "recursive") || !strings.Contains(msg, "Next") {
		t.Errorf("panic message %q does not name the output, the recursion and the field", msg)
	}
	// The server still works.
	core.AddTool(srv, &core.Tool{Name: "ok", Description: "Fine."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) { return "fine", nil })
	if got := textOf(callReq(1, "ok", nil).do(t, srv).result(t)); got != "fine" {
		t.Errorf("after the refused registrations: %q", got)
	}
}

// TestSchemaTagDialect checks the one jsonschema tag dialect of tools and
// forms: the official Go SDK's bare description (commas included), the
// key=value form, and a clear registration error for an ambiguous tag.
func TestSchemaTagDialect(t *testing.T) {
	t.Parallel()
	type weatherArgs struct {
		City  string `json:"city" jsonschema:"the city, in English"`
		Units string `json:"units,omitempty" jsonschema:"description=metric\\, or imperial,enum=metric,enum=imperial"`
		Inner struct {
			Zip string `json:"zip" jsonschema:"postal code"`
		} `json:"inner"`
	}
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "weather", Description: "Weather."},
		func(ctx context.Context, req *core.CallToolRequest, in weatherArgs) (string, error) {
			return in.City, nil
		})
	res := mreq(1, "tools/list", nil).do(t, srv).result(t)
	schema := at(res, "tools", 0, "inputSchema")
	for path, want := range map[string]string{
		"city":  "the city, in English",
		"units": "metric, or imperial",
	} {
		if got := str(at(schema, "properties", path, "description")); got != want {
			t.Errorf("%s description = %q, want %q", path, got, want)
		}
	}
	if got := str(at(schema, "properties", "inner", "properties", "zip", "description")); got != "postal code" {
		t.Errorf("nested description = %q", got)
	}
	if got := at(schema, "properties", "units", "enum"); len(got.([]any)) != 2 {
		t.Errorf("units enum = %v", got)
	}
	type ambiguous struct {
		City string `json:"city" jsonschema:"the city,minimum=3"`
	}
	msg := mustPanic(t, func() {
		core.AddTool(srv, &core.Tool{Name: "amb", Description: "Ambiguous."},
			func(ctx context.Context, req *core.CallToolRequest, in ambiguous) (string, error) { return "", nil })
	})
	if !strings.Contains(msg, "ambiguous") || !strings.Contains(msg, "City") {
		t.Errorf("panic message %q does not explain the ambiguous tag", msg)
	}

	// Forms read the same dialect.
	type booking struct {
		Name string `json:"name" jsonschema:"who is it for, please"`
		Time string `json:"time" jsonschema:"title=Time,enum=18:00,enum=19:00,default=19:00"`
	}
	f, err := core.NewForm[booking]()
	if err != nil {
		t.Fatal(err)
	}
	v := decode(t, f.Schema())
	if got := str(at(v, "properties", "name", "description")); got != "who is it for, please" {
		t.Errorf("form description = %q", got)
	}
	if got := str(at(v, "properties", "time", "title")); got != "Time" {
		t.Errorf("form title = %q", got)
	}
	if got := str(at(v, "properties", "time", "default")); got != "19:00" {
		t.Errorf("form default = %q", got)
	}
	if _, err := core.NewForm[ambiguous](); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous form tag: %v", err)
	}
}
