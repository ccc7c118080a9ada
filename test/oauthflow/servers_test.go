package oauthflow_test

// The authorization server (auth/authtest) and a protected MCP server
// for the tests. The resource server is a core.Server behind
// adapters/nethttp that checks each token by introspection at its current
// authorization server (audience = resource, scopes per method) and serves
// its protected resource metadata.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

const redirect = "http://127.0.0.1:9/callback"

func codeConfig() *oauth.Config {
	return &oauth.Config{RedirectURL: redirect, Authorize: oauth.Headless(nil)}
}

// newAS starts an authorization server for the test. Without AuthMethods
// in o it offers public clients only (none), as the flows of a native
// client meet most. Its access tokens are ES256 JWTs (the resource
// introspects them; an EC key is quick to make, an RSA one is not).
func newAS(t testing.TB, o authtest.Options) *authtest.Server {
	if o.AuthMethods == nil {
		o.AuthMethods = []string{"none"}
	}
	if o.Alg == "" {
		o.Alg = "ES256"
	}
	as := authtest.New(&o)
	t.Cleanup(as.Close)
	return as
}

// snapshot returns what the authorization server saw: the authorization
// requests' queries, the token requests' forms, the registration bodies.
func snapshot(as *authtest.Server) (auth, tok []url.Values, reg []map[string]any) {
	for _, r := range as.Requests(authtest.EndpointAuthorization) {
		auth = append(auth, r.Form)
	}
	for _, r := range as.Requests(authtest.EndpointToken) {
		tok = append(tok, r.Form)
	}
	for _, r := range as.Requests(authtest.EndpointRegistration) {
		reg = append(reg, r.JSON)
	}
	return auth, tok, reg
}

// tokenAuth returns the Authorization header of each token request.
func tokenAuth(as *authtest.Server) []string {
	var h []string
	for _, r := range as.Requests(authtest.EndpointToken) {
		h = append(h, r.Authorization)
	}
	return h
}

// metaGets returns the paths of the metadata requests, 404s included.
func metaGets(as *authtest.Server) []string {
	var p []string
	for _, r := range as.Requests(authtest.EndpointMetadata) {
		p = append(p, r.Path)
	}
	return p
}

// asTraffic is every request the authorization server saw.
func asTraffic(as *authtest.Server) int {
	n := 0
	for _, e := range []authtest.Endpoint{authtest.EndpointMetadata, authtest.EndpointAuthorization, authtest.EndpointToken,
		authtest.EndpointRegistration, authtest.EndpointJWKS, authtest.EndpointIntrospection} {
		n += len(as.Requests(e))
	}
	return n
}

// challenge401 is a 401 answer carrying header as WWW-Authenticate.
func challenge401(header string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", nil)
	h := http.Header{}
	if header != "" {
		h.Set("WWW-Authenticate", header)
	}
	return &http.Response{StatusCode: 401, Header: h, Request: req}
}

// testRS is a protected MCP server: PRM at the path-form well-known URL,
// every POST needs a token the current AS says is active for this
// resource, with the scopes scopeFor(method) names.
type testRS struct {
	origin string // scheme and host
	url    string // the MCP endpoint
	hc     *http.Client

	mu        sync.Mutex
	as        *authtest.Server
	before    []string // issuers the PRM lists ahead of as
	resource  string   // override of the PRM resource
	scopes    []string // PRM scopes_supported
	scopeFor  func(method string) []string
	challenge bool // put scope= in the 401 challenge
	prmGets   []string
}

// newRS serves a protected MCP server on loopback.
func newRS(t testing.TB, as *authtest.Server, mode core.Mode) *testRS {
	rs := &testRS{as: as, hc: http.DefaultClient}
	srv := httptest.NewServer(rs.handler(mode))
	t.Cleanup(srv.Close)
	rs.setOrigin(srv.URL)
	return rs
}

// fakePorts numbers the loopback addresses of resource servers on an
// in-memory network: ports below 1024, which no httptest server gets, so
// that no two servers of the process share a URL (the client remembers
// the era of each).
var fakePorts atomic.Int32

// newRSOn serves a protected MCP server on an in-memory network (inside a
// testing/synctest bubble), at a loopback address of its own.
func newRSOn(t testing.TB, n *mcptest.Network, as *authtest.Server, mode core.Mode) *testRS {
	rs := &testRS{as: as, hc: n.Client()}
	addr := fmt.Sprintf("127.0.0.1:%d", 100+fakePorts.Add(1))
	n.Serve(addr, rs.handler(mode))
	rs.setOrigin("http://" + addr)
	return rs
}

func (rs *testRS) setOrigin(origin string) {
	rs.origin = origin
	rs.url = origin + nethttp.DefaultPath
}

func (rs *testRS) handler(mode core.Mode) http.Handler {
	srv := core.NewServer(core.Implementation{Name: "protected", Version: "1"}, &core.ServerOptions{Mode: mode})
	core.AddTool(srv, &core.Tool{Name: "write"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "written", nil
	})
	mux := http.NewServeMux()
	mux.Handle(nethttp.DefaultPath, nethttp.NewHandler(srv, &nethttp.Options{Middleware: rs.guard}))
	mux.HandleFunc("/.well-known/", func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.prmGets = append(rs.prmGets, r.URL.Path)
		res, as, scopes, before := rs.resource, rs.as, rs.scopes, rs.before
		rs.mu.Unlock()
		if r.URL.Path != "/.well-known/oauth-protected-resource"+nethttp.DefaultPath {
			http.NotFound(w, r)
			return
		}
		if res == "" {
			res = rs.url
		}
		m := map[string]any{"resource": res, "authorization_servers": append(slices.Clone(before), as.Issuer)}
		if scopes != nil {
			m["scopes_supported"] = scopes
		}
		mcptest.WriteJSON(w, 200, m)
	})
	return mux
}

func (rs *testRS) setAS(as *authtest.Server) {
	rs.mu.Lock()
	rs.as = as
	rs.mu.Unlock()
}

// introspect asks as about tok (RFC 7662): whether it is an active access
// token for this resource, and its scopes.
func (rs *testRS) introspect(ctx context.Context, as *authtest.Server, tok string) ([]string, bool) {
	if tok == "" {
		return nil, false
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, as.Issuer+"/introspect", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(as.IntrospectionClientID), url.QueryEscape(as.IntrospectionSecret))
	res, err := rs.hc.Do(req)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	var info struct {
		Active    bool   `json:"active"`
		TokenType string `json:"token_type"`
		Scope     string `json:"scope"`
		Aud       any    `json:"aud"`
	}
	if res.StatusCode != 200 || json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&info) != nil || !info.Active || info.TokenType == "refresh_token" {
		return nil, false
	}
	var aud []string
	switch a := info.Aud.(type) {
	case string:
		aud = []string{a}
	case []any:
		for _, v := range a {
			s, _ := v.(string)
			aud = append(aud, s)
		}
	}
	return strings.Fields(info.Scope), slices.Contains(aud, rs.url)
}

func (rs *testRS) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var msg struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &msg)
		rs.mu.Lock()
		as, scopeFor, withScope := rs.as, rs.scopeFor, rs.challenge
		rs.mu.Unlock()
		var need []string
		if scopeFor != nil {
			need = scopeFor(msg.Method)
		}
		prm := rs.origin + "/.well-known/oauth-protected-resource" + nethttp.DefaultPath
		scopes, ok := rs.introspect(r.Context(), as, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if !ok {
			ch := `Bearer resource_metadata="` + prm + `"`
			if withScope && len(need) > 0 {
				ch += `, scope="` + strings.Join(need, " ") + `"`
			}
			w.Header().Set("WWW-Authenticate", ch)
			w.WriteHeader(401)
			return
		}
		for _, s := range need {
			if !slices.Contains(scopes, s) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.Join(need, " ")+`", resource_metadata="`+prm+`"`)
				w.WriteHeader(403)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// connect connects a client with the token source src to rs, and closes
// it when the test ends.
func connect(t *testing.T, rs *testRS, src *oauth.Source) *client.Conn {
	t.Helper()
	c, err := client.Connect(t.Context(), rs.url, &client.Options{TokenSource: src, HTTPClient: rs.clientHTTP()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clientHTTP is the HTTP client that reaches rs: nil (the default) on
// loopback, the in-memory network's otherwise.
func (rs *testRS) clientHTTP() *http.Client {
	if rs.hc == http.DefaultClient {
		return nil
	}
	return rs.hc
}

// challengeFor runs one Challenge of src against rs directly, as the
// client would after a 401 without a token.
func challengeFor(t *testing.T, rs *testRS, src *oauth.Source) error {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, rs.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	resp, err := rs.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	return src.Challenge(t.Context(), rs.url, resp)
}
