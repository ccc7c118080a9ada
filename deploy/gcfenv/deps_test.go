package gcfenv_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: a Cloud Function built with the kit links the
// Functions Framework and auth, and nothing of AWS.
func TestDependencies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := string(out)
	for _, want := range []string{"github.com/GoogleCloudPlatform/functions-framework-go/functions", "github.com/mcpfn/mcpfn/auth"} {
		if !strings.Contains(deps, want+"\n") {
			t.Errorf("the kit does not link %s", want)
		}
	}
	for _, bad := range []string{"github.com/aws/"} {
		if strings.Contains(deps, bad) {
			t.Errorf("the kit links %s...", bad)
		}
	}
}
