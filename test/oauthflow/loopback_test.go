package oauthflow_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
)

// TestLoopback: the native-app user agent. The "browser" follows the
// authorization server's redirect to the loopback listener, which hands the
// code back to the flow.
func TestLoopback(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var opened []string
	lb, err := oauth.NewLoopback(func(u string) error {
		mu.Lock()
		opened = append(opened, u)
		mu.Unlock()
		go func() {
			if resp, err := http.Get(u); err == nil { // follows the redirect to the listener
				resp.Body.Close()
			}
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	as := newAS(t, authtest.Options{})
	rs := newRS(t, as, core.ModeAuto)
	src := oauth.New(&oauth.Config{RedirectURL: lb.RedirectURL(), Authorize: lb.Authorize})
	c := connect(t, rs, src)
	if _, err := c.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	auth, _, reg := snapshot(as)
	mu.Lock()
	n := len(opened)
	mu.Unlock()
	if n != 1 || len(auth) != 1 || auth[0].Get("redirect_uri") != lb.RedirectURL() {
		t.Fatalf("opened %d, authorizations %v", n, auth)
	}
	if got := toStrings(reg[0]["redirect_uris"]); len(got) != 1 || got[0] != lb.RedirectURL() || reg[0]["application_type"] != "native" {
		t.Fatalf("registration %v", reg[0])
	}

	// A callback nobody waits for is refused.
	resp, err := http.Get(lb.RedirectURL() + "?code=x&state=y")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("stray callback: %d", resp.StatusCode)
	}
	// A cancelled context ends the wait.
	ctx, cancel := context.WithCancel(t.Context())
	lb2, err := oauth.NewLoopback(func(string) error { cancel(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer lb2.Close()
	if _, err := lb2.Authorize(ctx, "http://127.0.0.1:9/authorize"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Authorize after cancel: %v", err)
	}
}
