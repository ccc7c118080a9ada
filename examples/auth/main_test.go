package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/mcp"
)

// TestAuthorizationFlow walks the client side of 2026-07-28
// basic/authorization against the example and two real authorization
// servers: 401 → resource metadata → authorization server metadata →
// registration → code with PKCE and resource → call → 403 → step-up with the
// challenge's scopes → success, once per issuer (JWT, introspection). The
// run-time step-up's challenge names every scope purge needs (its own
// notes:write as well as notes:admin), so asking for exactly those is
// enough.
func TestAuthorizationFlow(t *testing.T) {
	t.Parallel()
	jwtAS := authtest.New(&authtest.Options{Alg: "ES256"})
	defer jwtAS.Close()
	introAS := authtest.New(&authtest.Options{OpaqueTokens: true, IssuerPath: "/idp"})
	defer introAS.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg := config{
		resource:    base + "/mcp",
		jwtIssuer:   jwtAS.Issuer,
		introIssuer: introAS.Issuer, introEndpoint: introAS.Issuer + "/introspect",
		introID: introAS.IntrospectionClientID, introSK: introAS.IntrospectionSecret,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ln, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	for i, issuer := range []string{jwtAS.Issuer, introAS.Issuer} {
		t.Run([]string{"jwt", "introspection"}[i], func(t *testing.T) {
			c := &client{t: t, endpoint: cfg.resource, issuer: issuer}
			// 1. No token: 401 naming the metadata.
			r := c.call("list_notes", nil)
			if r.status != 401 {
				t.Fatalf("no token: %d", r.status)
			}
			c.discover(r.challenge["resource_metadata"])
			c.authorize(r.challenge["scope"])
			if r := c.call("list_notes", nil); r.status != 200 {
				t.Fatalf("list with notes:read: %d %s", r.status, r.body)
			}
			// 2. write_note needs notes:write: 403, step up, retry.
			r = c.call("write_note", map[string]any{"text": "hi"})
			if r.status != 403 || r.challenge["error"] != "insufficient_scope" || r.challenge["scope"] != "notes:read notes:write" {
				t.Fatalf("write with notes:read: %d %v", r.status, r.challenge)
			}
			c.authorize(r.challenge["scope"])
			if r := c.call("write_note", map[string]any{"text": "hi"}); r.status != 200 || !strings.Contains(r.body, "1 notes") {
				t.Fatalf("write after step-up: %d %s", r.status, r.body)
			}
			// 3. purge all asks for notes:admin at run time.
			r = c.call("purge", map[string]any{"all": true})
			if r.status != 403 || r.challenge["scope"] != "notes:read notes:write notes:admin" {
				t.Fatalf("purge all: %d %v %s", r.status, r.challenge, r.body)
			}
			c.authorize(r.challenge["scope"])
			if r := c.call("purge", map[string]any{"all": true}); r.status != 200 || !strings.Contains(r.body, "deleted the notes of 1 users") {
				t.Fatalf("purge after step-up: %d %s", r.status, r.body)
			}
		})
	}
}

// client is a minimal OAuth client for the test.
type client struct {
	t                          *testing.T
	endpoint, issuer           string
	resource                   string
	authzURL, tokenURL, regURL string
	clientID, token, scope     string
}

type reply struct {
	status    int
	body      string
	challenge map[string]string
}

func (c *client) call(tool string, args map[string]any) reply {
	c.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}})
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(string(body)))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool} {
		req.Header.Set(k, v)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, body: string(b)}
	if h := res.Header.Get("WWW-Authenticate"); h != "" {
		chs, err := mcp.ParseChallenges(h)
		if err != nil || len(chs) != 1 {
			c.t.Fatalf("challenge %q: %v", h, err)
		}
		r.challenge = chs[0].Params
	}
	return r
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d", u, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// discover reads the resource metadata and the chosen issuer's metadata, and
// registers a client.
func (c *client) discover(prm string) {
	var doc struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(c.t, prm, &doc)
	if doc.Resource != c.endpoint || len(doc.AuthorizationServers) != 2 {
		c.t.Fatalf("resource metadata %+v", doc)
	}
	c.resource = doc.Resource
	u, _ := url.Parse(c.issuer)
	var md struct {
		Issuer, AuthorizationEndpoint, TokenEndpoint, RegistrationEndpoint string
	}
	var raw map[string]any
	getJSON(c.t, u.Scheme+"://"+u.Host+"/.well-known/oauth-authorization-server"+u.Path, &raw)
	md.Issuer, _ = raw["issuer"].(string)
	md.AuthorizationEndpoint, _ = raw["authorization_endpoint"].(string)
	md.TokenEndpoint, _ = raw["token_endpoint"].(string)
	md.RegistrationEndpoint, _ = raw["registration_endpoint"].(string)
	if md.Issuer != c.issuer {
		c.t.Fatalf("issuer %q, want %q", md.Issuer, c.issuer)
	}
	c.authzURL, c.tokenURL, c.regURL = md.AuthorizationEndpoint, md.TokenEndpoint, md.RegistrationEndpoint
	res, err := http.Post(c.regURL, "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"],"client_name":"test","token_endpoint_auth_method":"none"}`))
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(res.Body).Decode(&reg)
	if res.StatusCode != 201 || reg.ClientID == "" {
		c.t.Fatalf("registration: %d", res.StatusCode)
	}
	c.clientID = reg.ClientID
}

// authorize runs the code flow with PKCE S256 and resource for scope.
func (c *client) authorize(scope string) {
	verifier := "verifier-0123456789-0123456789-0123456789-abcdef"
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {c.clientID}, "redirect_uri": {"http://127.0.0.1:1/cb"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"st-1"}, "scope": {scope}, "resource": {c.resource}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(c.authzURL + "?" + q.Encode())
	if err != nil {
		c.t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound {
		c.t.Fatalf("authorize: %d %v", res.StatusCode, err)
	}
	back := loc.Query()
	if back.Get("state") != "st-1" || back.Get("iss") != c.issuer || back.Get("code") == "" {
		c.t.Fatalf("redirect %s", loc)
	}
	res, err = http.PostForm(c.tokenURL, url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")},
		"redirect_uri": {"http://127.0.0.1:1/cb"}, "client_id": {c.clientID}, "code_verifier": {verifier}, "resource": {c.resource}})
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(res.Body).Decode(&tok)
	if res.StatusCode != 200 || tok.AccessToken == "" {
		c.t.Fatalf("token: %d", res.StatusCode)
	}
	c.token, c.scope = tok.AccessToken, scope
}
