package probe

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHandler serves h at /mcp on a loopback server and fails t unless h
// answers every request the load generator sends, in both protocol eras,
// with verified results. It logs one sample exchange per request kind.
func TestHandler(t *testing.T, h http.Handler) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	rep := Conform(strings.TrimPrefix(srv.URL, "http://"), 4096)
	if !rep.Modern || !rep.Legacy {
		t.Fatalf("modern %v legacy %v: %s", rep.Modern, rep.Legacy, strings.Join(rep.Problems, "\n"))
	}
	for _, s := range rep.Samples {
		t.Logf("%s\n%s\n->\n%s", s.Title, s.Request, s.Response)
	}
}
