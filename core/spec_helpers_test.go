package core_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The official schemas are checked with github.com/google/jsonschema-go,
// which core already uses to validate arguments, so that no test-only
// library reaches the root go.mod that users inherit (docs/design.md,
// "Module layout"). TestSpecValidatorRejects proves the check can fail.

var schemaCache = struct {
	sync.Mutex
	defs    map[string]json.RawMessage // rev -> the schema's $defs
	schemas map[string]*jsonschema.Resolved
}{defs: map[string]json.RawMessage{}, schemas: map[string]*jsonschema.Resolved{}}

// specSchema returns $defs/<def> of the official schema of rev, resolved.
func specSchema(t testing.TB, rev, def string) *jsonschema.Resolved {
	t.Helper()
	schemaCache.Lock()
	defer schemaCache.Unlock()
	key := rev + "#" + def
	if s := schemaCache.schemas[key]; s != nil {
		return s
	}
	defs := schemaCache.defs[rev]
	if defs == nil {
		b, err := os.ReadFile(filepath.Join("testdata", "spec", rev, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Defs json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.Defs == nil {
			t.Fatalf("%s schema.json: no $defs (%v)", rev, err)
		}
		defs = doc.Defs
		schemaCache.defs[rev] = defs
	}
	root := []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":` +
		strconv.Quote("#/$defs/"+def) + `,"$defs":` + string(defs) + `}`)
	var s jsonschema.Schema
	if err := json.Unmarshal(root, &s); err != nil {
		t.Fatalf("decoding %s $defs/%s: %v", rev, def, err)
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: "file:///mcp-schema-" + rev + ".json"})
	if err != nil {
		t.Fatalf("resolving %s $defs/%s: %v", rev, def, err)
	}
	schemaCache.schemas[key] = rs
	return rs
}

// specErr validates raw JSON against $defs/<def> of rev.
func specErr(t testing.TB, rev, def string, raw []byte) error {
	t.Helper()
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return specSchema(t, rev, def).Validate(inst)
}

// validateSpec validates raw JSON against $defs/<def> of rev.
func validateSpec(t testing.TB, rev, def string, raw []byte) {
	t.Helper()
	if err := specErr(t, rev, def, raw); err != nil {
		t.Errorf("not a valid %s %s: %v\n%s", rev, def, err, raw)
	}
}

// TestSpecValidatorRejects checks that the schema check of the harness can
// fail: messages that break the official schemas in a type, a required
// member, a $ref'd definition or a const are rejected, and their valid
// forms pass.
func TestSpecValidatorRejects(t *testing.T) {
	t.Parallel()
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, c := range []struct {
			def, good, bad string
		}{
			{"CallToolResult", `{"content":[{"type":"text","text":"5"}],"resultType":"complete"}`, `{"content":"5","resultType":"complete"}`},
			{"CallToolResult", `{"content":[{"type":"text","text":"5"}],"resultType":"complete"}`, `{"content":[{"type":"text"}],"resultType":"complete"}`},
			{"CallToolResult", `{"content":[{"type":"text","text":"5"}],"resultType":"complete"}`, `{"content":[{"type":"text","text":5}],"resultType":"complete"}`},
			{"Tool", `{"name":"a","inputSchema":{"type":"object"}}`, `{"name":"a","inputSchema":{"type":"string"}}`},
			{"Tool", `{"name":"a","inputSchema":{"type":"object"}}`, `{"inputSchema":{"type":"object"}}`},
		} {
			if err := specErr(t, rev, c.def, []byte(c.good)); err != nil {
				t.Errorf("%s %s: valid %s rejected: %v", rev, c.def, c.good, err)
			}
			if err := specErr(t, rev, c.def, []byte(c.bad)); err == nil {
				t.Errorf("%s %s: invalid %s accepted", rev, c.def, c.bad)
			}
		}
	}
}
