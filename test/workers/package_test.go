package workers_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/workers/workerdtest"
)

// TestPackageExample packages examples/workers with the mcpfn command as a
// user would (`mcpfn package workers -dev-key`), runs the directory's own
// workerd.capnp in workerd and calls the add tool.
func TestPackageExample(t *testing.T) {
	t.Parallel()
	workerdtest.Binary(t) // skips before the build when workerd is missing
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "run", "./cmd/mcpfn", "package", "workers", "-dev-key", "-o", dir, "./examples/workers")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpfn package workers: %v\n%s", err, err.(*exec.ExitError).Stderr)
	}
	var res struct {
		Name     string   `json:"name"`
		Files    []string `json:"files"`
		WasmSize int64    `json:"wasmSize"`
		DevKey   bool     `json:"devKey"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Name != "workers" || !res.DevKey || res.WasmSize == 0 {
		t.Fatalf("mcpfn package workers printed %s (%v)", out, err)
	}
	capnp, err := os.ReadFile(filepath.Join(dir, "workerd.capnp"))
	if err != nil || !strings.Contains(string(capnp), `(name = "MCPFN_STATE_KEY", text = "`) {
		t.Fatalf("workerd.capnp (%v):\n%s", err, capnp)
	}
	w := workerdtest.Start(t, dir, nil)
	got := result(t, post(t, w, "add", map[string]int{"left": 2, "right": 3}, nil))
	if string(got) != "5" {
		t.Errorf("add(2, 3): structuredContent %s, want 5", got)
	}
}
