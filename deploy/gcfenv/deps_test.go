package gcfenv_test

import (
	"testing"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestDependencies: a Cloud Function built with the kit links the
// Functions Framework and auth, and nothing of AWS.
func TestDependencies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: runs go list")
	}
	links := mcptest.Links(t, ".")
	for _, want := range []string{"github.com/GoogleCloudPlatform/functions-framework-go/functions", "github.com/mcpfn/mcpfn/auth"} {
		if !links(want) {
			t.Errorf("the kit does not link %s", want)
		}
	}
	for _, bad := range []string{"github.com/aws"} {
		if links(bad) {
			t.Errorf("the kit links %s...", bad)
		}
	}
}
