package mcpheader

import (
	"reflect"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	decls, err := Find([]byte(`{"type":"object","properties":{
		"z":{"type":"integer","x-mcp-header":"Z"},
		"a":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"AB"}}},
		"v":{"type":"string","default":{"x-mcp-header":"not a declaration"},"enum":[{"x-mcp-header":"nor this"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Decl{{Name: "AB", Path: []string{"a", "b"}, Type: "boolean"}, {Name: "Z", Path: []string{"z"}, Type: "integer"}}
	if !reflect.DeepEqual(decls, want) {
		t.Fatalf("Find = %+v, want %+v", decls, want)
	}
}

func TestFindRefuses(t *testing.T) {
	for name, schema := range map[string]string{
		"not a token":     `{"properties":{"a":{"type":"string","x-mcp-header":"a b"}}}`,
		"not a string":    `{"properties":{"a":{"type":"string","x-mcp-header":7}}}`,
		"root":            `{"type":"string","x-mcp-header":"A"}`,
		"under items":     `{"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`,
		"under anyOf":     `{"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`,
		"number property": `{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		"duplicate":       `{"properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dup"}}}`,
	} {
		if _, err := Find([]byte(schema)); err == nil || !strings.Contains(err.Error(), "x-mcp-header") {
			t.Errorf("%s: Find error = %v, want a refusal naming x-mcp-header", name, err)
		}
	}
}

func TestLookup(t *testing.T) {
	v := map[string]any{"a": map[string]any{"b": nil}}
	if got, ok := Lookup(v, []string{"a", "b"}); !ok || got != nil {
		t.Errorf("Lookup(a/b) = %v, %v; want nil, true", got, ok)
	}
	if _, ok := Lookup(v, []string{"a", "c"}); ok {
		t.Error("Lookup(a/c) found a missing member")
	}
}
