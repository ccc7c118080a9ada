package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// memStore is a Store in memory that records its calls.
type memStore struct {
	mu      sync.Mutex
	entries map[oauth.StoreKey]oauth.StoreEntry
	loadErr error
	loads   int
	saves   int
}

func (m *memStore) Load(_ context.Context, k oauth.StoreKey) (*oauth.StoreEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if m.loadErr != nil {
		return nil, m.loadErr
	}
	e, ok := m.entries[k]
	if !ok {
		return nil, nil
	}
	return &e, nil
}

func (m *memStore) Save(_ context.Context, k oauth.StoreKey, e *oauth.StoreEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saves++
	m.entries[k] = *e
	return nil
}

// storeAS is a protected resource's metadata and an authorization server
// that issues a new access token on every token request, counting them.
func storeAS(t *testing.T) (base string, tokens func() int) {
	var mu sync.Mutex
	n := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/prm":
			mcptest.WriteJSON(w, 200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}, "scopes_supported": []string{"s"}})
		case "/.well-known/oauth-authorization-server":
			mcptest.WriteJSON(w, 200, map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
				"registration_endpoint": base + "/register", "code_challenge_methods_supported": []string{"S256"}})
		case "/register":
			mcptest.WriteJSON(w, 201, map[string]any{"client_id": "dyn", "token_endpoint_auth_method": "none"})
		case "/token":
			mu.Lock()
			n++
			tok := "at" + string(rune('0'+n))
			mu.Unlock()
			mcptest.WriteJSON(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt"})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	base = ts.URL
	return base, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestStore: the Source saves what it obtains under the resource and the
// issuer, and a new Source with the same Store uses the saved token
// without a token request; tokens of another client, or a Store that fails
// to load, cost a new authorization, never an error.
func TestStore(t *testing.T) {
	t.Parallel()
	base, tokens := storeAS(t)
	ch := func() *http.Response { return challenge401(`Bearer resource_metadata="` + base + `/prm"`) }
	st := &memStore{entries: map[oauth.StoreKey]oauth.StoreEntry{}}
	cfg := oauth.Config{RedirectURL: redirect, Authorize: approve, Store: st}
	get := func(src *oauth.Source) string {
		t.Helper()
		if err := src.Challenge(t.Context(), base+"/mcp", ch()); err != nil {
			t.Fatal(err)
		}
		tok, err := src.Token(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	if tok := get(oauth.New(&cfg)); tok != "at1" || tokens() != 1 {
		t.Fatalf("first Source: %q, %d token requests", tok, tokens())
	}
	key := oauth.StoreKey{Resource: base + "/mcp", Issuer: base}
	e, ok := st.entries[key]
	if !ok || st.saves != 1 || e.AccessToken != "at1" || e.RefreshToken != "rt" || e.ClientID != "dyn" ||
		e.Registration == nil || e.Registration.ID != "dyn" || e.Registration.Issuer != base || e.RedirectURL != redirect ||
		!slices.Equal(e.Scopes, []string{"s"}) || time.Until(e.Expiry) < 59*time.Minute {
		t.Fatalf("saved %v: %+v", st.entries, e)
	}

	// A new Source (a new process): the saved token, no request.
	if tok := get(oauth.New(&cfg)); tok != "at1" || tokens() != 1 {
		t.Fatalf("second Source: %q, %d token requests", tok, tokens())
	}

	// A pre-registered client other than the one the tokens were issued
	// to: not used with them.
	pre := cfg
	pre.Clients = func(issuer string) (oauth.Client, bool) {
		return oauth.Client{ID: "pre", Issuer: issuer}, true
	}
	if tok := get(oauth.New(&pre)); tok != "at2" || tokens() != 2 {
		t.Fatalf("another client: %q, %d token requests", tok, tokens())
	}
	if e := st.entries[key]; e.ClientID != "pre" || e.Registration != nil {
		t.Fatalf("entry after the pre-registered client: %+v", e)
	}

	// A Store that cannot load: a login as without one.
	st.mu.Lock()
	st.loadErr = errors.New("disk on fire")
	st.mu.Unlock()
	if tok := get(oauth.New(&cfg)); tok != "at3" || tokens() != 3 {
		t.Fatalf("failing Load: %q, %d token requests", tok, tokens())
	}
}
