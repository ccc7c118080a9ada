package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// The go-sdk side of mcpfn's auth benchmarks (auth/bench_test.go,
// beside package auth): the same add call, bare and behind go-sdk's
// auth.RequireBearerToken with a JWT verifier built on the same library
// (lestrrat-go/jwx v2) and the same checks (signature against a JWKS with an
// RS256 key, iss, aud, exp with a minute of skew, scope; mcpfn also checks typ). go-sdk
// has no cache of verified tokens, so "jwt" here compares with mcpfn's
// "jwt-uncached".

const benchIssuer, benchResource = "https://as.example.com", "https://mcp.example.com/mcp"

type jwtVerifier struct{ set jwk.Set }

func newJWTVerifier(b *testing.B) (*jwtVerifier, string) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	key, _ := jwk.FromRaw(priv)
	key.Set(jwk.KeyIDKey, "k1")
	key.Set(jwk.AlgorithmKey, jwa.RS256)
	pub, _ := key.PublicKey()
	set := jwk.NewSet()
	set.AddKey(pub)
	tok, _ := jwt.NewBuilder().Issuer(benchIssuer).Subject("user-1").Audience([]string{benchResource}).
		IssuedAt(time.Now()).Expiration(time.Now().Add(time.Hour)).Claim("scope", "mcp").Claim("client_id", "client-1").Build()
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256, key))
	if err != nil {
		b.Fatal(err)
	}
	return &jwtVerifier{set: set}, string(signed)
}

func (v *jwtVerifier) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	t, err := jwt.ParseString(token, jwt.WithKeySet(v.set), jwt.WithValidate(true), jwt.WithIssuer(benchIssuer),
		jwt.WithAudience(benchResource), jwt.WithAcceptableSkew(time.Minute))
	if err != nil {
		return nil, auth.ErrInvalidToken
	}
	scope, _ := t.Get("scope")
	s, _ := scope.(string)
	return &auth.TokenInfo{Scopes: []string{s}, Expiration: t.Expiration(), UserID: t.Subject()}, nil
}

type discardWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }
func (w *discardWriter) Write(p []byte) (int, error) { return w.body.Write(p) }
func (w *discardWriter) Flush()                      {}

func BenchmarkDispatchToolsCall(b *testing.B) {
	v, tok := newJWTVerifier(b)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"none", newHandler()},
		{"jwt", auth.RequireBearerToken(v.verify, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", Scopes: []string{"mcp"}})(newHandler())},
	} {
		b.Run(c.name, func(b *testing.B) {
			rd := bytes.NewReader(body)
			req := httptest.NewRequest(http.MethodPost, benchResource, nil)
			req.Body = io.NopCloser(rd)
			req.ContentLength = int64(len(body))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add", "Authorization": "Bearer " + tok} {
				req.Header.Set(k, v)
			}
			w := &discardWriter{h: http.Header{}}
			run := func() {
				rd.Reset(body)
				clear(w.h)
				w.status = 0
				w.body.Reset()
				c.h.ServeHTTP(w, req)
			}
			run()
			if w.status != 0 && w.status != 200 || !bytes.Contains(w.body.Bytes(), []byte(`42`)) {
				b.Fatalf("%d %s", w.status, w.body.Bytes())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run()
			}
		})
	}
}
