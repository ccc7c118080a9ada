package core

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/internal/testseeds"
)

// Fuzz targets of the request path's building blocks, seeded
// from the golden wire files and the official examples.

// seedBodies returns the JSON bodies of the golden requests and examples.
func seedBodies(t testing.TB) [][]byte {
	b, err := testseeds.Bodies("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostileSeeds are malformed or unusual JSON-RPC messages
// (testdata/hostile_seeds.json, shared with internal/jsonwire's fuzz targets).
var hostileSeeds = func() []string {
	h, err := testseeds.Hostile("testdata")
	if err != nil {
		panic(err)
	}
	return h
}()

// FuzzParseMessage checks parseMessage on valid JSON: it never panics, an
// error's id is a valid id or absent, and what it decodes agrees with
// encoding/json.
func FuzzParseMessage(f *testing.F) {
	for _, b := range seedBodies(f) {
		f.Add(b)
	}
	for _, s := range hostileSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// encoding/json accepts invalid UTF-8 inside strings (and decodes
		// it to U+FFFD); RFC 8259 text is UTF-8, so only that is compared.
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		m, id, err := parseMessage(data)
		if err != nil {
			if m != nil {
				t.Fatalf("message and error")
			}
			if err.Code != CodeInvalidRequest {
				t.Fatalf("code %d", err.Code)
			}
			if id != nil && !validID(id) {
				t.Fatalf("error id %q is not a valid id", id)
			}
			return
		}
		var mm map[string]json.RawMessage
		if json.Unmarshal(data, &mm) != nil {
			t.Fatalf("parseMessage accepted a non-object: %q", data)
		}
		var version string
		if json.Unmarshal(mm["jsonrpc"], &version) != nil || version != "2.0" {
			t.Fatalf("accepted jsonrpc %s", mm["jsonrpc"])
		}
		if m.id != nil && !validID(m.id) {
			t.Fatalf("accepted id %q", m.id)
		}
		if m.isResponse {
			res, hasResult := mm["result"]
			errObj, hasError := mm["error"]
			if m.id == nil || hasResult == hasError || m.isError != hasError {
				t.Fatalf("bad response %+v", m)
			}
			want := res
			if hasError {
				want = errObj
			}
			if !bytes.Equal(bytes.TrimSpace(m.answer), bytes.TrimSpace(want)) {
				t.Fatalf("answer %q, encoding/json says %q", m.answer, want)
			}
			return
		}
		var method string
		if json.Unmarshal(mm["method"], &method) != nil || method != m.method || method == "" {
			t.Fatalf("method %q, encoding/json says %s", m.method, mm["method"])
		}
		if m.params != nil && !jsonwire.IsObject(m.params) {
			t.Fatalf("params %q", m.params)
		}
		if m.params != nil && !bytes.Equal(bytes.TrimSpace(m.params), bytes.TrimSpace(mm["params"])) {
			t.Fatalf("params %q, encoding/json says %q", m.params, mm["params"])
		}
	})
}

// FuzzCursor checks cursor round trips and that paginate never panics on a
// forged cursor.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "item1", "c1:", "YzE6aXRlbTE", "garbage!", "==", "\x00\xff"} {
		f.Add(s, s)
	}
	items := []string{"a", "b", "c", "d", "e"}
	f.Fuzz(func(t *testing.T, key, raw string) {
		if got, ok := decodeCursor(encodeCursor(key)); !ok || got != key {
			t.Fatalf("cursor of %q decodes to %q, %v", key, got, ok)
		}
		page, next, err := paginate(items, func(s string) string { return s }, raw, true, 2)
		if err != nil {
			if CodeOf(err) != CodeInvalidParams {
				t.Fatalf("code %d", CodeOf(err))
			}
			return
		}
		if len(page) > 2 {
			t.Fatalf("page of %d", len(page))
		}
		if next != "" {
			if _, ok := decodeCursor(next); !ok {
				t.Fatalf("issued an undecodable cursor %q", next)
			}
		}
	})
}

// fuzzSealer is a sealer with fixed keys; its states live a minute.
func fuzzSealer() *sealer {
	keys := StaticKeys{{ID: "k1", Secret: bytes.Repeat([]byte{7}, 32)}, {ID: "k0", Secret: bytes.Repeat([]byte{9}, 32)}}
	return newSealer(keys, time.Minute, nil)
}

var fuzzBinding = stateBinding{method: "tools/call", target: "t", args: []byte(`{"a":1}`), principal: &Principal{Issuer: "i", Subject: "s"}}

// FuzzSealerOpen checks that open never panics and never accepts a token it
// did not seal.
func FuzzSealerOpen(f *testing.F) {
	s := fuzzSealer()
	ctx := context.Background()
	sealed := map[string]bool{}
	for _, st := range []string{"", "state", strings.Repeat("x", 300)} {
		tok, err := s.seal(ctx, st, []string{"k"}, 0, fuzzBinding)
		if err != nil {
			f.Fatal(err)
		}
		sealed[tok] = true
		f.Add(tok)
		f.Add(tok + "-TAMPERED")
		f.Add(tok[:len(tok)-1])
		// The next character of the alphabet at the last position.
		last := tok[len(tok)-1]
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		f.Add(tok[:len(tok)-1] + string(alphabet[(strings.IndexByte(alphabet, last)+1)%64]))
	}
	f.Add("v1.k1..")
	f.Add("v1.nokey.e30.AAAA")
	f.Fuzz(func(t *testing.T, token string) {
		p, err := s.open(ctx, token, fuzzBinding)
		if err != nil {
			if CodeOf(err) != CodeInvalidParams {
				t.Fatalf("code %d for %q", CodeOf(err), token)
			}
			return
		}
		if !sealed[token] {
			t.Fatalf("accepted a token it did not seal: %q (payload %+v)", token, p)
		}
	})
}

// TestSealerRejectsEveryVariant replaces each character of sealed tokens by
// every other character of the token alphabet (and a few others): no
// variant may verify (2026-07-28 basic/patterns/mrtr).
func TestSealerRejectsEveryVariant(t *testing.T) {
	t.Parallel()
	s := fuzzSealer()
	ctx := context.Background()
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ "
	for _, st := range []string{"", "a", "ab", "abc", "state with some length"} {
		tok, err := s.seal(ctx, st, []string{"k"}, 0, fuzzBinding)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.open(ctx, tok, fuzzBinding); err != nil {
			t.Fatalf("own token refused: %v", err)
		}
		accepted := map[int][]string{}
		for i := 0; i < len(tok); i++ {
			for j := 0; j < len(chars); j++ {
				if chars[j] == tok[i] {
					continue
				}
				v := tok[:i] + string(chars[j]) + tok[i+1:]
				if _, err := s.open(ctx, v, fuzzBinding); err == nil {
					accepted[i] = append(accepted[i], string(chars[j]))
				}
			}
		}
		for i, cs := range accepted {
			t.Errorf("state %q: token of %d bytes: position %d (%q) accepts the replacements %v", st, len(tok), i, tok[i], cs)
		}
	}
}

// TestSealerBinding checks the binding at the sealer level.
func TestSealerBinding(t *testing.T) {
	t.Parallel()
	s := fuzzSealer()
	ctx := context.Background()
	tok, err := s.seal(ctx, "st", []string{"b", "a"}, 3, fuzzBinding)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.open(ctx, tok, stateBinding{method: "tools/call", target: "t", args: []byte(`{ "a" : 1.0 }`), principal: &Principal{Issuer: "i", Subject: "s", Scopes: []string{"x"}}})
	if err != nil {
		t.Fatalf("equivalent binding refused: %v", err)
	}
	if p.State != "st" || strings.Join(p.Keys, ",") != "a,b" || p.Round != 3 {
		t.Errorf("payload %+v", p)
	}
	for name, b := range map[string]stateBinding{
		"method":    {method: "prompts/get", target: "t", args: fuzzBinding.args, principal: fuzzBinding.principal},
		"target":    {method: "tools/call", target: "u", args: fuzzBinding.args, principal: fuzzBinding.principal},
		"args":      {method: "tools/call", target: "t", args: []byte(`{"a":2}`), principal: fuzzBinding.principal},
		"principal": {method: "tools/call", target: "t", args: fuzzBinding.args, principal: &Principal{Issuer: "i", Subject: "z"}},
		"anonymous": {method: "tools/call", target: "t", args: fuzzBinding.args},
		// Length-prefixed fields: moving a boundary changes the digest.
		"boundary": {method: "tools/cal", target: "lt", args: fuzzBinding.args, principal: fuzzBinding.principal},
	} {
		if _, err := s.open(ctx, tok, b); err == nil {
			t.Errorf("%s: a state for another binding verified", name)
		}
	}
	// An empty key list fails closed.
	empty := newSealer(StaticKeys{}, time.Minute, nil)
	if _, err := empty.seal(ctx, "", nil, 0, fuzzBinding); err == nil {
		t.Error("sealed without keys")
	}
}

// FuzzAnswer checks Answer and Form.Answer on any answer a client can send
// for a key: they never panic; the action is "", ActionAccept, ActionDecline
// or ActionCancel; an error is a -32602 with no action; a decline or cancel
// is never reported as no answer (so a handler never asks a user who said
// no again); Accepted agrees with Answer; and
// Form.Answer accepts only what Answer accepts.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		`{"action":"accept","content":{"name":"Ann","guests":4}}`, `{"action":"decline"}`, `{"action":"cancel"}`,
		`{"action":"accept"}`, `{"action":"accept","content":[]}`, `{"action":"accept","content":{"guests":"4"}}`,
		`{"action":"accept","content":{"name":"A","guests":40}}`, `{"action":"Accept"}`, `{"Action":"decline"}`,
		`{"action":"decline","action":"accept","content":{}}`, `{"action":"decline","content":{"name":1}}`,
		`null`, `"accept"`, `[]`, `{}`, `{"action":null}`, `{"action":"accept","content":{"guests":4.0,"name":"\u0041"}}`,
	} {
		f.Add([]byte(s))
	}
	type guests struct {
		Name   string `json:"name"`
		Guests int    `json:"guests" jsonschema:"minimum=1,maximum=12"`
	}
	form := MustForm[guests]()
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // request bodies are valid JSON before any handler runs
		}
		in := &InputResponses{raw: map[string]json.RawMessage{"g": raw}}
		for name, answer := range map[string]func(*InputResponses, string) (guests, string, error){"Answer": Answer[guests], "Form.Answer": form.Answer} {
			v, action, err := answer(in, "g")
			switch {
			case err != nil:
				if CodeOf(err) != CodeInvalidParams || action != "" {
					t.Fatalf("%s(%s) = %q, %v: want a -32602 and no action", name, raw, action, err)
				}
			case action != "" && !validAction(action):
				t.Fatalf("%s(%s): action %q", name, raw, action)
			case action != ActionAccept && v != (guests{}):
				t.Fatalf("%s(%s): content %+v with action %q", name, raw, v, action)
			}
			// A decline or cancel is never "not answered" nor accepted: it
			// is that action, or (an answer spelled "Action", which only
			// the lenient Elicitation reads) an error that ends the call.
			if r, ok := in.Elicitation("g"); ok && r.Action != ActionAccept && err == nil && action != r.Action {
				t.Fatalf("%s(%s) = %q, %v for a %s answer", name, raw, action, err, r.Action)
			}
		}
		v1, a1, e1 := Answer[guests](in, "g")
		v2, a2, e2 := form.Answer(in, "g")
		if e2 == nil && a2 == ActionAccept && (e1 != nil || a1 != ActionAccept || v1 != v2) {
			t.Fatalf("Form.Answer accepted %s, Answer said %q, %v", raw, a1, e1)
		}
		if _, ok := Accepted[guests](in, "g"); ok != (e1 == nil && a1 == ActionAccept) {
			t.Fatalf("Accepted(%s) = %v, Answer = %q, %v", raw, ok, a1, e1)
		}
		if _, ok := form.Accepted(in, "g"); ok != (e2 == nil && a2 == ActionAccept) {
			t.Fatalf("Form.Accepted(%s) = %v, Form.Answer = %q, %v", raw, ok, a2, e2)
		}
	})
}

// clientInfoSeeds are clientInfo objects at the edges of decodeClientInfo's
// fast path.
var clientInfoSeeds = []string{
	`{}`, `{"name":"c","version":"1"}`, `{"name":"c","version":"1","title":"T","description":"D","websiteUrl":"https://x"}`,
	`{"name":"a","name":"b"}`, `{"Name":"c"}`, `{"NAME":"c","name":"d"}`, `{"name":"c","NAME":"d"}`, `{"name":null}`,
	`{"name":1}`, `{"name":"a\"b"}`, `{"name":"\u00e9"}`, `{"name":"é"}`, "{\"name\":\"\xff\"}", `{"nam\u0065":"x"}`,
	`{"icons":[{"src":"https://x/i.png","sizes":["48x48"]}],"name":"c"}`, `{"extra":{"deep":[1,2]},"name":"c"}`,
	`{"name":"c","version":"1","icons":null}`, `{"name":["c"]}`, `{"name":"c","version":{}}`, `{"ſ":"x"}`, `{"nameſ":"x"}`,
	`{"websiteurl":"x"}`, `{"WebsiteURL":"y"}`, `{"name":"x\u0000y"}`, `{"name":"\ud800"}`,
}

// FuzzDecodeClientInfo checks that decodeClientInfo decodes every valid
// JSON object exactly as encoding/json does.
func FuzzDecodeClientInfo(f *testing.F) {
	for _, s := range clientInfoSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !jsonwire.Valid(data) || !jsonwire.IsObject(data[jsonwire.SkipSpace(data, 0):]) {
			return
		}
		data = data[jsonwire.SkipSpace(data, 0):]
		got := decodeClientInfo(data)
		var want *Implementation
		if ci := (Implementation{}); json.Unmarshal(data, &ci) == nil {
			want = &ci
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeClientInfo(%s) = %s, encoding/json says %s", data, gj, wj)
		}
	})
}
