// Package interoptasks runs package client's Tasks extension support
// (io.modelcontextprotocol/tasks, SEP-2663) against a tasks server mcpfn did
// not write: peer-tasks.mjs, the official TypeScript SDK v2 server with the
// extension's own wire schemas (see its header for what it checks). run.sh
// installs Node and the pinned packages and runs these tests with
// MCPFN_REQUIRE_NODE=1; a plain `go test` installs them on first use too,
// and skips when it cannot.
package interoptasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/mcp"
)

var nodeSDK = testenv.Emulator{
	Name:    "Node, the official TypeScript SDK v2 server and @modelcontextprotocol/ext-tasks (installed on first use)",
	Require: "MCPFN_REQUIRE_NODE",
	Run:     "test/interop-tasks/run.sh; or go test",
}

var installer = testenv.Installer{Emulator: nodeSDK, Command: []string{"./run.sh", "--install"}, Keys: []string{"node", "dir"}}

// install installs (once) Node and the packages with run.sh --install.
func install(t *testing.T) (node, dir string) {
	t.Helper()
	v := installer.Values(t)
	return v["node"], v["dir"]
}

// startPeer runs peer-tasks.mjs (a copy inside the package directory, whose
// node_modules it imports) and returns its endpoint and base URL.
func startPeer(t *testing.T) (url, base string) {
	t.Helper()
	node, dir := install(t)
	url = testenv.StartNodePeer(t, node, dir, "peer-tasks.mjs")
	return url, strings.TrimSuffix(url, "/mcp")
}

// peerStats is the peer's GET /admin/stats.
type peerStats struct {
	Gets    int                       `json:"gets"`
	Updates map[string]map[string]int `json:"updates"`
	Cancels []string                  `json:"cancels"`
	Invalid []string                  `json:"invalid"`
	Created []string                  `json:"created"`
}

func stats(t *testing.T, base string) peerStats {
	t.Helper()
	resp, err := http.Get(base + "/admin/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s peerStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPeerTasks drives the TypeScript peer's tasks to each end with
// package client: greet through one input round (an elicitation the
// peer keeps listing for a poll after the answer, answered once),
// tool_error to a completed isError result, fail to the task's -32603,
// forever until the call's deadline and then tasks/cancel; and a client
// that does not declare the extension gets -32021. The peer's checks with
// the extension's own schemas (every task request's shape, the extension
// declared, Mcp-Name = taskId, which the SDK enforces with -32020) all
// pass.
func TestPeerTasks(t *testing.T) {
	url, base := startPeer(t)
	ctx := t.Context()
	asked := 0
	c, err := client.Connect(ctx, url, &client.Options{Tasks: true,
		Elicitation: func(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			if req.Message != "Please enter your name." {
				return nil, fmt.Errorf("elicitation %q", req.Message)
			}
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Luca"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Modern() {
		t.Fatalf("connected in %s, want 2026-07-28", c.ProtocolVersion())
	}
	if _, ok := c.Discovery().Capabilities.Extensions[mcp.ExtensionTasks]; !ok {
		t.Fatalf("the peer does not advertise the extension: %s", c.Discovery().Raw)
	}

	var statuses []string
	r, err := c.CallTool(ctx, "greet", nil, &client.CallOptions{TaskStatus: func(tk *mcp.DetailedTask) {
		statuses = append(statuses, string(tk.Status))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "Hello, Luca!" || r.IsError {
		t.Fatalf("greet: %+v", r)
	}
	if got := strings.Join(statuses, ","); got != "working,input_required,completed" {
		t.Fatalf("status changes %s", got)
	}
	s := stats(t, base)
	greet := s.Created[len(s.Created)-1]
	if asked != 1 || s.Updates[greet]["name"] != 1 {
		t.Fatalf("asked %d times, the peer got %v; want the key answered once", asked, s.Updates[greet])
	}

	r, err = c.CallTool(ctx, "tool_error", nil, nil)
	if err != nil || !r.IsError {
		t.Fatalf("tool_error: %+v, %v; want an isError result", r, err)
	}
	_, err = c.CallTool(ctx, "fail", nil, nil)
	var re *mcp.Error
	if !errors.As(err, &re) || re.Code != mcp.CodeInternalError || re.Message != "backend exploded" {
		t.Fatalf("fail: %v, want the task's -32603", err)
	}

	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.CallTool(short, "forever", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("forever: %v, want the deadline", err)
	}
	s = stats(t, base)
	forever := s.Created[len(s.Created)-1]
	if len(s.Cancels) != 1 || s.Cancels[0] != forever {
		t.Fatalf("cancels %v, want [%s]", s.Cancels, forever)
	}
	tk, err := c.Task(forever, nil).Get(ctx)
	if err != nil || tk.Status != mcp.TaskCancelled {
		t.Fatalf("forever after the cancel: %+v, %v", tk, err)
	}
	if _, err := c.Task("no-such-task", nil).Get(ctx); !errors.As(err, &re) || re.Code != mcp.CodeInvalidParams {
		t.Fatalf("unknown task: %v, want -32602", err)
	}

	plain, err := client.Connect(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.CallTool(ctx, "greet", nil, nil); !errors.Is(err, mcp.ErrMissingCapability) {
		t.Fatalf("without the extension: %v, want -32021", err)
	}
	if s := stats(t, base); len(s.Invalid) > 0 {
		t.Fatalf("the peer's schema checks failed: %v", s.Invalid)
	}
}

// TestPeerTaskResume: a task created through CallToolTask is resumed by
// another Client from its id alone (a restarted process), which answers
// its input and reads the result.
func TestPeerTaskResume(t *testing.T) {
	url, base := startPeer(t)
	ctx := t.Context()
	a, err := client.Connect(ctx, url, &client.Options{Tasks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r, h, err := a.CallToolTask(ctx, "greet", nil, nil)
	if err != nil || r != nil || h == nil {
		t.Fatalf("CallToolTask: %v, %v, %v", r, h, err)
	}
	id := h.ID()
	b, err := client.Connect(ctx, url, &client.Options{Tasks: true,
		Elicitation: func(context.Context, *client.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err = b.Task(id, nil).Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "Hello, Ada!" {
		t.Fatalf("resumed: %+v", r)
	}
	if s := stats(t, base); len(s.Invalid) > 0 || len(s.Cancels) != 0 {
		t.Fatalf("the peer's checks: invalid %v, cancels %v", s.Invalid, s.Cancels)
	}
}
