package calculator_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
)

// TestFunctionsFrameworkAuth runs the function behind the Functions
// Framework with the MCPFN_AUTH_* variables set: the framework passes the
// Authorization header and the metadata path to the function, and the
// challenges back to the client.
func TestFunctionsFrameworkAuth(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs a binary")
	}
	as := authtest.New(nil)
	defer as.Close()
	addr := startFunction(t, buildFunction(t), func(addr string) []string {
		return []string{"MCPFN_AUTH_RESOURCE=http://" + addr + "/mcp", "MCPFN_AUTH_ISSUER=" + as.Issuer, "MCPFN_AUTH_SCOPES=calc"}
	})
	resource := "http://" + addr + "/mcp"

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
	r, body := post(as.Mint(authtest.Claims{Audience: []string{resource}, Scope: "calc"}))
	if r.StatusCode != 200 || !strings.Contains(body, `"structuredContent":5`) {
		t.Fatalf("with a token: %d %s", r.StatusCode, body)
	}
}
