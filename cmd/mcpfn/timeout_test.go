package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTimeoutFlag: --timeout bounds the whole command; a server that never
// answers ends it with exit 3 and a message that says so. A bad value is a
// usage error.
func TestTimeoutFlag(t *testing.T) {
	t.Parallel()
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client leave
		<-r.Context().Done()
	}))
	t.Cleanup(stuck.Close)
	code, out, errs := mcpfn(t, "", "tools", stuck.URL+"/mcp", "--timeout", "200ms")
	if code != exitFailure || out != "" || !strings.Contains(errs, "timed out") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 3 and a timeout", code, out, errs)
	}
	for _, bad := range []string{"soon", "-1s"} {
		if code, _, _ := mcpfn(t, "", "tools", stuck.URL+"/mcp", "--timeout="+bad); code != exitUsage {
			t.Errorf("--timeout=%s: exit %d, want 2", bad, code)
		}
	}
}
