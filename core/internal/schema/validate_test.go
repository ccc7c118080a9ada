package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMismatchNamesNoValue checks Check's report: the failed keyword and
// its location in the schema, read from the validator's message, and the
// message itself kept apart as Detail; neither the keyword nor the
// location holds a value of the instance.
func TestMismatchNamesNoValue(t *testing.T) {
	const v = "SECRET-7"
	for _, c := range []struct {
		schema, instance, keyword, location string
	}{
		{`{"type":"object","required":["a"]}`, `{"b":"SECRET-7"}`, "required", "/required"},
		{`{"properties":{"a":{"type":"integer"}}}`, `{"a":"SECRET-7"}`, "type", "/properties/a/type"},
		{`{"properties":{"a":{"properties":{"b":{"enum":["x"]}}}}}`, `{"a":{"b":"SECRET-7"}}`, "enum", "/properties/a/properties/b/enum"},
		{`{"type":"object","additionalProperties":false}`, `{"SECRET-7":1}`, "additionalProperties", "/additionalProperties"},
		{`{"items":{"maxLength":2}}`, `["SECRET-7"]`, "maxLength", "/items/maxLength"},
		{`{"anyOf":[{"type":"integer"},{"type":"boolean"}]}`, `"SECRET-7"`, "anyOf", "/anyOf"},
		{`{"properties":{"a":{"const":"x"}}}`, `{"a":"SECRET-7"}`, "const", "/properties/a/const"},
		{`{"properties":{"a":{"pattern":"^x"}}}`, `{"a":"SECRET-7"}`, "pattern", "/properties/a/pattern"},
		{`{"additionalProperties":{"type":"integer"}}`, `{"k":"SECRET-7"}`, "type", "/additionalProperties/type"},
		{`{"not":{"type":"string"}}`, `"SECRET-7"`, "not", "/not"},
	} {
		s, err := Compile(json.RawMessage(c.schema), true)
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := DecodeForValidation([]byte(c.instance))
		m, err := s.Check(inst)
		if err != nil || m == nil {
			t.Fatalf("%s %s: mismatch %v, error %v", c.schema, c.instance, m, err)
		}
		if m.Keyword != c.keyword || m.KeywordLocation != c.location {
			t.Errorf("%s %s: keyword %q at %q, want %q at %q (%s)", c.schema, c.instance, m.Keyword, m.KeywordLocation, c.keyword, c.location, m.Detail)
		}
		if strings.Contains(m.Keyword+m.KeywordLocation, v) || m.Detail == "" {
			t.Errorf("%s: %+v", c.schema, m)
		}
	}
	s, _ := Compile(json.RawMessage(`{"type":"object"}`), true)
	if m, err := s.Check(map[string]any{}); m != nil || err != nil {
		t.Errorf("valid instance: %v %v", m, err)
	}
}
