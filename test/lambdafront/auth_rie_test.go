package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/auth/authtest"
)

// authBins are the OAuth-protected bootstrap.
var authBins = lambdaBinaries("./test/lambdafront/internal/authfn")

// TestAuthEmulator runs an MCP server protected by an auth.ProtectedResource (JWT
// issuer: an authtest server on loopback) as a buffered Lambda function
// under the AWS Lambda Runtime Interface Emulator, behind every front door,
// and checks what reaches the client (2026-07-28 basic/authorization): no
// token → 401 whose WWW-Authenticate names resource_metadata; the RFC 9728
// document at that well-known URL; a valid token → the call succeeds; a
// token lacking the tool's scope → 403 insufficient_scope; the stepped-up
// token → success.
func TestAuthEmulator(t *testing.T) {
	rie := requireRIE(t)
	bootstrap := authBins.Path(t, "authfn")
	as := authtest.New(nil)
	t.Cleanup(as.Close)
	for _, door := range doors {
		t.Run(string(door), func(t *testing.T) {
			// The function must know its resource before the door
			// listens: reserve the port first.
			ports, err := freePorts(1)
			if err != nil {
				t.Fatal(err)
			}
			base := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
			resource := base + "/mcp"
			s := startDoor(t, config{
				Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), Door: door, Mode: ModeBuffered,
				Bootstrap: bootstrap, RIE: rie, Concurrency: 1, Timeout: 20 * time.Second,
				Env: append(os.Environ(), "AUTHFN_RESOURCE="+resource, "AUTHFN_ISSUER="+as.Issuer),
			})
			if s.URL() != base {
				t.Fatalf("door at %s, want %s", s.URL(), base)
			}

			call := func(tool string) []byte { return toolCall(tool, "{}") }

			// No token: 401 naming the metadata document.
			res, body := do(t, http.MethodPost, resource, call("read"), toolCallHeader("read", ""))
			wantPRM := base + "/.well-known/oauth-protected-resource/mcp"
			if res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="`+wantPRM+`"`) {
				t.Fatalf("no token: %d %q %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), body)
			}

			// The metadata document, through the emulator.
			res, body = do(t, http.MethodGet, wantPRM, nil, nil)
			var prm struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
			}
			if res.StatusCode != 200 || json.Unmarshal(body, &prm) != nil || prm.Resource != resource ||
				!slices.Equal(prm.AuthorizationServers, []string{as.Issuer}) {
				t.Fatalf("metadata: %d %s", res.StatusCode, body)
			}

			// A valid token: the call succeeds.
			tok := as.Mint(authtest.Claims{Audience: []string{resource}, Scope: "mcp"})
			res, body = do(t, http.MethodPost, resource, call("read"), toolCallHeader("read", tok))
			if res.StatusCode != 200 || !strings.Contains(string(body), "read by user-1") {
				t.Fatalf("valid token: %d %s", res.StatusCode, body)
			}

			// The tool's scope is missing: 403 insufficient_scope.
			res, body = do(t, http.MethodPost, resource, call("write"), toolCallHeader("write", tok))
			ch := res.Header.Get("WWW-Authenticate")
			if res.StatusCode != 403 || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="mcp write"`) {
				t.Fatalf("missing scope: %d %q %s", res.StatusCode, ch, body)
			}

			// Stepped up: success.
			tok = as.Mint(authtest.Claims{Audience: []string{resource}, Scope: "mcp write"})
			res, body = do(t, http.MethodPost, resource, call("write"), toolCallHeader("write", tok))
			if res.StatusCode != 200 || !strings.Contains(string(body), "written by user-1") {
				t.Fatalf("stepped up: %d %s", res.StatusCode, body)
			}
		})
	}
}
