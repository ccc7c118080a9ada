package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// dribble answers 200 and then one byte every 100 ms for an hour.
func dribble(w http.ResponseWriter, r *http.Request) {
	if mcptest.Dribble(w, r, 36000, 100*time.Millisecond) {
		w.Write([]byte(`{}`))
	}
}

// miniAS is a protected resource's metadata and an authorization server
// at base (PRM at /prm, RFC 8414 metadata, registration), except that the
// answer at slow dribbles.
func miniAS(base, slow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == slow {
			dribble(w, r)
			return
		}
		switch r.URL.Path {
		case "/prm":
			mcptest.WriteJSON(w, 200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
		case "/.well-known/oauth-authorization-server":
			mcptest.WriteJSON(w, 200, map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
				"registration_endpoint": base + "/register", "code_challenge_methods_supported": []string{"S256"}})
		case "/register":
			mcptest.WriteJSON(w, 201, map[string]any{"client_id": "c", "token_endpoint_auth_method": "none"})
		default:
			http.NotFound(w, r)
		}
	})
}

// approve is a user agent that approves at once.
func approve(ctx context.Context, u string) (url.Values, error) {
	q, _ := url.Parse(u)
	return url.Values{"code": {"x"}, "state": {q.Query().Get("state")}}, nil
}

const pipeBase = "http://127.0.0.1:9"

// TestRequestTimeout: a metadata, registration or token endpoint that
// dribbles its answer a byte every 100 ms holds the flow for
// DefaultRequestTimeout, not as long as it likes: the deadline covers the
// whole request, body included.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/prm", "/.well-known/oauth-authorization-server", "/register", "/token"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := oauth.Config{HTTPClient: mcptest.Serve(t, miniAS(pipeBase, path)), RedirectURL: redirect, Authorize: approve}
				start := time.Now()
				err := oauth.New(&cfg).Challenge(t.Context(), pipeBase+"/mcp", challenge401(`Bearer resource_metadata="`+pipeBase+`/prm"`))
				if !errors.Is(err, client.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("dribbling %s: %v after %v, want ErrTimeout", path, err, time.Since(start))
				}
				if d := time.Since(start); d != oauth.DefaultRequestTimeout {
					t.Fatalf("dribbling %s: failed after %v, want DefaultRequestTimeout (%v)", path, d, oauth.DefaultRequestTimeout)
				}
			})
		})
	}
}

// TestAuthorizeTimeout: a user agent that never comes back (the user
// closed the browser) ends the flow after DefaultAuthorizeTimeout; an
// explicit AuthorizeTimeout replaces it.
func TestAuthorizeTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc := mcptest.Serve(t, miniAS(pipeBase, ""))
		for _, d := range []time.Duration{0, time.Minute} {
			cfg := oauth.Config{HTTPClient: hc, RedirectURL: redirect, AuthorizeTimeout: d, Authorize: func(ctx context.Context, u string) (url.Values, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}}
			want := d
			if d == 0 {
				want = oauth.DefaultAuthorizeTimeout
			}
			start := time.Now()
			err := oauth.New(&cfg).Challenge(t.Context(), pipeBase+"/mcp", challenge401(`Bearer resource_metadata="`+pipeBase+`/prm"`))
			if !errors.Is(err, client.ErrTimeout) || time.Since(start) != want {
				t.Fatalf("AuthorizeTimeout %v: %v after %v, want ErrTimeout after %v", d, err, time.Since(start), want)
			}
		}
	})
}
