package gcf_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

type addArgs struct {
	Left  int `json:"left"`
	Right int `json:"right"`
}

// newServer returns a server with add, and with slow_add, which reports
// progress, then waits until release is closed (at most 5 s) before it
// answers; its result says whether it was released.
func newServer(release <-chan struct{}) *core.Server {
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) {
			return in.Left + in.Right, nil
		})
	core.AddTool(srv, &core.Tool{Name: "slow_add", Description: "Add two numbers, reporting progress."},
		func(ctx context.Context, req *core.CallToolRequest, in addArgs) (string, error) {
			if err := req.NotifyProgress(ctx, 1, 2, "halfway"); err != nil {
				return "", err
			}
			select {
			case <-release:
			case <-time.After(5 * time.Second):
				return "", core.ToolErrorf("not released: the progress notification did not reach the client")
			}
			return "released", nil
		})
	return srv
}

// call POSTs a 2026-07-28 tools/call of tool, with the arguments left 2
// and right 3 and meta in its _meta, to url, with the headers of header
// added; the response's body is closed when the test ends.
func call(t *testing.T, url, tool string, meta map[string]any, header http.Header) *http.Response {
	t.Helper()
	meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": map[string]any{"left": 2, "right": 3}, "_meta": meta}})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	for k, vs := range header {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// TestHandler runs a round trip through the handler on an httptest server
// (a real net/http response writer, as Cloud Functions give the function).
func TestHandler(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(gcf.Handler(newServer(nil))))
	defer hs.Close()
	res := call(t, hs.URL+"/", "add", map[string]any{}, nil)
	var out struct {
		Result struct {
			StructuredContent int `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 || out.Result.StructuredContent != 5 {
		t.Errorf("add(2, 3): %s, %+v, %v", res.Status, out, err)
	}
}

// TestHandlerStreams checks that server-sent events leave as they are
// written: the client reads the progress notification while the tool is
// still running, and only then lets the tool answer.
func TestHandlerStreams(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(gcf.Handler(newServer(release))))
	defer hs.Close()
	res := call(t, hs.URL+"/", "slow_add", map[string]any{"progressToken": "p1"}, nil)
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("%s, Content-Type %q; want 200 and an event stream", res.Status, ct)
	}
	var messages []string
	sr := mcptest.NewSSEReader(res.Body)
	sr.Strict = true
	for {
		ev, err := sr.Next()
		if err == io.EOF || errors.Is(err, context.Canceled) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		messages = append(messages, ev.Data)
		if len(messages) == 1 {
			close(release) // the first event arrived before the answer
		}
	}
	if len(messages) != 2 || !strings.Contains(messages[0], `"notifications/progress"`) || !strings.Contains(messages[1], `"released"`) {
		t.Errorf("events %q; want the progress notification, then the result saying released", messages)
	}
}

func TestHandlerNil(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("Handler(nil) did not panic")
		}
	}()
	gcf.Handler(nil)
}
