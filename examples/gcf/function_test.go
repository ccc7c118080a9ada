package calculator_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestFunctionsFramework builds cmd (the function behind the Functions
// Framework's own server), runs it as Cloud Functions would run it, and
// calls add with a 2026-07-28 request, then with a legacy session.
func TestFunctionsFramework(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs a binary")
	}
	addr := startFunction(t, buildFunction(t), nil)
	url := "http://" + addr + "/"
	ctx := t.Context()

	c := &mcptest.Client{URL: url}
	res, err := c.Call(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"left": 2, "right": 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		StructuredContent int    `json:"structuredContent"`
		ResultType        string `json:"resultType"`
	}
	if err := res.Decode(&out); err != nil || res.Status != http.StatusOK || out.StructuredContent != 5 || out.ResultType != "complete" {
		t.Errorf("add(2, 3): HTTP %d, %s, %v; want 200 and 5", res.Status, res.Result, err)
	}

	legacy := &mcptest.Client{URL: url}
	if _, err := legacy.Initialize(ctx, "2025-11-25", nil); err != nil {
		t.Fatal(err)
	}
	res, err = legacy.LegacyCall(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"left": 40, "right": 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var legacyOut struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := res.Decode(&legacyOut); err != nil || len(legacyOut.Content) != 1 || legacyOut.Content[0].Text != "42" {
		t.Errorf("legacy add(40, 2): %s, %v; want the text 42", res.Result, err)
	}
}

// buildFunction builds cmd (the function behind the Functions Framework's
// own server) and returns the binary's path.
func buildFunction(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "calculator")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startFunction runs bin on a free loopback port, as FUNCTION_TARGET=MCP
// with the variables env returns for its address (nil for none), and
// returns the address once it accepts connections. The function stops when
// the test ends.
func startFunction(t *testing.T, bin string, env func(addr string) []string) string {
	for range 3 { // the free port may be taken before the function binds it
		if addr, ok := tryStart(t, bin, env); ok {
			return addr
		}
	}
	t.Fatal("the function did not start")
	return ""
}

func tryStart(t *testing.T, bin string, env func(addr string) []string) (string, bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "FUNCTION_TARGET=MCP", "PORT="+port, "LOCAL_ONLY=true",
		"MCPFN_LOG_LEVEL=error", "MCPFN_DYNAMODB_TABLE=", "MCPFN_KEYS_SECRET_ID=", "MCPFN_STATE_KEY=")
	if env != nil {
		cmd.Env = append(cmd.Env, env(addr)...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("function output:\n%s", out.String())
		}
	})
	// Polling the process's port: it says nothing when it listens.
	deadline := time.After(15 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, true
		}
		select {
		case <-exited:
			t.Logf("the function exited: %s", out.String())
			return "", false
		case <-deadline:
			t.Fatalf("the function did not listen on %s", addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
