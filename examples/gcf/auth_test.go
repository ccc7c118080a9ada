package calculator_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/oauthtest"
)

// TestFunctionsFrameworkAuth runs the function behind the Functions
// Framework with the MCPFN_AUTH_* variables set: the framework passes the
// Authorization header and the metadata path to the function, and the
// challenges back to the client.
func TestFunctionsFrameworkAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a binary")
	}
	as := oauthtest.New(nil)
	defer as.Close()
	bin := filepath.Join(t.TempDir(), "calculator")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()
	resource := "http://" + addr + "/mcp"
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "FUNCTION_TARGET=MCP", "PORT="+port, "LOCAL_ONLY=true", "MCPFN_LOG_LEVEL=error",
		"MCPFN_DYNAMODB_TABLE=", "MCPFN_KEYS_SECRET_ID=", "MCPFN_STATE_KEY=",
		"MCPFN_AUTH_RESOURCE="+resource, "MCPFN_AUTH_ISSUER="+as.Issuer, "MCPFN_AUTH_SCOPES=calc")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("function output:\n%s", out.String())
		}
	}()
	deadline := time.After(15 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("the function exited: %s", out.String())
		case <-deadline:
			t.Fatalf("the function did not listen on %s", addr)
		case <-time.After(20 * time.Millisecond):
		}
	}

	res, err := http.Get("http://" + addr + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), fmt.Sprintf(`"resource":%q`, resource)) {
		t.Fatalf("metadata: %d %s", res.StatusCode, b)
	}
	post := func(tok string) (*http.Response, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"left":2,"right":3},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"} {
			req.Header.Set(k, v)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	r, _ := post("")
	if r.StatusCode != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="calc"`) {
		t.Fatalf("no token: %d %v", r.StatusCode, r.Header)
	}
	r, body := post(as.Mint(oauthtest.Claims{Audience: []string{resource}, Scope: "calc"}))
	if r.StatusCode != 200 || !strings.Contains(body, `"structuredContent":5`) {
		t.Fatalf("with a token: %d %s", r.StatusCode, body)
	}
}
