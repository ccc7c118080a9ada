package auth_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

const benchResource = "https://mcp.example.com/mcp"

// benchResourceFor returns a Resource trusting as (a JWT issuer) and intro
// (introspection), with a warm JWKS.
func benchResourceFor(b *testing.B, as, intro *authtest.Server, jwtCache int) *auth.ProtectedResource {
	o := auth.Options{
		JWTCacheSize: jwtCache,
		Resource:     benchResource,
		Issuers:      []auth.Issuer{{Issuer: as.Issuer}},
		Required:     []string{"mcp"},
		HTTPClient:   as.Client(),
	}
	if intro != nil {
		o.Issuers = append(o.Issuers, auth.Issuer{Issuer: intro.Issuer, Introspection: &auth.Introspection{
			Endpoint: intro.Issuer + "/introspect", ClientID: intro.IntrospectionClientID, ClientSecret: intro.IntrospectionSecret}})
	}
	rs, err := auth.New(&o)
	if err != nil {
		b.Fatal(err)
	}
	return rs
}

func authRequest(tok string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, benchResource, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

// BenchmarkVerifyJWT is Authenticate of a JWT access token with a warm JWKS:
// header parsing, signature verification, claim checks, the context values
// (RS256, ES256: the verified-token cache off); and with the cache
// (cached: the same token again).
func BenchmarkVerifyJWT(b *testing.B) {
	as := authtest.New(nil)
	defer as.Close()
	uncached := benchResourceFor(b, as, nil, -1)
	cached := benchResourceFor(b, as, nil, 0)
	for _, alg := range []string{"RS256", "ES256", "cached"} {
		rs := uncached
		if alg == "cached" {
			rs, alg = cached, "RS256"
		}
		name := alg
		if rs == cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			req := authRequest(as.MintWith(authtest.Claims{Audience: []string{benchResource}, Scope: "mcp"}, authtest.MintOptions{Alg: alg}))
			if _, err := rs.Authenticate(req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := rs.Authenticate(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIntrospectCached is Authenticate of an opaque token whose
// introspection answer is cached.
func BenchmarkIntrospectCached(b *testing.B) {
	as := authtest.New(nil)
	defer as.Close()
	intro := authtest.New(&authtest.Options{OpaqueTokens: true})
	defer intro.Close()
	rs := benchResourceFor(b, as, intro, 0)
	req := authRequest(intro.Opaque(authtest.Claims{Audience: []string{benchResource}, Scope: "mcp"}))
	if _, err := rs.Authenticate(req); err != nil {
		b.Fatal(err)
	}
	calls := intro.Introspections()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rs.Authenticate(req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if intro.Introspections() != calls {
		b.Fatal("the cache was not used")
	}
}

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

// BenchmarkDispatchToolsCall is a whole tools/call (decode, dispatch,
// encode) of a two-integer add, without and with a JWT authenticator in
// front (with the verified-token cache, as a client reusing its token sees
// it, and without): the difference is auth's per-request cost.
func BenchmarkDispatchToolsCall(b *testing.B) {
	as := authtest.New(nil)
	defer as.Close()
	tok := as.Mint(authtest.Claims{Audience: []string{benchResource}, Scope: "mcp"})
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	for _, c := range []struct {
		name string
		a    core.Authenticator
	}{{"none", nil}, {"jwt", benchResourceFor(b, as, nil, 0)}, {"jwt-uncached", benchResourceFor(b, as, nil, -1)}} {
		b.Run(c.name, func(b *testing.B) {
			srv := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, &core.ServerOptions{Authenticator: c.a})
			core.AddTool(srv, &core.Tool{Name: "add", Description: "Add."},
				func(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) { return in.A + in.B, nil })
			rd := bytes.NewReader(body)
			req := httptest.NewRequest(http.MethodPost, benchResource, nil)
			req.Body = io.NopCloser(rd)
			req.ContentLength = int64(len(body))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add", "Authorization": "Bearer " + tok} {
				req.Header.Set(k, v)
			}
			w := &mcptest.DiscardWriter{}
			run := func() {
				rd.Reset(body)
				w.Reset()
				srv.ServeHTTP(w, req)
			}
			run()
			if w.Status != 0 && w.Status != 200 || !bytes.Contains(w.Body.Bytes(), []byte(`"text":"42"`)) {
				b.Fatalf("%d %s", w.Status, w.Body.Bytes())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run()
			}
		})
	}
}
