package oauth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/mcp"
)

// validNonce is RFC 9449 §8.1: nonce = 1*NonceChar, NonceChar = %x21 /
// %x23-5B / %x5D-7E, of at most maxNonceLen bytes here.
var validNonce = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`)

// proofNonce returns the nonce claim of a DPoP proof ("" when absent).
func proofNonce(t *testing.T, proof string) string {
	t.Helper()
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		t.Fatalf("proof %q is not a compact JWS", proof)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Nonce *string `json:"nonce"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Nonce == nil {
		return ""
	}
	if *c.Nonce == "" {
		t.Fatal("the proof has an empty nonce claim")
	}
	return *c.Nonce
}

// FuzzDPoPNonceChallenge: a resource server's answer (status,
// WWW-Authenticate, DPoP-Nonce), all of it untrusted, is a nonce demand
// (RFC 9449 §9) exactly when it is a 401 with a DPoP challenge saying
// error="use_dpop_nonce" and a DPoP-Nonce of the §8.1 grammar and bounded
// length; the Source then puts that nonce, unchanged, in its next proof to
// that server, and otherwise none. Nothing panics.
func FuzzDPoPNonceChallenge(f *testing.F) {
	for _, s := range []struct {
		status int
		www    string
		nonce  string
	}{
		{401, `DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`, "eyJ7S_zG.eyJH0-Z.HX4w-7v"},
		{401, `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", DPoP algs="ES256", error="use_dpop_nonce"`, "n"},
		{401, `dpop error=use_dpop_nonce`, "a\"b"},
		{401, `DPoP error="invalid_token"`, "n"},
		{401, `Bearer error="use_dpop_nonce"`, "n"},
		{400, `DPoP error="use_dpop_nonce"`, "n"},
		{401, `DPoP error="use_dpop_nonce"`, ""},
		{401, `DPoP error="use_dpop_nonce"`, strings.Repeat("x", maxNonceLen+1)},
		{401, `DPoP error="use_dpop_nonce`, "n"},
		{401, `DPoP error="use_dpop_nonce", error="invalid_token"`, "n\x00"},
	} {
		f.Add(s.status, s.www, s.nonce)
	}
	const endpoint = "https://mcp.example.com/mcp"
	f.Fuzz(func(t *testing.T, status int, www, nonce string) {
		s := New(nil)
		req, err := http.NewRequest(http.MethodPost, endpoint, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("DPoP", "a proof")
		resp := &http.Response{StatusCode: status, Request: req, Header: http.Header{}}
		if www != "" {
			resp.Header["Www-Authenticate"] = []string{www}
		}
		if nonce != "" {
			resp.Header["Dpop-Nonce"] = []string{nonce}
		}

		demand := false
		for _, c := range mcp.ParseWWWAuthenticate(resp.Header) {
			if strings.EqualFold(c.Scheme, "DPoP") {
				demand = c.Params["error"] == "use_dpop_nonce"
				break
			}
		}
		want := status == http.StatusUnauthorized && demand && len(nonce) <= maxNonceLen && validNonce.MatchString(nonce)
		if got := s.nonceChallenge(endpoint, resp); got != want {
			t.Fatalf("nonceChallenge(%d, %q, %q) = %v, want %v", status, www, nonce, got, want)
		}

		p, err := s.dpop.proof(http.MethodPost, endpoint+"?q=1", "tok")
		if err != nil {
			t.Fatal(err)
		}
		got := proofNonce(t, p)
		if want && got != nonce {
			t.Fatalf("the next proof has nonce %q, want %q", got, nonce)
		}
		if !want && got != "" {
			t.Fatalf("the next proof has nonce %q, but none was demanded", got)
		}
		// A nonce is the server's: a proof to another origin has none.
		p, err = s.dpop.proof(http.MethodPost, "https://other.example.com/mcp", "tok")
		if err != nil {
			t.Fatal(err)
		}
		if n := proofNonce(t, p); n != "" {
			t.Fatalf("a proof to another origin has nonce %q", n)
		}
	})
}

// TestDPoPNoncesBounded: the nonces of many servers take a bounded map;
// the latest server's nonce is the one kept for it.
func TestDPoPNoncesBounded(t *testing.T) {
	var d dpopState
	for i := range 10 * maxNonces {
		u := fmt.Sprintf("https://s%d.example.com/mcp", i)
		if !d.noteNonce(u, http.Header{"Dpop-Nonce": {fmt.Sprintf("n%d", i)}}) {
			t.Fatalf("nonce of %s refused", u)
		}
		if len(d.nonces) > maxNonces {
			t.Fatalf("%d nonces kept, more than %d", len(d.nonces), maxNonces)
		}
	}
	lastURL := fmt.Sprintf("https://s%d.example.com/mcp", 10*maxNonces-1)
	u, _ := url.Parse(lastURL)
	last := origin(u)
	if got := d.nonces[last]; got != fmt.Sprintf("n%d", 10*maxNonces-1) {
		t.Fatalf("the latest server's nonce is %q", got)
	}
	// A later nonce of a server replaces its earlier one.
	d.noteNonce(lastURL, http.Header{"Dpop-Nonce": {"again"}})
	if got := d.nonces[last]; got != "again" {
		t.Fatalf("the replaced nonce is %q, want again", got)
	}
}
