package clientbench

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	fnmcp "github.com/mcpfn/mcpfn/mcp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetIn struct {
	Name string `json:"name"`
}

// gosdkServer serves a go-sdk v1.8.0 server with a plain tool and one that
// elicits.
func gosdkServer(t *testing.T, stateless bool, mw func(http.Handler) http.Handler) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + in.Name}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Action + ":" + r.Content["name"].(string)}}}, nil, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	if mw != nil {
		h = mw(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestInteropGoSDK: package client against go-sdk servers, stateless and
// stateful, in auto (2026-07-28, which go-sdk v1.8.0 serves) and legacy
// mode.
func TestInteropGoSDK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, stateless := range []bool{true, false} {
		url := gosdkServer(t, stateless, nil)
		for _, mode := range []client.Mode{client.ModeAuto, client.ModeLegacy} {
			c, err := client.Connect(ctx, url, &client.Options{Mode: mode,
				Elicitation: func(ctx context.Context, req *client.ElicitRequest) (*fnmcp.ElicitResult, error) {
					return &fnmcp.ElicitResult{Action: fnmcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				}})
			if err != nil {
				t.Fatalf("stateless=%v %v: %v", stateless, mode, err)
			}
			t.Cleanup(func() { c.Close() })
			// go-sdk v1.8.0 serves 2026-07-28 statelessly: auto mode finds
			// it; its stateful handler wants initialize.
			if c.Modern() != (mode == client.ModeAuto && stateless) {
				t.Fatalf("stateless=%v %v: Modern() = %v", stateless, mode, c.Modern())
			}
			tools, err := c.ListTools(ctx, nil)
			if err != nil || len(tools) != 2 {
				t.Fatalf("tools: %v %d", err, len(tools))
			}
			r, err := c.CallTool(ctx, "greet", map[string]any{"name": "Bob"}, nil)
			if err != nil || mcptest.Text(r) != "hi Bob" {
				t.Fatalf("greet: %v %v", err, r)
			}
			if !stateless {
				// Elicitation needs a session (go-sdk's tools elicit by
				// server request, which a stateless server cannot send).
				r, err = c.CallTool(ctx, "ask", nil, nil)
				if err != nil || mcptest.Text(r) != "accept:Ada" {
					t.Fatalf("%v: ask: %v %+v", mode, err, r)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
		}
	}
}

// TestInteropGoSDKBearer: go-sdk's auth.RequireBearerToken in front.
func TestInteropGoSDKBearer(t *testing.T) {
	t.Parallel()
	verify := func(ctx context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		if tok != "good" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	url := gosdkServer(t, false, auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource"}))
	ctx := context.Background()
	c, err := client.Connect(ctx, url, &client.Options{TokenSource: client.StaticToken("good")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.CallTool(ctx, "greet", map[string]any{"name": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = client.Connect(ctx, url, &client.Options{TokenSource: client.StaticToken("bad")})
	var he *client.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 {
		t.Fatalf("bad token: %v", err)
	}
	if p, ok := fnmcp.BearerChallenge(he.Header); !ok || !strings.Contains(p["resource_metadata"], "oauth-protected-resource") {
		t.Fatalf("challenge %v", he.Header)
	}
}
