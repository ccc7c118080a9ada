package mcp

import (
	"net/http"
	"sort"
	"strings"
	"testing"
)

func TestParseWWWAuthenticate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`, `Bearer{resource_metadata=https://x/.well-known/oauth-protected-resource}`},
		{`Bearer error="insufficient_scope", scope="a b", error_description="need \"b\""`, `Bearer{error=insufficient_scope,error_description=need "b",scope=a b}`},
		{`Basic realm="x", Bearer realm=y,error=invalid_token`, `Basic{realm=x};Bearer{error=invalid_token,realm=y}`},
		{`Negotiate abc123==, Bearer`, `Negotiate[abc123==]{};Bearer{}`},
		{`Bearer , , Basic`, `Bearer{};Basic{}`},
		{`bearer SCOPE="A"`, `bearer{scope=A}`},
		{`Bearer realm="unterminated`, `Bearer{}`},
		{``, ``},
	} {
		h := http.Header{"Www-Authenticate": {tc.in}}
		var parts []string
		for _, c := range ParseWWWAuthenticate(h) {
			s := c.Scheme
			if c.Token68 != "" {
				s += "[" + c.Token68 + "]"
			}
			var ps []string
			for k, v := range c.Params {
				ps = append(ps, k+"="+v)
			}
			sort.Strings(ps)
			parts = append(parts, s+"{"+strings.Join(ps, ",")+"}")
		}
		if got := strings.Join(parts, ";"); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.in, got, tc.want)
		}
	}
	p, ok := BearerChallenge(http.Header{"Www-Authenticate": {`Basic realm=a`, `Bearer scope="s"`}})
	if !ok || p["scope"] != "s" {
		t.Fatalf("BearerChallenge %v %v", p, ok)
	}
	if p, ok := BearerChallenge(http.Header{"Www-Authenticate": {`Bearer`}}); !ok || p == nil {
		t.Fatalf("BearerChallenge of a bare Bearer: %v %v", p, ok)
	}
	if _, ok := BearerChallenge(http.Header{"Www-Authenticate": {`Basic realm=a`}}); ok {
		t.Fatal("BearerChallenge found a Bearer challenge in a Basic one")
	}
}

// TestParseChallengesFaults: a malformed value is reported, and what was
// read before the fault is kept.
func TestParseChallengesFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		schemes int
		err     error
	}{
		{`Bearer realm="x", scope="a"`, 1, nil},
		{`Bearer realm="unterminated`, 1, errUnterminated},
		{`Bearer scope="a", scope="b"`, 1, errRepeated},
		{`=oops`, 0, errNoScheme},
		{`Basic realm=x, Bearer scope=a @`, 2, errNoScheme},
		{`Basic realm=x, "Bearer"`, 1, errNoScheme},
	} {
		cs, err := ParseChallenges(tc.in)
		if err != tc.err || len(cs) != tc.schemes {
			t.Errorf("%q: %d challenges, %v; want %d, %v", tc.in, len(cs), err, tc.schemes, tc.err)
		}
	}
	cs, _ := ParseChallenges(`Bearer scope="a", scope="b", realm=r`)
	if len(cs) != 1 || cs[0].Params["scope"] != "a" || cs[0].Params["realm"] != "r" {
		t.Errorf("a repeated param: %+v, want the first value kept and the parse continued", cs)
	}
}

// TestFormatChallenge: params in order, empty ones left out, values quoted.
func TestFormatChallenge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scheme string
		params []AuthParam
		want   string
	}{
		{"Bearer", []AuthParam{{Name: "resource_metadata", Value: "https://h/.well-known/oauth-protected-resource"}, {Name: "scope", Value: ""}, {Name: "error", Value: "invalid_token"}},
			`Bearer resource_metadata="https://h/.well-known/oauth-protected-resource", error="invalid_token"`},
		{"Basic", []AuthParam{{Name: "realm", Value: `a "b" \c` + "\x01"}, {Name: "charset", Value: "UTF-8"}}, `Basic realm="a \"b\" \\c", charset="UTF-8"`},
		{"Bearer", nil, "Bearer"},
	} {
		if got := FormatChallenge(tc.scheme, tc.params...); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}

// FuzzParseChallenges: any value parses without panicking into at most
// one challenge per byte, each with a token for a scheme.
func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/y"`)
	f.Add(`Basic realm=x, Bearer abc==, Digest a="\"", b=c`)
	f.Add(`,,, Bearer realm="`)
	f.Fuzz(func(t *testing.T, s string) {
		cs, _ := ParseChallenges(s)
		if len(cs) > len(s) {
			t.Fatalf("%d challenges from %d bytes", len(cs), len(s))
		}
		for _, c := range cs {
			if c.Scheme == "" || strings.IndexFunc(c.Scheme, func(r rune) bool { return r > 0x7f || !isTchar(byte(r)) }) >= 0 {
				t.Fatalf("bad scheme %q", c.Scheme)
			}
			if c.Params == nil {
				t.Fatalf("nil params in %+v", c)
			}
		}
	})
}

// FuzzChallengeRoundTrip: FormatChallenge quotes any value so that
// ParseChallenges reads it back (control characters dropped).
func FuzzChallengeRoundTrip(f *testing.F) {
	f.Add("https://h/.well-known/oauth-protected-resource/mcp", "a b", `desc with "quotes" and \ backslash`)
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, md, scope, desc string) {
		h := FormatChallenge("Bearer", AuthParam{Name: "resource_metadata", Value: md}, AuthParam{Name: "scope", Value: scope},
			AuthParam{Name: "error", Value: "insufficient_scope"}, AuthParam{Name: "error_description", Value: desc})
		chs, err := ParseChallenges(h)
		if err != nil || len(chs) != 1 {
			t.Fatalf("%q: %v %v", h, err, chs)
		}
		for name, want := range map[string]string{"resource_metadata": md, "scope": scope, "error_description": desc} {
			w := cleanBytes(want)
			if want == "" {
				if _, ok := chs[0].Params[name]; ok {
					t.Fatalf("empty %s sent", name)
				}
				continue
			}
			if chs[0].Params[name] != w {
				t.Fatalf("%s: got %q, want %q (header %q)", name, chs[0].Params[name], w, h)
			}
		}
	})
}

// cleanBytes drops the bytes FormatChallenge cannot put in a quoted string.
func cleanBytes(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

// FuzzBearerChallenge: the Bearer challenge a client reads (the
// resource_metadata and scope client/oauth acts on) survives being written
// again: read, written with FormatChallenge's quoting, read again, the
// values are the same.
func FuzzBearerChallenge(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`,
		`Bearer error="insufficient_scope", scope="files:write", error_description="need \"write\""`,
		`Basic realm="x", Bearer scope=a`, `Bearer`, `Bearer abc==`, `, ,Bearer ,scope="`, `DPoP algs="ES256", Bearer`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := BearerChallenge(http.Header{"Www-Authenticate": {s}})
		if !ok {
			return
		}
		rm, sc := p["resource_metadata"], p["scope"]
		q := func(v string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"` }
		again, ok := BearerChallenge(http.Header{"Www-Authenticate": {"Bearer resource_metadata=" + q(rm) + ", scope=" + q(sc)}})
		if !ok || again["resource_metadata"] != rm || again["scope"] != sc {
			t.Fatalf("round trip of %q: %q %q → %v", s, rm, sc, again)
		}
	})
}
