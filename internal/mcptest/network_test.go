package mcptest_test

import (
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestNetwork: requests reach the server of their host, the fallback
// serves the rest, and inside a bubble a handler's wait costs no real
// time.
func TestNetwork(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		n := mcptest.NewNetwork()
		defer n.Close()
		named := func(name string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					time.Sleep(time.Hour)
				}
				io.WriteString(w, name)
			})
		}
		n.Serve("a.test:80", named("a"))
		n.ServeURL("http://127.0.0.1:8080/mcp", named("b"))
		hc := n.Client()
		get := func(u string) (string, error) {
			res, err := hc.Get(u)
			if err != nil {
				return "", err
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			return string(b), err
		}
		for u, want := range map[string]string{"http://a.test/": "a", "http://A.TEST:80/x": "a", "http://127.0.0.1:8080/": "b"} {
			if got, err := get(u); err != nil || got != want {
				t.Errorf("GET %s: %q, %v; want %q", u, got, err, want)
			}
		}
		if _, err := get("http://c.test/"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("an address nothing serves: %v, want ECONNREFUSED", err)
		}
		n.Serve("", named("rest"))
		if got, err := get("http://c.test/"); err != nil || got != "rest" {
			t.Errorf("fallback: %q, %v", got, err)
		}
		start := time.Now()
		if got, err := get("http://a.test/slow"); err != nil || got != "a" || time.Since(start) != time.Hour {
			t.Errorf("slow: %q, %v after %v", got, err, time.Since(start))
		}
		n.Close()
		if _, err := get("http://a.test/"); err == nil {
			t.Error("served after Close")
		}
	})
}
