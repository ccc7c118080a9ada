package auth

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseAuthorization: any header values give a token, nothing, or an
// error, never a panic; a returned token is a valid b64token and round-trips.
func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{"", "Bearer abc", "bearer abc.def-ghi_~+/==", "Bearer", "Bearer ", "Bearer a b",
		"Basic dXNlcjpwYXNz", "Bearer  spaced", "Bearer =abc", "BEARER x", "Bearer abc=d", "Bearer\tx"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, v string, twice bool) {
		vals := []string{v}
		if twice {
			vals = append(vals, v)
		}
		tok, err := ParseAuthorization(vals)
		if err != nil {
			if tok != "" {
				t.Fatal("token with an error")
			}
			return
		}
		if twice {
			t.Fatal("a repeated header was accepted")
		}
		if tok == "" {
			return
		}
		if !isB64Token(tok) {
			t.Fatalf("token %q is not a b64token", tok)
		}
		again, err := ParseAuthorization([]string{"Bearer " + tok})
		if err != nil || again != tok {
			t.Fatalf("round trip: %q %v", again, err)
		}
	})
}

// FuzzSplitJWT: claim extraction from untrusted tokens never panics, and
// what it extracts has the registered types.
func FuzzSplitJWT(f *testing.F) {
	for _, s := range []string{
		"eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiYXQrand0In0.eyJpc3MiOiJodHRwczovL2FzIiwic3ViIjoidSIsImF1ZCI6WyJhIiwiYiJdLCJleHAiOjE3MDAwMDAwMDAsInNjb3BlIjoiYSBiIn0.c2ln",
		"eyJhbGciOiJub25lIn0.eyJleHAiOiJzb29uIn0.",
		"eyJhbGciOiJFUzI1NiJ9.eyJhdWQiOjEsInNjb3BlIjpbMV19.x",
		"a.b.c", "opaque", "..", "e30.e30.", "e30.bnVsbA.", "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjFlMzAwfQ.x",
		// scp "a\tb c\u00a0d", and ["e", "f g", "h\u3000"]
		"e30." + base64.RawURLEncoding.EncodeToString([]byte(`{"scp":"a\tb c\u00a0d"}`)) + ".x",
		"e30." + base64.RawURLEncoding.EncodeToString([]byte(`{"scp":["e","f g","h\u3000",""]}`)) + ".x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		h, c, err := splitJWT(tok, claimNames{scope: "scp", client: "azp"})
		if err != nil {
			if c != nil {
				t.Fatal("claims with an error")
			}
			return
		}
		_ = h
		if c.hasExp && c.exp.IsZero() {
			t.Fatal("exp present but zero")
		}
		for _, s := range c.scopes {
			if !validScopeToken(s) {
				t.Fatalf("scope %q is not a scope-token", s)
			}
		}
	})
}

// FuzzScopeList: a scope string yields only scope-tokens, each a piece of
// the string between U+0020 separators, in order; re-joined with single
// spaces they parse back to themselves.
func FuzzScopeList(f *testing.F) {
	for _, s := range []string{"", "a", "a b", "  a   b ", "a\tb", "a\u00a0b c", "\u3000", `a\"b c`, "notes:read notes:write", "x\u0085y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, _ := json.Marshal(s)
		got, err := scopeList(raw)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var want []string
		for _, piece := range strings.Split(s, " ") {
			if validScopeToken(piece) {
				want = append(want, piece)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
		again, _ := json.Marshal(strings.Join(got, " "))
		if back, _ := scopeList(again); !slices.Equal(back, got) {
			t.Fatalf("%q: round trip %q, want %q", s, back, got)
		}
		if !utf8.ValidString(strings.Join(got, "")) {
			t.Fatalf("%q: invalid UTF-8 in %q", s, got)
		}
	})
}
