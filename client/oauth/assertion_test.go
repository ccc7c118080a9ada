package oauth_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/client/oauth"
)

// TestAssertionFile: the workload's JWT (SEP-1933) is read anew for every
// token, without surrounding white space; an empty, oversized or missing
// file is an error, not an assertion.
func TestAssertionFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "token")
	get := oauth.AssertionFile(path)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := get(t.Context(), oauth.AssertionRequest{}); err == nil {
		t.Fatal("a missing file gave an assertion")
	}
	write("a.b.c\n")
	if a, err := get(t.Context(), oauth.AssertionRequest{}); err != nil || a != "a.b.c" {
		t.Fatalf("assertion %q, %v; want a.b.c", a, err)
	}
	write(" d.e.f \r\n") // renewed by the platform
	if a, err := get(t.Context(), oauth.AssertionRequest{}); err != nil || a != "d.e.f" {
		t.Fatalf("renewed assertion %q, %v; want d.e.f", a, err)
	}
	write(" \n")
	if a, err := get(t.Context(), oauth.AssertionRequest{}); err == nil {
		t.Fatalf("an empty file gave %q", a)
	}
	write(strings.Repeat("x", 64<<10))
	if _, err := get(t.Context(), oauth.AssertionRequest{}); err != nil {
		t.Fatalf("a 64 KiB file: %v", err)
	}
	write(strings.Repeat("x", 64<<10+1))
	if a, err := get(t.Context(), oauth.AssertionRequest{}); err == nil {
		t.Fatalf("a file over 64 KiB gave an assertion of %d bytes", len(a))
	}
}
