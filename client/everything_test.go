package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
)

// The conformance fixture, examples/everything, built once and run as a real
// server on loopback (it is a main package, so it cannot be linked in).
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func everythingBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpfn-client-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "everything")
		cmd := exec.Command("go", "build", "-o", binPath, "./examples/everything")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var serveLine = regexp.MustCompile(`serving MCP on (http\S+)`)

// startEverything runs the fixture in the given server mode (auto, modern,
// legacy) and returns its endpoint URL.
func startEverything(t testing.TB, mode string, extra ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs examples/everything")
	}
	args := append([]string{"-addr", "127.0.0.1:0", "-mode", mode, "-log", "error"}, extra...)
	cmd := exec.Command(everythingBinary(t), args...)
	cmd.Env = append(os.Environ(), "MCPFN_STATE_KEY=", "MCPFN_DYNAMODB_TABLE=", "MCPFN_KEYS_SECRET_ID=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := serveLine.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			// The Functions Framework prints its line before it listens: wait
			// until the port accepts (an external process sends no event).
			u, _ := neturl.Parse(m[1])
			for i := 0; ; i++ {
				conn, err := net.DialTimeout("tcp", u.Host, time.Second)
				if err == nil {
					conn.Close()
					break
				}
				if i == 200 {
					t.Fatalf("everything does not accept connections: %v", err)
				}
				time.Sleep(25 * time.Millisecond)
			}
			return m[1]
		}
	}
	t.Fatal("everything did not start")
	return ""
}

func handlers() *client.Options {
	return &client.Options{
		Elicitation: func(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Mode == "url" {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			var s struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			}
			json.Unmarshal(req.RequestedSchema, &s)
			content := map[string]any{}
			for k, p := range s.Properties {
				switch p.Type {
				case "boolean":
					content[k] = true
				case "string":
					if k == "color" {
						content[k] = "blue"
					} else {
						content[k] = "Ada"
					}
				}
			}
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
		},
		Sampling: func(ctx context.Context, p json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"test"}`), nil
		},
		Roots: func(ctx context.Context) ([]core.Root, error) {
			return []core.Root{{URI: "file:///a", Name: "a"}}, nil
		},
	}
}

// TestEverything runs the client's features against the conformance fixture
// in each client mode, and checks the era each mode ends up in.
func TestEverything(t *testing.T) {
	t.Parallel()
	// The fixture behind the platforms of test/conformance/adapters that
	// need no emulator: net/http, net/http buffered (as Lambda without
	// streaming), and the Functions Framework (gcf).
	for _, p := range []struct {
		name string
		args []string
	}{{"nethttp", nil}, {"buffered", []string{"-buffered"}}, {"gcf", []string{"-platform", "gcf"}}} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			testEverything(t, startEverything(t, "auto", p.args...))
		})
	}
}

func testEverything(t *testing.T, url string) {
	for _, tc := range []struct {
		mode   client.Mode
		modern bool
	}{{client.ModeAuto, true}, {client.ModeModern, true}, {client.ModeLegacy, false}} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			o := handlers()
			o.Mode = tc.mode
			c := connect(t, ctx, url, o)
			if c.Modern() != tc.modern {
				t.Fatalf("Modern() = %v, want %v", c.Modern(), tc.modern)
			}
			tools, err := c.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, tl := range tools {
				names[tl.Name] = true
			}
			if !names["test_simple_text"] || !names["test_x_mcp_header"] {
				t.Fatalf("tools: %v", names)
			}
			r, err := c.CallTool(ctx, "test_simple_text", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptest.Text(r); got != "This is a simple text response for testing." {
				t.Fatalf("text %q", got)
			}
			r, err = c.CallTool(ctx, "test_error_handling", map[string]any{}, nil)
			if err != nil || !r.IsError {
				t.Fatalf("test_error_handling: %v, %+v", err, r)
			}
			r, err = c.CallTool(ctx, "test_elicitation", map[string]any{"message": "who?"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptest.Text(r); !strings.Contains(got, "action=accept") || !strings.Contains(got, `"username":"Ada"`) {
				t.Fatalf("elicitation: %q", got)
			}
			r, err = c.CallTool(ctx, "test_input_required_result_multi_round", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptest.Text(r); got != "Hello Ada, your favorite color is blue." {
				t.Fatalf("multi round: %q", got)
			}
			r, err = c.CallTool(ctx, "test_input_required_result_multiple_inputs", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptest.Text(r); got != "name=Ada greeting=Paris roots=1" {
				t.Fatalf("multiple inputs: %q", got)
			}
			var progress []float64
			r, err = c.CallTool(ctx, "test_tool_with_progress", nil, &client.CallOptions{Progress: func(p client.Progress) {
				progress = append(progress, p.Progress)
			}})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(progress) != "[0 50 100]" {
				t.Fatalf("progress %v", progress)
			}
			r, err = c.CallTool(ctx, "test_x_mcp_header", map[string]any{"region": " Zürich", "level": 3}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptest.Text(r); got != "region= Zürich level=3" {
				t.Fatalf("x-mcp-header: %q", got)
			}
			rr, err := c.ReadResource(ctx, "test://static-text", nil)
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == "" {
				t.Fatalf("read: %v %+v", err, rr)
			}
			pr, err := c.GetPrompt(ctx, "test_prompt_with_arguments", map[string]string{"arg1": "x", "arg2": "y"}, nil)
			if err != nil || len(pr.Messages) == 0 {
				t.Fatalf("prompt: %v %+v", err, pr)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListTools(ctx, nil); err != client.ErrClosed {
				t.Fatalf("after Close: %v", err)
			}
		})
	}
}

// TestListen: a tool-list change made by a call reaches a listener, in
// each era.
func TestListen(t *testing.T) {
	t.Parallel()
	url := startEverything(t, "auto")
	// The eras run one after the other: each changes the fixture's tool
	// list, which the other's listener would see.
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			c, err := client.Connect(context.Background(), url, &client.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithCancel(context.Background())
			acked := make(chan mcp.SubscriptionFilter, 1)
			got := make(chan client.Notification, 16)
			done := make(chan error, 1)
			go func() {
				done <- c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true},
					func(f mcp.SubscriptionFilter) { acked <- f },
					func(n client.Notification) { got <- n })
			}()
			if f := <-acked; !f.ToolsListChanged {
				t.Fatalf("ack %+v", f)
			}
			if _, err := c.CallTool(context.Background(), "test_trigger_tool_change", nil, nil); err != nil {
				t.Fatal(err)
			}
			select {
			case n := <-got:
				if n.Method != "notifications/tools/list_changed" {
					t.Fatalf("notification %s", n.Method)
				}
			case err := <-done:
				t.Fatalf("Listen ended: %v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("no notification")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Listen: %v", err)
			}
		})
	}
}
