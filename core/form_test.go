package core_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

type color string

func (color) Enum() []string { return []string{"red", "green"} }

type booking struct {
	Name     string   `json:"name" title:"Name" description:"Who is the table for?" minLength:"1" maxLength:"50"`
	Email    string   `json:"email,omitempty" format:"email"`
	Guests   int      `json:"guests" minimum:"1" maximum:"12" default:"2"`
	Price    float64  `json:"price" minimum:"0.5"`
	VIP      bool     `json:"vip" default:"false"`
	Time     string   `json:"time" enum:"18:00,19:00,20:00"`
	Size     string   `json:"size" enum:"s,m" enumTitles:"Small,Medium"`
	Color    color    `json:"color"`
	Tags     []string `json:"tags,omitempty" enum:"a,b,c" minItems:"1" maxItems:"2"`
	Toppings []string `json:"toppings" enum:"x,y" enumTitles:"X,Y" default:"x"`
	Colors   []color  `json:"colors,omitempty"`
	Skipped  string   `json:"-"`
	hidden   string
	NoTag    string
}

// TestNewForm checks the schema generated from a struct: field kinds, enums
// from a tag and from an Enum method, titled enums, and which fields are
// optional.
func TestNewForm(t *testing.T) {
	t.Parallel()
	f, err := core.NewForm[booking]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
		"type": "object",
		"properties": {
			"name": {"type": "string", "title": "Name", "description": "Who is the table for?", "minLength": 1, "maxLength": 50},
			"email": {"type": "string", "format": "email"},
			"guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
			"price": {"type": "number", "minimum": 0.5},
			"vip": {"type": "boolean", "default": false},
			"time": {"type": "string", "enum": ["18:00", "19:00", "20:00"]},
			"size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"}]},
			"color": {"type": "string", "enum": ["red", "green"]},
			"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
			"toppings": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}, {"const": "y", "title": "Y"}]}, "default": ["x"]},
			"colors": {"type": "array", "items": {"type": "string", "enum": ["red", "green"]}},
			"NoTag": {"type": "string"}
		},
		"required": ["name", "price", "time", "size", "color", "NoTag"]
	}`
	if !jsonEq(t, f.Schema(), []byte(want)) {
		t.Errorf("schema:\n%s\nwant:\n%s", f.Schema(), want)
	}
	// The schema is a valid requestedSchema of a form elicitation.
	params := toJSON(t, map[string]any{"mode": "form", "message": "Book a table", "requestedSchema": json.RawMessage(f.Schema())})
	validateSpec(t, modernVersion, "ElicitRequestFormParams", params)
	ir := f.Request("Book a table")
	if ir.Method != core.MethodElicit {
		t.Errorf("method = %q", ir.Method)
	}
	validateSpec(t, modernVersion, "ElicitRequest", toJSON(t, ir))
}

// TestNewFormErrors checks that unsupported fields are errors naming the
// field.
func TestNewFormErrors(t *testing.T) {
	t.Parallel()
	type inner struct{ A string }
	check := func(t *testing.T, err error, field string) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error")
		}
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	t.Run("nested struct", func(t *testing.T) {
		_, err := core.NewForm[struct{ Nested inner }]()
		check(t, err, "Nested")
	})
	t.Run("map", func(t *testing.T) {
		_, err := core.NewForm[struct{ Labels map[string]string }]()
		check(t, err, "Labels")
	})
	t.Run("pointer", func(t *testing.T) {
		_, err := core.NewForm[struct{ Maybe *string }]()
		check(t, err, "Maybe")
	})
	t.Run("interface", func(t *testing.T) {
		_, err := core.NewForm[struct{ Anything any }]()
		check(t, err, "Anything")
	})
	t.Run("slice of ints", func(t *testing.T) {
		_, err := core.NewForm[struct{ Numbers []int }]()
		check(t, err, "Numbers")
	})
	t.Run("multi-select without enum", func(t *testing.T) {
		_, err := core.NewForm[struct{ Free []string }]()
		check(t, err, "Free")
	})
	t.Run("enum on an integer", func(t *testing.T) {
		_, err := core.NewForm[struct {
			Level int `enum:"1,2"`
		}]()
		check(t, err, "Level")
	})
	t.Run("titles count", func(t *testing.T) {
		_, err := core.NewForm[struct {
			Pick string `enum:"a,b" enumTitles:"A"`
		}]()
		check(t, err, "Pick")
	})
	t.Run("default outside enum", func(t *testing.T) {
		_, err := core.NewForm[struct {
			Pick string `enum:"a,b" default:"c"`
		}]()
		check(t, err, "Pick")
	})
	t.Run("multi default outside enum", func(t *testing.T) {
		_, err := core.NewForm[struct {
			Picks []string `enum:"a,b" default:"a,z"`
		}]()
		check(t, err, "Picks")
	})
	t.Run("bad format", func(t *testing.T) {
		_, err := core.NewForm[struct {
			When string `format:"time-of-day"`
		}]()
		check(t, err, "When")
	})
	t.Run("bad bound", func(t *testing.T) {
		_, err := core.NewForm[struct {
			N int `minimum:"one"`
		}]()
		check(t, err, "N")
	})
	t.Run("inverted bounds", func(t *testing.T) {
		_, err := core.NewForm[struct {
			N int `minimum:"5" maximum:"1"`
		}]()
		check(t, err, "inverted")
	})
	t.Run("bad integer default", func(t *testing.T) {
		_, err := core.NewForm[struct {
			N int `default:"2.5"`
		}]()
		check(t, err, "N")
	})
	t.Run("bad boolean default", func(t *testing.T) {
		_, err := core.NewForm[struct {
			B bool `default:"yes please"`
		}]()
		check(t, err, "B")
	})
	t.Run("not a struct", func(t *testing.T) {
		_, err := core.NewForm[string]()
		check(t, err, "struct")
	})
	t.Run("MustForm panics", func(t *testing.T) {
		msg := mustPanic(t, func() { core.MustForm[struct{ Nested inner }]() })
		if !strings.Contains(msg, "Nested") {
			t.Errorf("panic %q does not name the field", msg)
		}
	})
}

// TestFormRoundTrip uses a Form in a tool: the request carries its schema,
// and Form.Accepted decodes the answer.
func TestFormRoundTrip(t *testing.T) {
	t.Parallel()
	form := core.MustForm[booking]()
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "book", Description: "Books a table."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (booking, error) {
			if b, ok := form.Accepted(req.Input, "booking"); ok {
				return b, nil
			}
			return booking{}, core.InputRequired(core.InputRequests{"booking": form.Request("Book a table")}, "")
		})
	caps := map[string]any{"elicitation": map[string]any{}}
	first := round1(t, srv, callReq(1, "book", nil).withCaps(caps))
	if got := toJSON(t, at(first, "inputRequests", "booking", "params", "requestedSchema")); !jsonEq(t, got, form.Schema()) {
		t.Errorf("requestedSchema = %s", got)
	}
	content := map[string]any{"name": "Ann", "guests": 4, "price": 9.5, "vip": true, "time": "19:00", "size": "m",
		"color": "green", "tags": []string{"a"}, "toppings": []string{"x", "y"}, "NoTag": "n"}
	r := retry(callReq(2, "book", nil).withCaps(caps), 2, first["requestState"], map[string]any{"booking": accept(content)}).do(t, srv)
	res := r.result(t)
	var got booking
	if err := json.Unmarshal(toJSON(t, res["structuredContent"]), &got); err != nil {
		t.Fatal(err)
	}
	want := booking{Name: "Ann", Guests: 4, Price: 9.5, VIP: true, Time: "19:00", Size: "m", Color: "green",
		Tags: []string{"a"}, Toppings: []string{"x", "y"}, NoTag: "n"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}
