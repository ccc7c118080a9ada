package mcptest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// Setenv sets the environment of a test from name, value pairs, each for
// the test's duration (testing.T.Setenv).
func Setenv(t testing.TB, kv ...string) {
	t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

// RandomKey returns n random bytes and their standard base64 form, as a
// key is written into an environment variable.
func RandomKey(n int) ([]byte, string) {
	b := make([]byte, n)
	rand.Read(b)
	return b, base64.StdEncoding.EncodeToString(b)
}

// Links runs go list -deps on pkg (in the test's directory) and returns
// whether a binary built from it links a package: one with the import path
// prefix or below it.
func Links(t testing.TB, pkg string) func(prefix string) bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := strings.Fields(string(out))
	return func(prefix string) bool {
		for _, d := range deps {
			if d == prefix || strings.HasPrefix(d, prefix+"/") {
				return true
			}
		}
		return false
	}
}

// CreateTask calls tool as a task (the client's capabilities should
// declare the Tasks extension) and returns the id of the task the server
// created; a result that is not a task is an error.
func (c *Client) CreateTask(ctx context.Context, tool string, args map[string]any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": args}, nil)
	if err != nil {
		return "", err
	}
	if res.Error != nil {
		return "", res.Error
	}
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := res.Decode(&created); err != nil {
		return "", err
	}
	if created.ResultType != "task" || created.TaskID == "" {
		return "", fmt.Errorf("tools/call of %s: not a task: %s", tool, res.Result)
	}
	return created.TaskID, nil
}
