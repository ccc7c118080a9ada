package core_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// newNotifyServer has a tool that reports progress three times and logs at
// four levels.
func newNotifyServer(t testing.TB) *core.Server {
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "work", Description: "Works."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			for i, p := range []float64{0, 50, 100} {
				if err := req.NotifyProgress(ctx, p, 100, ""); err != nil {
					return "", err
				}
				req.Log(ctx, []core.LoggingLevel{core.LevelDebug, core.LevelInfo, core.LevelWarning}[i], "worker", map[string]any{"step": i})
			}
			req.Log(ctx, core.LevelError, "worker", "last")
			req.Log(ctx, "bogus", "worker", "unknown level: never sent")
			return "finished", nil
		})
	core.AddTool(srv, &core.Tool{Name: "needs_sampling", Description: "Needs sampling."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) { return "sampled", nil }, &core.ToolOptions{RequiredCapabilities: &core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}}})
	core.AddTool(srv, &core.Tool{Name: "needs_url", Description: "Checks for URL elicitation."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if err := req.RequireCapabilities(&core.ClientCapabilities{Elicitation: &core.ElicitationCapabilities{URL: map[string]any{}}}); err != nil {
				return "", err
			}
			req.NotifyProgress(ctx, 1, 0, "")
			return "url ok", nil
		})
	return srv
}

// TestProgressAndLogs checks that notifications travel on an SSE response
// before the result, only when asked for, and filtered by level (2026-07-28
// basic/patterns/progress, server/utilities/logging).
func TestProgressAndLogs(t *testing.T) {
	t.Parallel()
	srv := newNotifyServer(t)
	type want struct {
		sse      bool
		progress []string // progress values
		levels   []string
	}
	cases := []struct {
		name  string
		req   func() *testReq
		token string // raw JSON of the expected progressToken
		want  want
	}{
		{"plain call is JSON", func() *testReq { return callReq(1, "work", nil) }, "", want{}},
		{"string progress token", func() *testReq { return callReq(1, "work", nil).withMeta("progressToken", "p-1") }, `"p-1"`,
			want{sse: true, progress: []string{"0", "50", "100"}}},
		{"integer progress token", func() *testReq { return callReq(1, "work", nil).withMeta("progressToken", 7) }, `7`,
			want{sse: true, progress: []string{"0", "50", "100"}}},
		{"log level warning", func() *testReq { return callReq(1, "work", nil).withMeta(core.MetaLogLevel, "warning") }, "",
			want{sse: true, levels: []string{"warning", "error"}}},
		{"log level debug and progress", func() *testReq {
			return callReq(1, "work", nil).withMeta(core.MetaLogLevel, "debug").withMeta("progressToken", "t")
		}, `"t"`, want{sse: true, progress: []string{"0", "50", "100"}, levels: []string{"debug", "info", "warning", "error"}}},
		{"log level emergency sends nothing but still streams", func() *testReq {
			return callReq(1, "work", nil).withMeta(core.MetaLogLevel, "emergency")
		}, "", want{sse: true}},
		{"JSON-only client gets no notifications", func() *testReq {
			return callReq(1, "work", nil).withMeta("progressToken", "p").withHeader("Accept", "application/json")
		}, "", want{}},
		{"SSE-only client gets SSE", func() *testReq { return callReq(1, "work", nil).withHeader("Accept", "text/event-stream") }, "",
			want{sse: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.req().do(t, srv)
			if r.SSE != c.want.sse {
				t.Errorf("SSE = %v, want %v (Content-Type %q)", r.SSE, c.want.sse, r.Header.Get("Content-Type"))
			}
			if r.SSE && r.Header.Get("X-Accel-Buffering") != "no" {
				t.Errorf("X-Accel-Buffering = %q", r.Header.Get("X-Accel-Buffering"))
			}
			if got := textOf(r.result(t)); got != "finished" {
				t.Errorf("result text %q", got)
			}
			r.wantID(t, "1")
			var progress, levels []string
			for i, n := range r.notes(t) {
				switch n["method"] {
				case "notifications/progress":
					progress = append(progress, string(at(n, "params", "progress").(json.Number)))
					tok, _ := json.Marshal(at(n, "params", "progressToken"))
					if string(tok) != c.token {
						t.Errorf("progressToken = %s, want %s", tok, c.token)
					}
					validateSpec(t, modernVersion, "ProgressNotification", r.Msgs[i])
				case "notifications/message":
					levels = append(levels, str(at(n, "params", "level")))
					validateSpec(t, modernVersion, "LoggingMessageNotification", r.Msgs[i])
				default:
					t.Errorf("unexpected message before the result: %v", n)
				}
				if has(n, "id") {
					t.Errorf("a request or response before the result: %v", n)
				}
			}
			if strings.Join(progress, ",") != strings.Join(c.want.progress, ",") {
				t.Errorf("progress = %v, want %v", progress, c.want.progress)
			}
			if strings.Join(levels, ",") != strings.Join(c.want.levels, ",") {
				t.Errorf("log levels = %v, want %v", levels, c.want.levels)
			}
		})
	}
}

// TestRequiredCapabilities checks -32021 with data.requiredCapabilities as
// an object and HTTP 400, before any notification, from Tool and from the
// handler (2026-07-28 basic/index).
func TestRequiredCapabilities(t *testing.T) {
	t.Parallel()
	srv := newNotifyServer(t)
	cases := []struct {
		name string
		req  *testReq
		want string // data.requiredCapabilities
	}{
		{"tool needs sampling", callReq(1, "needs_sampling", nil), `{"sampling":{}}`},
		{"tool needs sampling with progress", callReq(1, "needs_sampling", nil).withMeta("progressToken", "p").withMeta(core.MetaLogLevel, "debug"), `{"sampling":{}}`},
		{"handler needs URL elicitation", callReq(1, "needs_url", nil).withCaps(map[string]any{"elicitation": map[string]any{}}), `{"elicitation":{"url":{}}}`},
		{"handler needs URL elicitation with progress", callReq(1, "needs_url", nil).withMeta("progressToken", 3), `{"elicitation":{"url":{}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.req.do(t, srv)
			if r.SSE {
				t.Errorf("the error came on an SSE stream (status decided too late)")
			}
			e := r.wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
			r.wantID(t, "1")
			if len(r.Msgs) != 1 {
				t.Errorf("%d messages, want only the error", len(r.Msgs))
			}
			rc, ok := at(e, "data", "requiredCapabilities").(map[string]any)
			if !ok {
				t.Fatalf("data.requiredCapabilities is not an object: %v", at(e, "data"))
			}
			if !jsonEq(t, toJSON(t, rc), []byte(c.want)) {
				t.Errorf("requiredCapabilities = %s, want %s", toJSON(t, rc), c.want)
			}
			validateSpec(t, modernVersion, "MissingRequiredClientCapabilityError", r.finalRaw(t))
		})
	}
	// Declared in this request: success. Not declared in the next one: the
	// server does not remember.
	ok := callReq(1, "needs_sampling", nil).withCaps(map[string]any{"sampling": map[string]any{}}).do(t, srv)
	if textOf(ok.result(t)) != "sampled" {
		t.Errorf("with sampling declared: %s", ok.Body)
	}
	callReq(2, "needs_sampling", nil).do(t, srv).wantError(t, 400, core.CodeMissingRequiredClientCapability)
	ok = callReq(3, "needs_url", nil).withCaps(map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}).do(t, srv)
	if textOf(ok.result(t)) != "url ok" {
		t.Errorf("with URL elicitation declared: %s", ok.Body)
	}
}

// TestDisconnectCancels checks that closing the response stream cancels the
// handler's context (2026-07-28 basic/patterns/cancellation), for JSON and SSE responses.
func TestDisconnectCancels(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	srv := core.NewServer(testImpl, &core.ServerOptions{StreamKeepAlive: -1})
	core.AddTool(srv, &core.Tool{Name: "block", Description: "Blocks until cancelled."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			req.NotifyProgress(ctx, 1, 0, "started")
			started <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
				return "", ctx.Err()
			case <-time.After(10 * time.Second):
				return "not cancelled", nil
			}
		})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	for _, withProgress := range []bool{false, true} {
		r := callReq(1, "block", nil)
		if withProgress {
			r.withMeta("progressToken", "p")
		}
		ctx, cancel := context.WithCancel(context.Background())
		r.withContext(ctx)
		errc := make(chan error, 1)
		go func() {
			hr := r.httpRequest(ts.URL)
			hr.RequestURI = ""
			res, err := http.DefaultClient.Do(hr.WithContext(ctx))
			if err == nil {
				buf := make([]byte, 1)
				_, err = res.Body.Read(buf) // reads until the stream is cut
				for err == nil {
					_, err = res.Body.Read(buf)
				}
				res.Body.Close()
			}
			errc <- err
		}()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("the handler did not start")
		}
		cancel()
		select {
		case <-cancelled:
		case <-time.After(5 * time.Second):
			t.Fatalf("progress=%v: the handler's context was not cancelled after the client went away", withProgress)
		}
		<-errc
	}
}

// TestListen checks subscriptions/listen (2026-07-28
// basic/patterns/subscriptions).
func TestListen(t *testing.T) {
	t.Parallel()
	newSrv := func() *core.Server {
		srv := core.NewServer(testImpl, &core.ServerOptions{StreamKeepAlive: -1})
		core.AddTool(srv, &core.Tool{Name: "add"}, add)
		srv.AddPrompt(&core.Prompt{Name: "p"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{}, nil
		})
		return srv
	}
	listen := func(id any, filter map[string]any) *testReq {
		return mreq(id, "subscriptions/listen", map[string]any{"notifications": filter})
	}
	checkTag := func(t *testing.T, msg map[string]any, path []any, wantID string) {
		t.Helper()
		got, _ := json.Marshal(at(msg, path...))
		if string(got) != wantID {
			t.Errorf("subscriptionId = %s, want %s (same JSON type as the listen id): %v", got, wantID, msg)
		}
	}

	t.Run("ack, changes, close", func(t *testing.T) {
		t.Parallel()
		srv := newSrv()
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		for _, id := range []struct {
			v   any
			raw string
		}{{"L-1", `"L-1"`}, {42, `42`}} {
			s := openStream(t, ts.URL, listen(id.v, map[string]any{
				"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
				"resourceSubscriptions": []string{"test://x"},
			}))
			raw := s.nextRaw(5 * time.Second)
			ack := decode(t, raw).(map[string]any)
			if ack["method"] != "notifications/subscriptions/acknowledged" {
				t.Fatalf("first event %v, want the acknowledgement", ack)
			}
			validateSpec(t, modernVersion, "SubscriptionsAcknowledgedNotification", raw)
			checkTag(t, ack, []any{"params", "_meta", core.MetaSubscriptionID}, id.raw)
			// The server has tools and prompts, no resources: the rest is dropped.
			if got := toJSON(t, at(ack, "params", "notifications")); !jsonEq(t, got, []byte(`{"toolsListChanged":true,"promptsListChanged":true}`)) {
				t.Errorf("honoured subset = %s", got)
			}
			core.AddTool(srv, &core.Tool{Name: "new_tool"}, add)
			raw = s.nextRaw(5 * time.Second)
			n := decode(t, raw).(map[string]any)
			if n["method"] != "notifications/tools/list_changed" {
				t.Fatalf("after AddTool: %v", n)
			}
			validateSpec(t, modernVersion, "ToolListChangedNotification", raw)
			checkTag(t, n, []any{"params", "_meta", core.MetaSubscriptionID}, id.raw)
			srv.AddPrompt(&core.Prompt{Name: "new_prompt"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
				return nil, nil
			})
			raw = s.nextRaw(5 * time.Second)
			n = decode(t, raw).(map[string]any)
			if n["method"] != "notifications/prompts/list_changed" {
				t.Fatalf("after AddPrompt: %v", n)
			}
			validateSpec(t, modernVersion, "PromptListChangedNotification", raw)
			checkTag(t, n, []any{"params", "_meta", core.MetaSubscriptionID}, id.raw)
			s.close()
		}
		// Close ends a fresh listen stream with its result.
		s := openStream(t, ts.URL, listen(9, map[string]any{"toolsListChanged": true}))
		s.next(5 * time.Second)
		srv.Close()
		raw := s.nextRaw(5 * time.Second)
		res := decode(t, raw).(map[string]any)
		checkTag(t, res, []any{"id"}, "9")
		checkTag(t, res, []any{"result", "_meta", core.MetaSubscriptionID}, "9")
		if str(at(res, "result", "resultType")) != "complete" {
			t.Errorf("closing result: %v", res)
		}
		validateSpec(t, modernVersion, "SubscriptionsListenResult", []byte(toJSON(t, res["result"])))
		s.ends(5 * time.Second)
		// The server keeps answering ordinary requests after Close.
		assertServesLive(t, ts.URL)
	})

	t.Run("only requested types", func(t *testing.T) {
		t.Parallel()
		srv := newSrv()
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		tools := openStream(t, ts.URL, listen("t", map[string]any{"toolsListChanged": true}))
		prompts := openStream(t, ts.URL, listen("p", map[string]any{"promptsListChanged": true}))
		nothing := openStream(t, ts.URL, listen("n", map[string]any{}))
		for _, s := range []*sseStream{tools, prompts, nothing} {
			s.next(5 * time.Second)
		}
		srv.AddPrompt(&core.Prompt{Name: "x"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return nil, nil
		})
		core.AddTool(srv, &core.Tool{Name: "x"}, add)
		if n := tools.next(5 * time.Second); n["method"] != "notifications/tools/list_changed" {
			t.Errorf("tools stream got %v", n)
		}
		if n := prompts.next(5 * time.Second); n["method"] != "notifications/prompts/list_changed" {
			t.Errorf("prompts stream got %v", n)
		}
		// Each stream delivers in order: an unwanted event, had it been
		// sent, would arrive before the next wanted one.
		srv.RemoveTools("x")
		if n := tools.next(5 * time.Second); n["method"] != "notifications/tools/list_changed" {
			t.Errorf("after RemoveTools: %v, want only tools changes on the tools stream", n)
		}
		srv.AddPrompt(&core.Prompt{Name: "y"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return nil, nil
		})
		if n := prompts.next(5 * time.Second); n["method"] != "notifications/prompts/list_changed" {
			t.Errorf("after AddPrompt: %v, want only prompts changes on the prompts stream", n)
		}
		// Close ends each stream with its result, the next event of each.
		srv.Close()
		for id, s := range map[string]*sseStream{"t": tools, "p": prompts, "n": nothing} {
			if m := s.next(5 * time.Second); m["id"] != id || m["result"] == nil {
				t.Errorf("stream %s: got %v, want its closing result and nothing before it", id, m)
			}
			s.ends(5 * time.Second)
		}
	})

	t.Run("resource updates", func(t *testing.T) {
		t.Parallel()
		srv := newFixture(t, &core.ServerOptions{StreamKeepAlive: -1})
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		s := openStream(t, ts.URL, listen("r", map[string]any{"resourceSubscriptions": []string{"test://static"}}))
		ack := s.next(5 * time.Second)
		if got := toJSON(t, at(ack, "params", "notifications")); !jsonEq(t, got, []byte(`{"resourceSubscriptions":["test://static"]}`)) {
			t.Errorf("ack = %s", got)
		}
		srv.NotifyResourceUpdated("test://other")
		srv.NotifyResourceUpdated("test://static/part")
		raw := s.nextRaw(5 * time.Second)
		n := decode(t, raw).(map[string]any)
		if n["method"] != "notifications/resources/updated" || str(at(n, "params", "uri")) != "test://static/part" {
			t.Errorf("got %v", n)
		}
		checkTag(t, n, []any{"params", "_meta", core.MetaSubscriptionID}, `"r"`)
		validateSpec(t, modernVersion, "ResourceUpdatedNotification", raw)
		// Nothing else was sent: the next event is the next update.
		srv.NotifyResourceUpdated("test://static")
		if n := s.next(5 * time.Second); n["method"] != "notifications/resources/updated" || str(at(n, "params", "uri")) != "test://static" {
			t.Errorf("got %v, want the update of test://static and nothing before it", n)
		}
	})

	t.Run("deadline ends gracefully", func(t *testing.T) {
		t.Parallel()
		// In a synctest bubble: the request's deadline passes on its clock.
		synctest.Test(t, func(t *testing.T) {
			srv := newSrv()
			hc := handlerClient(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx, cancel := context.WithTimeout(r.Context(), 500*time.Millisecond)
				defer cancel()
				srv.ServeHTTP(w, r.WithContext(ctx))
			}))
			s := openStreamVia(t, hc, "http://mcp.test/mcp", listen(5, map[string]any{"toolsListChanged": true}))
			s.next(5 * time.Second)
			res := s.next(5 * time.Second)
			checkTag(t, res, []any{"result", "_meta", core.MetaSubscriptionID}, "5")
			if str(at(res, "result", "resultType")) != "complete" {
				t.Errorf("want the listen result before the deadline, got %v", res)
			}
			s.ends(5 * time.Second)
		})
	})

	t.Run("no progress or logs on a listen stream", func(t *testing.T) {
		t.Parallel()
		srv := newSrv()
		srv.Close()
		r := listen(1, map[string]any{"toolsListChanged": true}).withMeta(core.MetaLogLevel, "debug").withMeta("progressToken", "p").do(t, srv)
		for _, n := range r.notes(t) {
			if m := str(n["method"]); m != "notifications/subscriptions/acknowledged" {
				t.Errorf("%s on a listen stream", m)
			}
		}
		if str(at(r.result(t), "resultType")) != "complete" {
			t.Errorf("listen result: %s", r.Body)
		}
	})
}
