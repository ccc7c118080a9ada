package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
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
	for _, tc := range []struct {
		name  string
		form  func() error // the NewForm call
		field string       // what the error names
	}{
		{"nested struct", formErr[struct{ Nested inner }], "Nested"},
		{"map", formErr[struct{ Labels map[string]string }], "Labels"},
		{"pointer", formErr[struct{ Maybe *string }], "Maybe"},
		{"interface", formErr[struct{ Anything any }], "Anything"},
		{"slice of ints", formErr[struct{ Numbers []int }], "Numbers"},
		{"multi-select without enum", formErr[struct{ Free []string }], "Free"},
		{"enum on an integer", formErr[struct {
			Level int `enum:"1,2"`
		}], "Level"},
		{"titles count", formErr[struct {
			Pick string `enum:"a,b" enumTitles:"A"`
		}], "Pick"},
		{"default outside enum", formErr[struct {
			Pick string `enum:"a,b" default:"c"`
		}], "Pick"},
		{"multi default outside enum", formErr[struct {
			Picks []string `enum:"a,b" default:"a,z"`
		}], "Picks"},
		{"bad format", formErr[struct {
			When string `format:"time-of-day"`
		}], "When"},
		{"bad bound", formErr[struct {
			N int `minimum:"one"`
		}], "N"},
		{"inverted bounds", formErr[struct {
			N int `minimum:"5" maximum:"1"`
		}], "inverted"},
		{"bad integer default", formErr[struct {
			N int `default:"2.5"`
		}], "N"},
		{"bad boolean default", formErr[struct {
			B bool `default:"yes please"`
		}], "B"},
		{"not a struct", formErr[string], "struct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check(t, tc.form(), tc.field)
		})
	}
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

type deleteConfirm struct {
	OK bool `json:"ok" jsonschema:"title=Delete it?"`
}

var deleteForm = core.MustForm[deleteConfirm]()

// deleteAsDocumented is a handler written as the documentation of
// Form.Answer and ExampleInputRequired say: ask when there is no answer, end
// the call on a decline or a cancel.
func deleteAsDocumented(ctx context.Context, req *core.CallToolRequest, in struct {
	Repo string `json:"repo"`
}) (string, error) {
	c, action, err := deleteForm.Answer(req.Input, "confirm")
	switch {
	case err != nil:
		return "", err
	case action == "":
		return "", core.InputRequired(core.InputRequests{"confirm": deleteForm.Request("Delete " + in.Repo + "?")}, "")
	case action != core.ActionAccept || !c.OK:
		return "kept " + in.Repo + " (" + action + ")", nil
	}
	return "deleted " + in.Repo, nil
}

// TestDeclineEndsTheCall checks that a handler written as the documentation
// says asks a user once: a decline or a cancel ends the call after one round,
// in 2026-07-28 (one input_required result, then the complete result) and
// over the legacy bridge (one elicitation/create request, then the result).
// Servers MUST handle decline and cancel (2026-07-28 client/elicitation).
func TestDeclineEndsTheCall(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, &core.ServerOptions{StreamKeepAlive: -1})
	core.AddTool(srv, &core.Tool{Name: "delete_repo"}, deleteAsDocumented)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	args := map[string]any{"repo": "acme/site"}
	for _, action := range []string{core.ActionDecline, core.ActionCancel} {
		t.Run("modern "+action, func(t *testing.T) {
			t.Parallel()
			c := &mcptest.Client{URL: ts.URL, Caps: map[string]any{"elicitation": map[string]any{}}}
			rounds, state := 0, ""
			for {
				p := map[string]any{"name": "delete_repo", "arguments": args}
				if state != "" {
					p["requestState"] = state
					p["inputResponses"] = map[string]any{"confirm": map[string]any{"action": action}}
				}
				r, err := c.Call(context.Background(), "tools/call", p, nil)
				if err != nil {
					t.Fatal(err)
				}
				var res struct {
					ResultType   string `json:"resultType"`
					RequestState string `json:"requestState"`
					Content      []struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				if err := r.Decode(&res); err != nil {
					t.Fatalf("after %d rounds: %v", rounds, err)
				}
				if res.ResultType == "input_required" {
					if rounds++; rounds > 1 {
						t.Fatalf("the user who answered %q was asked again (round %d)", action, rounds)
					}
					state = res.RequestState
					continue
				}
				if rounds != 1 || len(res.Content) != 1 || res.Content[0].Text != "kept acme/site ("+action+")" {
					t.Fatalf("after %d rounds: %+v, want the call to end with the repo kept", rounds, res)
				}
				return
			}
		})
		t.Run("legacy "+action, func(t *testing.T) {
			t.Parallel()
			c := &mcptest.Client{URL: ts.URL}
			if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, map[string]any{"elicitation": map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			r, err := c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "delete_repo", "arguments": args},
				func(string, json.RawMessage) (any, error) { return map[string]any{"action": action}, nil })
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if len(r.ServerRequests) != 1 || r.Decode(&res) != nil || len(res.Content) != 1 || res.Content[0].Text != "kept acme/site ("+action+")" {
				t.Fatalf("%d elicitation requests, then %+v (%v), want one request and the repo kept", len(r.ServerRequests), res, r.Error)
			}
		})
	}
}

// TestAnswer checks what Answer and Form.Answer report for every kind of
// answer, and that Accepted agrees: nothing to ask about only when there is
// no answer; a decline and a cancel told apart; an answer the client got
// wrong (not an elicitation result, accepted without content or with
// content that does not fit) is a -32602 error, not a reason to ask again.
func TestAnswer(t *testing.T) {
	t.Parallel()
	type guests struct {
		Name   string `json:"name"`
		Guests int    `json:"guests" jsonschema:"minimum=1,maximum=12"`
	}
	form := core.MustForm[guests]()
	type outcome struct {
		v      guests
		action string
		code   int // of the error; 0 for none
		ok     bool
	}
	var mu sync.Mutex
	seen := map[string][2]outcome{} // request id -> Answer, Form.Answer
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "ask"}, func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
		var got [2]outcome
		for i, answer := range []func(*core.InputResponses, string) (guests, string, error){core.Answer[guests], form.Answer} {
			v, action, err := answer(req.Input, "g")
			got[i] = outcome{v: v, action: action, code: core.CodeOf(err)}
			if err == nil {
				got[i].code = 0
			}
		}
		_, got[0].ok = core.Accepted[guests](req.Input, "g")
		_, got[1].ok = form.Accepted(req.Input, "g")
		mu.Lock()
		seen[string(req.ID)] = got
		mu.Unlock()
		if req.Input.Len() == 0 {
			return "", core.InputRequired(core.InputRequests{"g": form.Request("How many?")}, "")
		}
		return "done", nil
	})
	caps := map[string]any{"elicitation": map[string]any{}}
	first := round1(t, srv, callReq(`"first"`, "ask", nil).withCaps(caps))
	bad := core.CodeInvalidParams
	ann := guests{Name: "Ann", Guests: 4}
	cases := []struct {
		name         string
		answer       any // nil: no inputResponses member for the key
		plain, typed outcome
	}{
		{"no answer", nil, outcome{}, outcome{}},
		{"null", json.RawMessage(`null`), outcome{}, outcome{}},
		{"accept", accept(map[string]any{"name": "Ann", "guests": 4}), outcome{v: ann, action: core.ActionAccept, ok: true}, outcome{v: ann, action: core.ActionAccept, ok: true}},
		// 4.0 is an integer to JSON Schema, as in tool arguments.
		{"accept 4.0", json.RawMessage(`{"action":"accept","content":{"name":"Ann","guests":4.0}}`), outcome{v: ann, action: core.ActionAccept, ok: true}, outcome{v: ann, action: core.ActionAccept, ok: true}},
		{"decline", map[string]any{"action": "decline"}, outcome{action: core.ActionDecline}, outcome{action: core.ActionDecline}},
		{"cancel", map[string]any{"action": "cancel"}, outcome{action: core.ActionCancel}, outcome{action: core.ActionCancel}},
		{"decline with content", map[string]any{"action": "decline", "content": map[string]any{"name": "x"}}, outcome{action: core.ActionDecline}, outcome{action: core.ActionDecline}},
		{"not an object", "yes", outcome{code: bad}, outcome{code: bad}},
		{"no action", map[string]any{"content": map[string]any{"name": "Ann"}}, outcome{code: bad}, outcome{code: bad}},
		{"unknown action", map[string]any{"action": "maybe"}, outcome{code: bad}, outcome{code: bad}},
		{"accept without content", map[string]any{"action": "accept"}, outcome{code: bad}, outcome{code: bad}},
		{"accept with wrong types", accept(map[string]any{"name": 7, "guests": "four"}), outcome{code: bad}, outcome{code: bad}},
		// Only Form.Answer knows the form's schema.
		{"accept out of bounds", accept(map[string]any{"name": "Ann", "guests": 40}), outcome{v: guests{Name: "Ann", Guests: 40}, action: core.ActionAccept, ok: true}, outcome{code: bad}},
		{"accept missing a field", accept(map[string]any{"guests": 4}), outcome{v: guests{Guests: 4}, action: core.ActionAccept, ok: true}, outcome{code: bad}},
	}
	for i, c := range cases {
		id := fmt.Sprintf(`"%d"`, i)
		responses := map[string]any{}
		if c.answer != nil {
			responses["g"] = c.answer
		}
		retry(callReq(json.RawMessage(id), "ask", nil).withCaps(caps), json.RawMessage(id), first["requestState"], responses).do(t, srv)
		mu.Lock()
		got, ok := seen[id]
		mu.Unlock()
		if !ok {
			t.Fatalf("%s: the handler did not run", c.name)
		}
		if got[0] != c.plain {
			t.Errorf("%s: Answer = %+v, want %+v", c.name, got[0], c.plain)
		}
		if got[1] != c.typed {
			t.Errorf("%s: Form.Answer = %+v, want %+v", c.name, got[1], c.typed)
		}
	}
}

// TestFormKeepsDeclarationOrder checks that a form lists its fields in
// declaration order, not alphabetically.
func TestFormKeepsDeclarationOrder(t *testing.T) {
	t.Parallel()
	type survey struct {
		Zeta  string `json:"zeta"`
		Alpha string `json:"alpha"`
		Mid   bool   `json:"mid,omitempty"`
		Beta  int    `json:"beta"`
	}
	f, err := core.NewForm[survey]()
	if err != nil {
		t.Fatal(err)
	}
	raw := f.Schema()
	last := -1
	for _, k := range []string{`"zeta":`, `"alpha":`, `"mid":`, `"beta":`} {
		i := bytes.Index(raw, []byte(k))
		if i <= last {
			t.Fatalf("property %s out of declaration order in %s", k, raw)
		}
		last = i
	}
	validateSpec(t, "2025-11-25", "ElicitRequestFormParams", []byte(`{"mode":"form","message":"m","requestedSchema":`+string(raw)+`}`))
}

// TestRawAnswersHidden checks that handlers see only verified answers: the
// request structs expose no raw inputResponses or requestState beside
// Request.Input, and an answer to a question the handler never asked does
// not reach it.
func TestRawAnswersHidden(t *testing.T) {
	t.Parallel()
	for _, typ := range []reflect.Type{
		reflect.TypeFor[core.CallToolParams](),
		reflect.TypeFor[core.CallToolRequest](),
		reflect.TypeFor[core.ReadResourceRequest](),
		reflect.TypeFor[core.GetPromptRequest](),
	} {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.IsExported() && (f.Type == reflect.TypeFor[map[string]json.RawMessage]() || strings.Contains(f.Name, "InputResponses") || f.Name == "RequestState") {
				t.Errorf("%v exposes the raw multi round-trip field %s", typ, f.Name)
			}
		}
	}

	srv := core.NewServer(testImpl, nil)
	type seen struct{ asked, unasked bool }
	got := make(chan seen, 2)
	core.AddTool(srv, &core.Tool{Name: "ask", Description: "Asks one question."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if req.Input.Len() == 0 {
				return "", core.InputRequired(core.InputRequests{"name": core.ElicitForm("Name?", json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`))}, "r1")
			}
			_, asked := req.Input.Raw("name")
			_, unasked := req.Input.Raw("other")
			got <- seen{asked, unasked}
			return "done", nil
		})
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	first := callReq(1, "ask", nil).withCaps(caps).do(t, srv).result(t)
	state := str(at(first, "requestState"))
	if state == "" {
		t.Fatalf("no requestState in %v", first)
	}
	ans := map[string]any{"action": "accept", "content": map[string]any{"n": "x"}}
	res := callReq(2, "ask", nil).withCaps(caps).withParam("requestState", state).
		withParam("inputResponses", map[string]any{"name": ans, "other": ans}).do(t, srv).result(t)
	if textOf(res) != "done" {
		t.Fatalf("second round: %v", res)
	}
	if s := <-got; !s.asked || s.unasked {
		t.Errorf("handler saw asked=%v unasked=%v, want true false", s.asked, s.unasked)
	}
}
