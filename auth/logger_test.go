package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestNilLoggerIsDefault checks that a resource built without a Logger
// reports an outage of its authorization server to slog.Default() rather
// than nowhere. It replaces the default logger, so it is not parallel.
func TestNilLoggerIsDefault(t *testing.T) {
	logs := mcptest.DefaultLogs(t)

	as := authtest.New(nil)
	t.Cleanup(as.Close)
	const resource = "http://127.0.0.1/mcp"
	rs, err := auth.New(&auth.Options{Resource: resource, Issuers: []auth.Issuer{{Issuer: as.Issuer}}})
	if err != nil {
		t.Fatal(err)
	}
	as.SetJWKSDown(true)
	r := httptest.NewRequest(http.MethodPost, resource, nil)
	r.Header.Set("Authorization", "Bearer "+as.Mint(authtest.Claims{Audience: []string{resource}}))
	if _, err := rs.Authenticate(r); err == nil {
		t.Fatal("authenticated while the JWKS is down")
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "authorization server unavailable") {
		t.Errorf("a resource without a Logger did not log the outage to slog.Default():\n%q", l)
	}
}
