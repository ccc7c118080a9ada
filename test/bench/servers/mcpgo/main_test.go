package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/bench/internal/probe"
)

// TestConformance checks that the server answers every request the load
// generator sends, in both protocol eras, with verified results.
func TestConformance(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", newHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	rep := probe.Conform(strings.TrimPrefix(srv.URL, "http://"), 4096)
	if !rep.Modern || !rep.Legacy {
		t.Fatalf("modern %v legacy %v: %s", rep.Modern, rep.Legacy, strings.Join(rep.Problems, "\n"))
	}
	for _, s := range rep.Samples {
		t.Logf("%s\n%s\n->\n%s", s.Title, s.Request, s.Response)
	}
}
