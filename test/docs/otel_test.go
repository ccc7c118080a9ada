package docs_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenTelemetrySnippet runs the README's OpenTelemetry program (the
// complete Go file of its "OpenTelemetry" section) as a reader would,
// against the workspace's modules, and checks what it promises to print
// on stdout: the client's span and the server's span of the tools/call,
// the server's a child of the client's (the trace context went in
// params._meta and the headers).
func TestOpenTelemetrySnippet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the README's program")
	}
	t.Parallel()
	var src string
	for _, b := range blocks("README.md", section(readFile(t, "README.md"), "OpenTelemetry")) {
		if b.lang == "go" && snippetKind(b) == "file" {
			src = b.text
			break
		}
	}
	if !strings.Contains(src, "stdouttrace") {
		t.Fatalf("the README's OpenTelemetry section has no complete program exporting to stdout:\n%s", src)
	}
	dir, env := workspace(t)
	if err := os.MkdirAll(filepath.Join(dir, "otelsnippet"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "otelsnippet", "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "otelsnippet.bin")
	build := exec.Command("go", "build", "-o", bin, "./otelsnippet")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the README's program: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the README's program: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the README's program did not end; stderr:\n%s", stderr.String())
	}

	type spanContext struct{ TraceID, SpanID string }
	type span struct {
		Name        string
		SpanKind    int // 2 SERVER, 3 CLIENT
		SpanContext spanContext
		Parent      spanContext
	}
	var server, clientSpan *span
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var s span
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("stdout is not a sequence of JSON spans: %v", err)
		}
		switch {
		case s.Name == "tools/call echo" && s.SpanKind == 2:
			server = &s
		case s.Name == "tools/call echo" && s.SpanKind == 3:
			clientSpan = &s
		}
	}
	if server == nil || clientSpan == nil {
		t.Fatalf("stdout lacks the server span or the client span of tools/call echo (server %v, client %v)", server, clientSpan)
	}
	if server.SpanContext.TraceID != clientSpan.SpanContext.TraceID || server.Parent.SpanID != clientSpan.SpanContext.SpanID {
		t.Errorf("the server span %+v is not a child of the client span %+v", server, clientSpan)
	}
}
