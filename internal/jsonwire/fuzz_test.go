package jsonwire

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/testseeds"
)

// Fuzz targets of the scanner and the canonical form, seeded from core's
// golden wire files, the official examples and core's hostile seeds.

// seedBodies returns the JSON bodies of core's golden requests and of the
// official examples.
func seedBodies(t testing.TB) [][]byte {
	b, err := testseeds.Bodies(filepath.Join("..", "..", "core", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostileSeeds returns core's malformed or unusual JSON-RPC messages.
func hostileSeeds(t testing.TB) []string {
	h, err := testseeds.Hostile(filepath.Join("..", "..", "core", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// FuzzEachMember compares EachMember with encoding/json's tokenizer on
// every valid JSON object.
func FuzzEachMember(f *testing.F) {
	for _, b := range seedBodies(f) {
		f.Add(b)
	}
	for _, s := range hostileSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		type member struct {
			key string
			val string
		}
		var got []member
		err := EachMember(data, func(k, v []byte) bool {
			var key string
			if json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &key) != nil {
				t.Fatalf("key %q does not decode", k)
			}
			if !KeyIs(k, key) {
				t.Fatalf("KeyIs(%q, %q) = false", k, key)
			}
			if !json.Valid(v) {
				t.Fatalf("value %q is not JSON", v)
			}
			got = append(got, member{key, string(v)})
			return true
		})
		dec := json.NewDecoder(bytes.NewReader(data))
		tok, _ := dec.Token()
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			if err == nil {
				t.Fatalf("EachMember accepted a non-object %q", data)
			}
			return
		}
		if err != nil {
			t.Fatalf("EachMember refused an object: %v", err)
		}
		var want []member
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			want = append(want, member{k.(string), string(v)})
		}
		if len(got) != len(want) {
			t.Fatalf("%d members, encoding/json sees %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("member %d = %q, encoding/json sees %q", i, got[i], want[i])
			}
		}
	})
}

// FuzzCanonicalJSON checks the canonical form the state binding hashes: it
// is valid JSON, idempotent, and independent of key order.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1.0,2e0,{"c":null}]}`, `{}`, `{"x":1e400}`, `{"n":-0}`, `{"f":0.1}`, `{"big":12345678901234567890}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		c1, err := Canonical(data)
		if err != nil {
			return
		}
		if !json.Valid(c1) {
			t.Fatalf("canonical form %q is not JSON", c1)
		}
		c2, err := Canonical(c1)
		if err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("not idempotent: %q -> %q (%v)", c1, c2, err)
		}
	})
}
