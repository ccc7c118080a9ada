package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
)

// legacyServer serves a legacy-only server and records, per HTTP request,
// its method, JSON-RPC method (POSTs) and session id.
func legacyServer(t *testing.T) (string, func() []string) {
	srv := core.NewServer(core.Implementation{Name: "cli-legacy", Version: "1"}, &core.ServerOptions{Mode: core.ModeLegacy})
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		return "ok", nil
	})
	return serveRecording(t, srv, func(r *http.Request, body []byte) string {
		line := r.Method
		if i := bytes.Index(body, []byte(`"method":"`)); i >= 0 {
			m := body[i+10:]
			line += " " + string(m[:bytes.IndexByte(m, '"')])
		}
		return line + " sid=" + r.Header.Get("Mcp-Session-Id")
	})
}

// TestCLISession: --session uses a session another client created (no
// initialize, every request carries the id, no DELETE); --no-initialize
// sends requests without any session.
func TestCLISession(t *testing.T) {
	url, seen := legacyServer(t)
	c, err := client.Connect(context.Background(), url, &client.Options{Mode: client.ModeLegacy, NoGETStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sid := c.SessionID()
	if sid == "" {
		t.Fatal("no session")
	}
	before := len(seen())
	if code, out, errs := mcpfn(t, "", "--mode", "legacy", "--session", sid, "call", url, "echo"); code != 0 || !strings.Contains(out, `"ok"`) {
		t.Fatalf("--session: exit %d %s %s", code, out, errs)
	}
	for _, l := range seen()[before:] {
		if strings.Contains(l, "initialize") || strings.HasPrefix(l, "DELETE") || !strings.HasSuffix(l, "sid="+sid) {
			t.Fatalf("--session sent %q (all: %q)", l, seen()[before:])
		}
	}
	before = len(seen())
	if code, out, errs := mcpfn(t, "", "--mode", "legacy", "--no-initialize", "call", url, "echo"); code != 0 || !strings.Contains(out, `"ok"`) {
		t.Fatalf("--no-initialize: exit %d %s %s", code, out, errs)
	}
	for _, l := range seen()[before:] {
		// The GET stream the --session run opened may still reach the
		// server: only this run's POSTs are its own.
		if strings.HasPrefix(l, "POST") && (strings.Contains(l, "initialize") || !strings.HasSuffix(l, "sid=")) {
			t.Fatalf("--no-initialize sent %q", l)
		}
	}
	if code, _, _ := mcpfn(t, "", "--session", sid, "--no-initialize", "tools", url); code != exitUsage {
		t.Fatalf("--session with --no-initialize: exit %d", code)
	}
}

// TestCLICleartextCredential: a --token or Authorization header is not sent
// over plain http to a remote host unless --insecure says so; loopback and
// https are fine.
func TestCLICleartextCredential(t *testing.T) {
	for _, args := range [][]string{
		{"--token", "secret", "tools", "http://mcp.example.test/mcp"},
		{"--header", "Authorization: Bearer secret", "tools", "http://203.0.113.7/mcp"},
		{"--token", "secret", "tools", "HTTP://[2001:db8::1]/mcp"},
	} {
		code, out, errs := mcpfn(t, "", args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "plain http") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080/mcp", "http://[::1]/mcp", "http://localhost/mcp", "https://mcp.example.test/mcp"} {
		if cleartextRemote(u) {
			t.Errorf("cleartextRemote(%q) = true", u)
		}
	}
	url, _ := server(t) // loopback: the token goes out
	if code, _, errs := mcpfn(t, "", "--token", "secret", "tools", url); code != 0 {
		t.Fatalf("loopback with --token: exit %d %s", code, errs)
	}
	// --insecure lets it through (here to a name that never resolves).
	if code, _, errs := mcpfn(t, "", "--insecure", "--token", "secret", "--timeout", "30s", "tools", "http://mcp.invalid/mcp"); code != exitFailure {
		t.Fatalf("--insecure: exit %d %s", code, errs)
	}
}
