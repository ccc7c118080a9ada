package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	wire "github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/mcptest"
)

// eras are the modes every test runs in: the two eras, and the probe.
var eras = []client.Mode{client.ModeModern, client.ModeLegacy, client.ModeAuto}

type AddArgs struct {
	Left  int `json:"left"`
	Right int `json:"right"`
}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.Left + in.Right, nil
}

func newServer(t *testing.T) *core.Server {
	t.Helper()
	srv := core.NewServer(core.Implementation{Name: "mcptest", Version: "1.0.0"}, &core.ServerOptions{DisableRequestLog: true})
	t.Cleanup(func() { srv.Close() })
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	return srv
}

// callCtx bounds a call that would hang if the transport did not stream or
// cancel, so that such a failure ends the test rather than the test binary.
func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestTypedTool calls a typed tool in each mode and checks the era the
// Conn speaks.
func TestTypedTool(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, mode := range eras {
		t.Run(mode.String(), func(t *testing.T) {
			c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode})
			if c.Modern() != (mode != client.ModeLegacy) {
				t.Fatalf("modern = %v in %v", c.Modern(), mode)
			}
			if c.Modern() == (c.SessionID() != "") {
				t.Fatalf("modern = %v with session id %q", c.Modern(), c.SessionID())
			}
			tools, err := c.ListTools(t.Context(), nil)
			if err != nil || len(tools) != 1 || tools[0].Name != "add" {
				t.Fatalf("tools/list: %v %+v", err, tools)
			}
			res, err := c.CallTool(t.Context(), "add", AddArgs{Left: 2, Right: 3}, nil)
			if err != nil || res.IsError || wire.Text(res) != "5" {
				t.Fatalf("add: %v %+v", err, res)
			}
			if c.Modern() && string(res.StructuredContent.(json.RawMessage)) != "5" {
				t.Fatalf("structuredContent %v, want 5", res.StructuredContent)
			}
		})
	}
}

// TestProgressStreams: the handler's progress reaches WithProgress while
// the handler runs: the handler waits until the client has seen it, which
// a transport that delivered the response whole would never let happen.
func TestProgressStreams(t *testing.T) {
	t.Parallel()
	for _, mode := range eras {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			seen := make(chan struct{})
			srv := newServer(t)
			core.AddTool(srv, &core.Tool{Name: "slow"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				if err := req.NotifyProgress(ctx, 1, 2, "halfway"); err != nil {
					return "", err
				}
				select {
				case <-seen:
					return "done", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			})
			c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode})
			var got []client.Progress
			res, err := c.CallTool(callCtx(t), "slow", struct{}{}, &client.CallOptions{Progress: func(p client.Progress) {
				got = append(got, p)
				if len(got) == 1 {
					close(seen)
				}
			}})
			if err != nil || wire.Text(res) != "done" {
				t.Fatalf("slow: %v %+v", err, res)
			}
			if len(got) != 1 || got[0] != (client.Progress{Progress: 1, Total: 2, Message: "halfway"}) {
				t.Fatalf("progress %+v", got)
			}
		})
	}
}

type Confirm struct {
	OK bool `json:"ok" jsonschema:"title=Go ahead?"`
}

var confirmForm = core.MustForm[Confirm]()

// addConfirm registers delete, which asks the user before it acts.
func addConfirm(srv *core.Server, runs *atomic.Int32) {
	core.AddTool(srv, &core.Tool{Name: "delete"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		Path string `json:"path"`
	}) (string, error) {
		runs.Add(1)
		c, action, err := confirmForm.Answer(req.Input, "confirm")
		switch {
		case err != nil:
			return "", err
		case action == "":
			return "", core.InputRequired(core.InputRequests{"confirm": confirmForm.Request("Delete " + in.Path + "?")}, "")
		case action != core.ActionAccept || !c.OK:
			return "kept " + in.Path, nil
		}
		return "deleted " + in.Path, nil
	})
}

// TestElicitation: Options.Client.Elicitation answers the tool's question
// in both eras: a 2026-07-28 input_required result and its retry, a legacy
// elicitation/create on the call's stream answered by POST. The recorded
// wire shows which.
func TestElicitation(t *testing.T) {
	t.Parallel()
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			var runs atomic.Int32
			addConfirm(srv, &runs)
			var asked []string
			rec := &mcptest.Recorder{}
			c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode, Record: rec, Client: &client.Options{
				Elicitation: func(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Message)
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}, nil
				},
				NoGETStream: true,
			}})
			res, err := c.CallTool(callCtx(t), "delete", map[string]any{"path": "notes.txt"}, nil)
			if err != nil || wire.Text(res) != "deleted notes.txt" {
				t.Fatalf("delete: %v %+v", err, res)
			}
			if len(asked) != 1 || asked[0] != "Delete notes.txt?" || runs.Load() != 2 {
				t.Fatalf("asked %q, handler ran %d times; want one question, two runs", asked, runs.Load())
			}

			var calls []mcptest.Exchange
			for _, x := range rec.Exchanges() {
				if strings.Contains(string(x.Body), `"tools/call"`) {
					calls = append(calls, x)
				}
			}
			if mode == client.ModeModern {
				// Two requests: the first answered input_required, the
				// retry carries the answer.
				if len(calls) != 2 {
					t.Fatalf("%d tools/call requests, want 2", len(calls))
				}
				first := messages(t, calls[0])
				if len(first) != 1 || !strings.Contains(string(first[0]), `"resultType":"input_required"`) {
					t.Fatalf("first response %s", first)
				}
				if !strings.Contains(string(calls[1].Body), `"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}`) {
					t.Fatalf("retry %s", calls[1].Body)
				}
				return
			}
			// Legacy: one request, whose stream carried elicitation/create
			// before the result, and a POST with the answer.
			if len(calls) != 1 {
				t.Fatalf("%d tools/call requests, want 1", len(calls))
			}
			ms := messages(t, calls[0])
			if len(ms) != 2 || !strings.Contains(string(ms[0]), `"method":"elicitation/create"`) || !strings.Contains(string(ms[1]), "deleted notes.txt") {
				t.Fatalf("the call's stream: %s", ms)
			}
			var answered bool
			for _, x := range rec.Exchanges() {
				if x.Method == http.MethodPost && strings.Contains(string(x.Body), `"result":{"action":"accept"`) {
					answered = x.Status == http.StatusAccepted && x.Header.Get("Mcp-Session-Id") == c.SessionID()
				}
			}
			if !answered {
				t.Fatal("no answer POSTed in the session (202)")
			}
		})
	}
}

// messages returns the JSON-RPC messages of x's response.
func messages(t *testing.T, x mcptest.Exchange) []json.RawMessage {
	t.Helper()
	ms, err := x.ResponseMessages()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestRecord: the recorder holds the wire of each era: the mirrored
// headers and _meta of 2026-07-28, the session of a legacy connection from
// initialize to DELETE.
func TestRecord(t *testing.T) {
	t.Parallel()
	srv := newServer(t)

	t.Run("modern", func(t *testing.T) {
		rec := &mcptest.Recorder{}
		c := mcptest.Connect(t, srv, &mcptest.Options{Mode: client.ModeModern, Record: rec})
		if _, err := c.CallTool(t.Context(), "add", AddArgs{Left: 40, Right: 2}, nil); err != nil {
			t.Fatal(err)
		}
		xs := rec.Exchanges()
		if len(xs) != 2 { // tools/list (for x-mcp-header), tools/call
			t.Fatalf("%d exchanges, want 2", len(xs))
		}
		x := xs[1]
		if x.Method != http.MethodPost || x.URL != mcptest.DefaultURL || x.Header.Get("Mcp-Method") != "tools/call" ||
			x.Header.Get("Mcp-Name") != "add" || x.Header.Get("Mcp-Protocol-Version") != "2026-07-28" {
			t.Fatalf("request %s %s %v", x.Method, x.URL, x.Header)
		}
		var body struct {
			Method string `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
				Meta      map[string]any  `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(x.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Method != "tools/call" || body.Params.Name != "add" || string(body.Params.Arguments) != `{"left":40,"right":2}` ||
			body.Params.Meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" {
			t.Fatalf("body %s", x.Body)
		}
		ms := messages(t, x)
		if x.Status != http.StatusOK || len(ms) != 1 || !strings.Contains(string(ms[0]), `"structuredContent":42`) {
			t.Fatalf("response %d %s", x.Status, x.ResponseBody)
		}
	})

	t.Run("legacy", func(t *testing.T) {
		rec := &mcptest.Recorder{}
		c := mcptest.Connect(t, srv, &mcptest.Options{Mode: client.ModeLegacy, Record: rec, Client: &client.Options{NoGETStream: true}})
		if _, err := c.CallTool(t.Context(), "add", AddArgs{Left: 1, Right: 1}, nil); err != nil {
			t.Fatal(err)
		}
		sid := c.SessionID()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		var seq []string
		for i, x := range rec.Exchanges() {
			var m struct {
				Method string `json:"method"`
			}
			json.Unmarshal(x.Body, &m)
			seq = append(seq, strings.TrimSpace(x.Method+" "+m.Method))
			switch {
			case i == 0:
				if got := x.ResponseHeader.Get("Mcp-Session-Id"); got != sid || x.Header.Get("Mcp-Session-Id") != "" {
					t.Errorf("initialize: session %q, sent %q; want %q", got, x.Header.Get("Mcp-Session-Id"), sid)
				}
			case x.Header.Get("Mcp-Session-Id") != sid || x.Header.Get("Mcp-Protocol-Version") != "2025-11-25":
				t.Errorf("%s: session %q, version %q", seq[i], x.Header.Get("Mcp-Session-Id"), x.Header.Get("Mcp-Protocol-Version"))
			}
		}
		want := "POST initialize, POST notifications/initialized, POST tools/call, DELETE"
		if strings.Join(seq, ", ") != want {
			t.Fatalf("exchanges: %s; want %s", strings.Join(seq, ", "), want)
		}
	})
}

// TestCancel: cancelling a call's context cancels the handler's context,
// in each era (2026-07-28: the client closes the request; legacy: it also
// sends notifications/cancelled), before the response has started and
// while it streams.
func TestCancel(t *testing.T) {
	t.Parallel()
	for _, mode := range eras {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/streaming=%v", mode, streaming), func(t *testing.T) {
				t.Parallel()
				running, stopped := make(chan struct{}), make(chan error, 1)
				srv := newServer(t)
				core.AddTool(srv, &core.Tool{Name: "block"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
					if streaming {
						req.NotifyProgress(ctx, 1, 0, "")
					} else {
						close(running)
					}
					<-ctx.Done()
					stopped <- ctx.Err()
					return "", ctx.Err()
				})
				c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode})
				ctx, cancel := context.WithCancel(t.Context())
				var opts *client.CallOptions
				if streaming {
					// The client reads the stream: the progress arrived.
					opts = &client.CallOptions{Progress: func(client.Progress) { close(running) }}
				}
				errc := make(chan error, 1)
				go func() {
					_, err := c.CallTool(ctx, "block", struct{}{}, opts)
					errc <- err
				}()
				<-running
				cancel()
				if err := <-stopped; !errors.Is(err, context.Canceled) {
					t.Fatalf("the handler's context ended with %v", err)
				}
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Fatalf("the call returned %v, want context.Canceled", err)
				}
				// The connection still works.
				if res, err := c.CallTool(t.Context(), "add", AddArgs{Left: 1, Right: 2}, nil); err != nil || wire.Text(res) != "3" {
					t.Fatalf("add after the cancel: %v %+v", err, res)
				}
			})
		}
	}
}

// TestTask runs a task tool to its end through client.Options.Tasks,
// inside a testing/synctest bubble, so the client's polling takes no real
// time.
func TestTask(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := core.NewServer(core.Implementation{Name: "tasks", Version: "1.0.0"}, nil)
		defer srv.Close()
		core.AddTool(srv, &core.Tool{Name: "report"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			if req.TaskID() == "" {
				return "", errors.New("not a task")
			}
			time.Sleep(3 * time.Second) // the bubble's clock: some work
			return "report ready", nil
		}, &core.ToolOptions{TaskSupport: core.TaskRequired})
		var statuses []string
		c := mcptest.Connect(t, srv, &mcptest.Options{Mode: client.ModeModern, Client: &client.Options{Tasks: true}})
		res, err := c.CallTool(t.Context(), "report", struct{}{}, &client.CallOptions{TaskStatus: func(task *mcp.DetailedTask) {
			statuses = append(statuses, string(task.Status))
		}})
		if err != nil || wire.Text(res) != "report ready" {
			t.Fatalf("report: %v %+v", err, res)
		}
		if len(statuses) < 2 || statuses[0] != "working" || statuses[len(statuses)-1] != "completed" {
			t.Fatalf("statuses %v", statuses)
		}
	})
}

// TestAllowedHosts: the in-process requests come on a loopback address, so
// a loopback URL passes the DNS rebinding check and another name needs
// AllowedHosts, as on a developer's machine behind a public name.
func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, u := range []string{"http://localhost:8080/mcp", "http://[::1]/mcp"} {
		c := mcptest.Connect(t, srv, &mcptest.Options{URL: u})
		if _, err := c.CallTool(t.Context(), "add", AddArgs{}, nil); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}

	// A name that is not loopback reaches a server not on loopback, which
	// serves any Host unless AllowedHosts says otherwise.
	strict := core.NewServer(core.Implementation{Name: "strict", Version: "1"}, &core.ServerOptions{AllowedHosts: []string{"mcp.example.com"}})
	defer strict.Close()
	core.AddTool(strict, &core.Tool{Name: "add"}, add)
	c := mcptest.Connect(t, strict, &mcptest.Options{URL: "https://mcp.example.com/mcp", Mode: client.ModeModern})
	if _, err := c.CallTool(t.Context(), "add", AddArgs{}, nil); err != nil {
		t.Errorf("an allowed host: %v", err)
	}
	c = mcptest.Connect(t, strict, &mcptest.Options{URL: "https://other.example.com/mcp", Mode: client.ModeModern})
	_, err := c.CallTool(t.Context(), "add", AddArgs{}, nil)
	if he := (*client.HTTPError)(nil); !errors.As(err, &he) || he.StatusCode != http.StatusForbidden {
		t.Fatalf("a host not allowed: %v, want HTTP 403", err)
	}
}

// TestConcurrentCalls: one Conn, many calls at once, and a recorder read
// while they run (go test -race checks the locking).
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		rec := &mcptest.Recorder{}
		c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode, Record: rec})
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				res, err := c.CallTool(t.Context(), "add", AddArgs{Left: i, Right: 1}, nil)
				if err != nil || wire.Text(res) != fmt.Sprint(i+1) {
					t.Errorf("%v: add(%d, 1): %v %+v", mode, i, err, res)
				}
				rec.Exchanges()
			})
		}
		wg.Wait()
	}
}

// TestNoGoroutineLeft: in a testing/synctest bubble, which fails a test
// whose goroutines outlive it, a Conn of each era (a legacy one with its
// GET stream open) leaves nothing running once the test's cleanups ran,
// and ends it all at once: the bubble's clock does not move, so nothing
// ended on a timeout.
func TestNoGoroutineLeft(t *testing.T) {
	t.Parallel()
	for _, mode := range eras {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				srv := newServer(t)
				// Runs after Connect's cleanups, before the server's.
				t.Cleanup(func() {
					if d := time.Since(start); d != 0 {
						t.Errorf("the connection ended %v (the bubble's clock) after it started: something waited for a timer", d)
					}
				})
				c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode})
				if res, err := c.CallTool(t.Context(), "add", AddArgs{Left: 1, Right: 1}, nil); err != nil || wire.Text(res) != "2" {
					t.Fatalf("add: %v %+v", err, res)
				}
			})
		})
	}
}

// TestServer: Server serves on a loopback socket, which a client reaches
// in both eras; the test's end closes it even with a legacy GET stream
// still open.
func TestServer(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	url := mcptest.Server(t, srv)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		c, err := client.Connect(t.Context(), url, &client.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		// Not closed: the server's cleanup ends the legacy GET stream.
		if res, err := c.CallTool(t.Context(), "add", AddArgs{Left: 2, Right: 2}, nil); err != nil || wire.Text(res) != "4" {
			t.Fatalf("%v: add: %v %+v", mode, err, res)
		}
	}
}
