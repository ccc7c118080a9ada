package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
	mcpclient "github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/mcptest"
)

// find returns the exchanges rec recorded whose path ends with suffix,
// sent with method.
func find(rec *mcptest.Recorder, method, suffix string) []mcptest.Exchange {
	var out []mcptest.Exchange
	for _, x := range rec.Exchanges() {
		if u, err := url.Parse(x.URL); err == nil && x.Method == method && strings.HasSuffix(u.Path, suffix) {
			out = append(out, x)
		}
	}
	return out
}

// scopeSet is a scope parameter as a sorted list.
func scopeSet(s string) []string {
	f := strings.Fields(s)
	slices.Sort(f)
	return slices.Compact(f)
}

// startExample serves the example (newServer, as main does) on loopback with
// cfg and returns its endpoint.
func startExample(t *testing.T, cfg config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg.resource = "http://" + ln.Addr().String() + "/mcp"
	go func() { done <- serve(ctx, cfg, ln, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return cfg.resource
}

// TestClientAuthorization runs the Go client (package client with
// client/oauth) against the example and a real authorization server, in
// each client mode and for each kind of issuer (JWT verified by JWKS,
// opaque tokens introspected): 401 → resource and authorization server
// metadata → dynamic registration → code + PKCE (oauth.Headless follows
// the authorize redirect to the redirect URI, no browser) → call → 403
// insufficient_scope → step-up with the union of scopes → success, twice
// (write_note's declared scope, purge's run-time one). It asserts the
// scopes and resource of every authorization request on the wire
// (2026-07-28 basic/authorization §Scope Selection Strategy, §Step-Up
// Authorization Flow) and the results.
func TestClientAuthorization(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs servers on loopback")
	}
	// The JWT issuer lists offline_access: the client must then add it to
	// every request; the introspection one does not list it.
	issuers := []struct {
		name    string
		opts    authtest.Options
		offline bool
	}{
		{"jwt", authtest.Options{Alg: "ES256", Scopes: []string{"notes:read", "notes:write", "notes:admin", "offline_access"}}, true},
		{"introspection", authtest.Options{OpaqueTokens: true, IssuerPath: "/idp"}, false},
	}
	modes := []mcpclient.Mode{mcpclient.ModeAuto, mcpclient.ModeModern, mcpclient.ModeLegacy}
	for _, is := range issuers {
		for _, mode := range modes {
			t.Run(is.name+"/"+mode.String(), func(t *testing.T) {
				ctx := context.Background()
				as := authtest.New(&is.opts)
				defer as.Close()
				cfg := config{}
				if is.opts.OpaqueTokens {
					cfg.introIssuer, cfg.introEndpoint = as.Issuer, as.Issuer+"/introspect"
					cfg.introID, cfg.introSK = as.IntrospectionClientID, as.IntrospectionSecret
				} else {
					cfg.jwtIssuer = as.Issuer
				}
				endpoint := startExample(t, cfg)

				// Every request the client sends, MCP and OAuth alike.
				rec := &mcptest.Recorder{}
				hc := &http.Client{Transport: rec.Wrap(http.DefaultTransport),
					CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				const redirect = "http://127.0.0.1:1/callback" // never reached: Headless reads the Location
				src := oauth.New(&oauth.Config{HTTPClient: hc, RedirectURL: redirect, Authorize: oauth.Headless(hc), ClientName: "clientauth-test"})
				c, err := mcpclient.Connect(ctx, endpoint, &mcpclient.Options{Mode: mode, HTTPClient: hc, TokenSource: src})
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer c.Close()
				if c.Modern() != (mode != mcpclient.ModeLegacy) {
					t.Fatalf("modern=%v in mode %v", c.Modern(), mode)
				}

				res, err := c.CallTool(ctx, "list_notes", map[string]any{}, nil)
				if err != nil || res.IsError {
					t.Fatalf("list_notes: %v %+v", err, res)
				}
				res, err = c.CallTool(ctx, "write_note", map[string]any{"text": "hi"}, nil)
				if err != nil || res.IsError || !strings.Contains(text(res), "1 notes") {
					t.Fatalf("write_note after step-up: %v %q", err, text(res))
				}
				res, err = c.CallTool(ctx, "purge", map[string]any{"all": true}, nil)
				if err != nil || res.IsError || !strings.Contains(text(res), "deleted the notes of 1 users") {
					t.Fatalf("purge all after step-up: %v %q", err, text(res))
				}

				// The MCP endpoint answered 401, then 403 twice, each
				// followed by a successful retry.
				var challenges []int
				for _, x := range find(rec, http.MethodPost, "/mcp") {
					if x.Status == 401 || x.Status == 403 {
						challenges = append(challenges, x.Status)
					}
				}
				if !slices.Equal(challenges, []int{401, 403, 403}) {
					t.Errorf("challenges on the wire: %v, want [401 403 403]", challenges)
				}
				// Metadata: the resource's document (as the challenge
				// named it), then the authorization server's.
				if n := len(find(rec, http.MethodGet, "/.well-known/oauth-protected-resource/mcp")); n == 0 {
					t.Error("protected resource metadata never fetched")
				}
				if n := len(find(rec, http.MethodPost, "/register")); n != 1 {
					t.Errorf("%d registrations, want 1 (kept across step-ups)", n)
				}

				// The scopes asked at each authorization: the challenge's,
				// then the union with each 403's.
				want := [][]string{
					{"notes:read"},
					{"notes:read", "notes:write"},
					{"notes:admin", "notes:read", "notes:write"},
				}
				if is.offline {
					for i := range want {
						want[i] = scopeSet(strings.Join(want[i], " ") + " offline_access")
					}
				}
				authz := find(rec, http.MethodGet, "/authorize")
				if len(authz) != len(want) {
					t.Fatalf("%d authorization requests, want %d", len(authz), len(want))
				}
				for i, x := range authz {
					u, _ := url.Parse(x.URL)
					q := u.Query()
					if got := scopeSet(q.Get("scope")); !slices.Equal(got, want[i]) {
						t.Errorf("authorization %d: scope %v, want %v", i+1, got, want[i])
					}
					if q.Get("resource") != endpoint || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
						t.Errorf("authorization %d: %v", i+1, q)
					}
					if x.Status != http.StatusFound {
						t.Errorf("authorization %d: status %d", i+1, x.Status)
					}
				}
				var codes int
				for _, x := range find(rec, http.MethodPost, "/token") {
					form, _ := url.ParseQuery(string(x.Body))
					if form.Get("grant_type") != "authorization_code" {
						continue
					}
					codes++
					if form.Get("resource") != endpoint || form.Get("code_verifier") == "" || x.Status != 200 {
						t.Errorf("token request: %v → %d", form, x.Status)
					}
				}
				if codes != len(want) {
					t.Errorf("%d code exchanges, want %d", codes, len(want))
				}
				if is.opts.OpaqueTokens && as.Introspections() == 0 {
					t.Error("the opaque tokens were never introspected")
				}
			})
		}
	}
}

// text returns the result's text content and structured content.
func text(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text + "\n")
		}
	}
	if r.StructuredContent != nil {
		fmt.Fprintf(&b, "%s", r.StructuredContent)
	}
	return b.String()
}

// toolNames lists the tools c sees, in order, through opts.
func toolNames(t *testing.T, c *mcpclient.Conn, opts *mcpclient.CallOptions) []string {
	t.Helper()
	tools, err := c.ListTools(context.Background(), opts)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	return out
}

// TestHiddenWithoutScopes: the example hides (auth.Options.HideUnauthorized)
// what the caller's token lacks the scopes for. A notes:read token lists
// list_notes only, and no draft_note prompt, in both eras; a direct call of
// a hidden tool gets the 403 that asks for notes:write, and the client's
// step-up then lists the write tools. The client caches the list (the
// example's one-minute hint, "private") per credential: the cached
// read-only list is never served after the step-up, and a call with a
// token of its own neither reads nor fills the Client's cache.
func TestHiddenWithoutScopes(t *testing.T) {
	t.Parallel()
	for _, mode := range []mcpclient.Mode{mcpclient.ModeModern, mcpclient.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			as := authtest.New(&authtest.Options{})
			defer as.Close()
			endpoint := startExample(t, config{jwtIssuer: as.Issuer})
			rec := &mcptest.Recorder{}
			hc := &http.Client{Transport: rec.Wrap(http.DefaultTransport),
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			src := oauth.New(&oauth.Config{HTTPClient: hc, RedirectURL: "http://127.0.0.1:1/callback", Authorize: oauth.Headless(hc), ClientName: "hidden-test"})
			c, err := mcpclient.Connect(ctx, endpoint, &mcpclient.Options{Mode: mode, HTTPClient: hc, TokenSource: src})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer c.Close()
			lists := func() int {
				n := 0
				for _, x := range find(rec, http.MethodPost, "/mcp") {
					if strings.Contains(string(x.Body), `"tools/list"`) && x.Status == 200 {
						n++
					}
				}
				return n
			}

			if got := toolNames(t, c, nil); !slices.Equal(got, []string{"list_notes"}) {
				t.Fatalf("tools with notes:read: %v, want [list_notes]", got)
			}
			prompts, err := c.ListPrompts(ctx, nil, nil)
			if err != nil || len(prompts.Prompts) != 0 {
				t.Fatalf("prompts with notes:read: %+v %v, want none", prompts, err)
			}
			before := lists()
			if got := toolNames(t, c, nil); !slices.Equal(got, []string{"list_notes"}) {
				t.Fatalf("tools again: %v", got)
			}
			if mode == mcpclient.ModeModern && lists() != before {
				t.Errorf("the second list was sent (%d lists on the wire, want %d): not cached", lists(), before)
			}

			// A token of the call's own with notes:write: its list, not the
			// cached one, and it does not fill the cache.
			writer := as.Mint(authtest.Claims{Subject: "other", Audience: []string{endpoint}, Scope: "notes:read notes:write"})
			if got := toolNames(t, c, &mcpclient.CallOptions{Token: writer}); !slices.Equal(got, []string{"list_notes", "purge", "write_note"}) {
				t.Errorf("tools with a notes:write token of the call's own: %v", got)
			}
			if got := toolNames(t, c, nil); !slices.Equal(got, []string{"list_notes"}) {
				t.Errorf("the Client's list after another token's: %v, want [list_notes]", got)
			}

			// The hidden tool answers with the scope challenge, not as
			// unknown: the client steps up and the call succeeds.
			res, err := c.CallTool(ctx, "write_note", map[string]any{"text": "hi"}, nil)
			if err != nil || res.IsError {
				t.Fatalf("write_note: %v %+v", err, res)
			}
			var challenged bool
			for _, x := range find(rec, http.MethodPost, "/mcp") {
				challenged = challenged || x.Status == 403 && strings.Contains(x.ResponseHeader.Get("WWW-Authenticate"), "insufficient_scope")
			}
			if !challenged {
				t.Error("no 403 insufficient_scope for the hidden tool")
			}
			before = lists()
			if got := toolNames(t, c, nil); !slices.Equal(got, []string{"list_notes", "purge", "write_note"}) {
				t.Errorf("tools after the step-up: %v, want the write tools too", got)
			}
			if lists() != before+1 {
				t.Errorf("after the step-up the list came from the cache (%d lists on the wire, want %d)", lists(), before+1)
			}
		})
	}
}
