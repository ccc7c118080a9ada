package auth_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// Tests of timing (fetch timeouts, retry intervals, cache periods) run in a
// testing/synctest bubble: the resource's clock is the bubble's fake clock,
// and the authorization server's handler (authtest, unchanged) is served
// inside the bubble over an in-memory network, since goroutines blocked on
// real sockets would keep the fake clock from advancing.

const bubbleResource = "https://mcp.example.com/mcp"

// bubbleResourceFor returns a Resource for bubbleResource whose outbound
// calls reach as inside the bubble. Without Issuers in o, it trusts as's
// JWTs; Required defaults to {"mcp"}.
func bubbleResourceFor(t *testing.T, as *authtest.Server, o auth.Options) *auth.ProtectedResource {
	t.Helper()
	o.Resource = bubbleResource
	if o.Issuers == nil {
		o.Issuers = []auth.Issuer{{Issuer: as.Issuer}}
	}
	if o.Required == nil {
		o.Required = []string{"mcp"}
	}
	o.HTTPClient = mcptest.Serve(t, as.Handler())
	rs, err := auth.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// introspectingResource trusts as by introspection only.
func introspectingResource(t *testing.T, as *authtest.Server, in auth.Introspection) *auth.ProtectedResource {
	in.Endpoint = as.Issuer + "/introspect"
	in.ClientID, in.ClientSecret = as.IntrospectionClientID, as.IntrospectionSecret
	return bubbleResourceFor(t, as, auth.Options{Issuers: []auth.Issuer{{Issuer: as.Issuer, Introspection: &in}}})
}

// asBubble runs f in a testing/synctest bubble with an authorization
// server of opts, as, started outside the bubble (as its listener must
// be) and closed when the test ends.
func asBubble(t *testing.T, opts *authtest.Options, f func(t *testing.T, as *authtest.Server)) {
	t.Helper()
	as := authtest.New(opts)
	t.Cleanup(as.Close)
	synctest.Test(t, func(t *testing.T) { f(t, as) })
}

// introspectionBubble runs f in a testing/synctest bubble with an
// authorization server of opaque tokens, as, and a resource, rs, that
// trusts it by introspection with in.
func introspectionBubble(t *testing.T, in auth.Introspection, f func(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource)) {
	t.Helper()
	asBubble(t, &authtest.Options{OpaqueTokens: true}, func(t *testing.T, as *authtest.Server) {
		f(t, as, introspectingResource(t, as, in))
	})
}

// authn runs Authenticate for tok with ctx and returns the HTTP status it
// answers with (200 for success) and the error.
func authn(ctx context.Context, rs *auth.ProtectedResource, tok string) (int, error) {
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, bubbleResource, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	_, err := rs.Authenticate(r)
	if err == nil {
		return http.StatusOK, nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.HTTPStatus(), err
	}
	return 0, err
}

// bubbleToken mints a JWT for bubbleResource (call inside the bubble, so
// that its times follow the bubble's clock).
func bubbleToken(as *authtest.Server, scope string) string {
	return as.Mint(authtest.Claims{Audience: []string{bubbleResource}, Scope: scope})
}

// bubbleOpaque is bubbleToken for an opaque token.
func bubbleOpaque(as *authtest.Server, c authtest.Claims) string {
	c.Audience = []string{bubbleResource}
	if c.Scope == "" {
		c.Scope = "mcp"
	}
	return as.Opaque(c)
}

// logTo returns a debug-level text logger writing to b.
func logTo(b *mcptest.LogBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
