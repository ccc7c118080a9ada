package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/mcp"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// seen is one request a test server received.
type seen struct {
	Method string // HTTP method
	Header http.Header
	Body   []byte
	RPC    string // JSON-RPC method ("" for responses)
	Status int
}

// recorder records what reaches a server; it is HTTP middleware, so the
// server behind it is the real core.Server.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
	// fault, when set, may answer a request instead of the server.
	fault func(w http.ResponseWriter, r *http.Request, s *seen) bool
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &m)
		// Recorded before the server answers: the client may act on the
		// answer before this handler returns.
		s := seen{Method: r.Method, Header: r.Header.Clone(), Body: body, RPC: m.Method}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, s)
		rec.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		if rec.fault == nil || !rec.fault(sw, r, &s) {
			h.ServeHTTP(sw, r)
		}
	})
}

func (rec *recorder) all() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seen(nil), rec.reqs...)
}

func (rec *recorder) count(rpc string) int {
	n := 0
	for _, s := range rec.all() {
		if s.RPC == rpc {
			n++
		}
	}
	return n
}

func (rec *recorder) last(rpc string) *seen {
	all := rec.all()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].RPC == rpc {
			return &all[i]
		}
	}
	return nil
}

type none struct{}

// coreHandler is a real core.Server with the tool echo, set up further by
// setup, behind a recorder and adapters/nethttp.
func coreHandler(opts *core.ServerOptions, setup func(*core.Server)) (http.Handler, *recorder) {
	srv := core.NewServer(core.Implementation{Name: "test", Version: "1"}, opts)
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return "echo:" + in.S, nil
	})
	if setup != nil {
		setup(srv)
	}
	rec := &recorder{}
	return nethttp.NewHandler(srv, &nethttp.Options{Middleware: rec.wrap}), rec
}

// connect connects to url with opts and ctx, and closes the Conn when the
// test ends.
func connect(t *testing.T, ctx context.Context, url string, opts *client.Options) *client.Conn {
	t.Helper()
	c, err := client.Connect(ctx, url, opts)
	return opened(t, c, err)
}

// connectWith is connect through cl.
func connectWith(t *testing.T, ctx context.Context, cl *client.Client, url string) *client.Conn {
	t.Helper()
	c, err := cl.Connect(ctx, url)
	return opened(t, c, err)
}

// opened ends the test on err, else closes c when the test ends.
func opened(t *testing.T, c *client.Conn, err error) *client.Conn {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newServer serves coreHandler on loopback.
func newServer(t *testing.T, opts *core.ServerOptions, setup func(*core.Server)) (string, *recorder) {
	t.Helper()
	h, rec := coreHandler(opts, setup)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + nethttp.DefaultPath, rec
}

func TestProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		mode   core.Mode
		modern bool
	}{{core.ModeAuto, true}, {core.ModeModern, true}, {core.ModeLegacy, false}} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			url, rec := newServer(t, &core.ServerOptions{Mode: tc.mode}, nil)
			cl := client.New(nil)
			c, err := cl.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if c.Modern() != tc.modern {
				t.Fatalf("Modern() = %v", c.Modern())
			}
			if rec.count("server/discover") != 1 {
				t.Fatalf("discover sent %d times", rec.count("server/discover"))
			}
			if !tc.modern && rec.count("initialize") != 1 {
				t.Fatalf("initialize sent %d times", rec.count("initialize"))
			}
			c.Close()
			// The Client remembers the era: its next Connect does not probe.
			c, err = cl.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Modern() != tc.modern || rec.count("server/discover") != 1 {
				t.Fatalf("second Connect: modern %v, discover %d", c.Modern(), rec.count("server/discover"))
			}
			if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); err != nil {
				t.Fatal(err)
			}
			// Another Client knows nothing of it: no state outside a Client.
			c2 := connect(t, ctx, url, nil)
			if c2.Modern() != tc.modern || rec.count("server/discover") != 2 {
				t.Fatalf("a new Client's Connect: modern %v, discover %d, want a probe", c2.Modern(), rec.count("server/discover"))
			}
		})
	}
}

// unsupported answers the first n server/discover requests with -32022 and
// the given supported list.
func unsupported(n int, supported ...string) func(w http.ResponseWriter, r *http.Request, s *seen) bool {
	var left atomic.Int32
	left.Store(int32(n))
	return func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC != "server/discover" || left.Add(-1) < 0 {
			return false
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(s.Body, &m)
		d, _ := json.Marshal(map[string]any{"supported": supported, "requested": r.Header.Get("Mcp-Protocol-Version")})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":` + string(d) + `}}`))
		return true
	}
}

func TestProbeUnsupportedVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("retry once with the version sent", func(t *testing.T) {
		t.Parallel()
		url, rec := newServer(t, nil, nil)
		rec.fault = unsupported(1, "2026-07-28")
		c := connect(t, ctx, url, nil)
		if !c.Modern() || rec.count("server/discover") != 2 {
			t.Fatalf("modern %v, discover %d", c.Modern(), rec.count("server/discover"))
		}
	})
	t.Run("only legacy listed", func(t *testing.T) {
		t.Parallel()
		url, rec := newServer(t, nil, nil)
		rec.fault = unsupported(1, "2025-06-18")
		c := connect(t, ctx, url, nil)
		if c.Modern() || c.ProtocolVersion() != "2025-06-18" || rec.count("initialize") != 1 {
			t.Fatalf("modern %v version %s", c.Modern(), c.ProtocolVersion())
		}
	})
	t.Run("none in common", func(t *testing.T) {
		t.Parallel()
		url, rec := newServer(t, nil, nil)
		rec.fault = unsupported(1, "2099-01-01")
		_, err := client.Connect(ctx, url, nil)
		if !errors.Is(err, client.ErrNoCommonVersion) {
			t.Fatalf("err = %v", err)
		}
		if rec.count("initialize") != 0 || rec.count("server/discover") != 1 {
			t.Fatal("sent more than one probe")
		}
	})
	t.Run("twice unsupported", func(t *testing.T) {
		t.Parallel()
		url, rec := newServer(t, nil, nil)
		rec.fault = unsupported(5, "2026-07-28")
		_, err := client.Connect(ctx, url, nil)
		var uv *mcp.Error
		if !errors.Is(err, mcp.ErrUnsupportedVersion) || !errors.As(err, &uv) || len(uv.Supported()) == 0 || uv.Supported()[0] != "2026-07-28" {
			t.Fatalf("err = %v", err)
		}
		if uv.Code != core.CodeUnsupportedProtocolVersion || uv.Method() != "server/discover" || uv.ResponseStatus() != http.StatusBadRequest {
			t.Fatalf("not the *mcp.Error of the probe: %v (%s, %d)", err, uv.Method(), uv.ResponseStatus())
		}
		if rec.count("server/discover") != 2 {
			t.Fatalf("discover %d, want 2 (one retry)", rec.count("server/discover"))
		}
	})
	t.Run("-32020 and -32021 are modern, surfaced", func(t *testing.T) {
		t.Parallel()
		for _, code := range []int{core.CodeHeaderMismatch, core.CodeMissingRequiredClientCapability} {
			url, rec := newServer(t, nil, nil)
			rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
				if s.RPC != "server/discover" {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"m","data":{"requiredCapabilities":{"roots":{}}}}}`, code)
				return true
			}
			_, err := client.Connect(ctx, url, nil)
			var e *mcp.Error
			if !(errors.Is(err, mcp.ErrHeaderMismatch) || errors.Is(err, mcp.ErrMissingCapability)) || !errors.As(err, &e) || rec.count("initialize") != 0 {
				t.Fatalf("%d: err %v, initialize %d", code, err, rec.count("initialize"))
			}
			if rc := e.RequiredCapabilities(); e.Code == core.CodeMissingRequiredClientCapability &&
				(rc == nil || rc.Roots == nil || rc.Sampling != nil || rc.Elicitation != nil || string(e.Data) != `{"requiredCapabilities":{"roots":{}}}`) {
				t.Fatalf("requiredCapabilities %+v (data %s)", rc, e.Data)
			}
		}
	})
	t.Run("405 without body is legacy evidence", func(t *testing.T) {
		t.Parallel()
		url, rec := newServer(t, nil, nil)
		rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
			if s.RPC == "server/discover" {
				w.WriteHeader(405)
				return true
			}
			return false
		}
		c := connect(t, ctx, url, nil)
		if c.Modern() {
			t.Fatal("modern after 405")
		}
	})
}

func TestModernRequestShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern,
		ClientInfo: core.Implementation{Name: "t", Version: "9"}, LogLevel: core.LevelInfo})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "ü"}, nil); err != nil {
		t.Fatal(err)
	}
	s := rec.last("tools/call")
	h := s.Header
	if h.Get("Mcp-Protocol-Version") != "2026-07-28" || h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "echo" ||
		!strings.Contains(h.Get("Accept"), "application/json") || !strings.Contains(h.Get("Accept"), "text/event-stream") {
		t.Fatalf("headers %v", h)
	}
	var body struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(s.Body, &body)
	m := body.Params.Meta
	if string(m[core.MetaProtocolVersion]) != `"2026-07-28"` || string(m[core.MetaClientCapabilities]) != `{}` ||
		string(m[core.MetaClientInfo]) != `{"name":"t","version":"9"}` || string(m[core.MetaLogLevel]) != `"info"` {
		t.Fatalf("_meta %s", s.Body)
	}
	// Mcp-Name is encoded when it is not a plain value.
	c.CallTool(ctx, " spaced", nil, nil)
	if got := rec.last("tools/call").Header.Get("Mcp-Name"); got != "=?base64?IHNwYWNlZA==?=" {
		t.Fatalf("Mcp-Name %q", got)
	}
	// Unknown tool: -32602 as an *mcp.Error.
	_, err = c.CallTool(ctx, "nope", nil, nil)
	if !errors.Is(err, &mcp.Error{Code: core.CodeInvalidParams}) {
		t.Fatalf("err = %v", err)
	}
	// Non-object arguments are refused before anything is sent.
	n := len(rec.all())
	if _, err := c.CallTool(ctx, "echo", []int{1}, nil); err == nil || len(rec.all()) != n {
		t.Fatalf("array arguments: %v, sent %d", err, len(rec.all())-n)
	}
}

func TestParamHeaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "hdr", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"n":{"type":"integer","x-mcp-header":"N"},
			"b":{"type":"boolean","x-mcp-header":"B"},
			"nested":{"type":"object","properties":{"k":{"type":"string","x-mcp-header":"K"}}}}}`)},
			func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
				return "ok", nil
			})
	})
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.CallTool(ctx, "hdr", map[string]any{"region": "Zürich", "n": 42, "b": false, "nested": map[string]any{"k": "=?base64?x?="}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError {
		t.Fatalf("result %+v", r)
	}
	h := rec.last("tools/call").Header
	want := map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=", "Mcp-Param-N": "42", "Mcp-Param-B": "false",
		"Mcp-Param-K": "=?base64?PT9iYXNlNjQ/eD89?="}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	// null and absent values send no header.
	if _, err := c.CallTool(ctx, "hdr", map[string]any{"region": nil}, nil); err != nil {
		t.Fatal(err)
	}
	for k := range rec.last("tools/call").Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			t.Errorf("header %s sent for null/absent", k)
		}
	}
	// Integers beyond ±(2^53-1) fail before sending.
	n := rec.count("tools/call")
	if _, err := c.CallTool(ctx, "hdr", json.RawMessage(`{"n":9007199254740992}`), nil); err == nil || rec.count("tools/call") != n {
		t.Fatalf("big integer: err %v", err)
	}
	if _, err := c.CallTool(ctx, "hdr", json.RawMessage(`{"n":9007199254740991}`), nil); err != nil {
		t.Fatal(err)
	}
}

// TestHeaderMismatchRefreshes: a -32020 to a call (the declarations the
// client knows are stale) makes the client read the list again and send
// the call once more.
func TestHeaderMismatchRefreshes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "hdr", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
			func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
				return "ok", nil
			})
	})
	var once atomic.Bool
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC != "tools/call" || !once.CompareAndSwap(false, true) {
			return false
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(s.Body, &m)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"Mcp-Param-Region does not match"}}`, m.ID)
		return true
	}
	c, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	r, err := c.CallTool(ctx, "hdr", map[string]any{"region": "eu"}, nil)
	if err != nil || r.IsError {
		t.Fatalf("%v %v", err, r)
	}
	if rec.count("tools/call") != 2 || rec.count("tools/list") != 2 {
		t.Fatalf("calls %d lists %d, want 2 and 2", rec.count("tools/call"), rec.count("tools/list"))
	}
	if got := rec.last("tools/call").Header.Get("Mcp-Param-Region"); got != "eu" {
		t.Fatalf("Mcp-Param-Region %q", got)
	}
}

func TestMRTRRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var rounds atomic.Int32
	url, rec := newServer(t, nil, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "forever"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			rounds.Add(1)
			return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("again?", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "s")
		})
		core.AddTool(s, &core.Tool{Name: "stateful"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			if req.Input.State() == "one" {
				return "done", nil
			}
			return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("ok?", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "one")
		})
	})
	o := handlers()
	o.Mode = client.ModeModern
	o.MaxRounds = 3
	c, _ := client.Connect(ctx, url, o)
	_, err := c.CallTool(ctx, "forever", nil, nil)
	var mr *client.MaxRoundsError
	if !errors.Is(err, client.ErrMaxRounds) || !errors.As(err, &mr) || rounds.Load() != 4 {
		t.Fatalf("err %v, rounds %d", err, rounds.Load())
	}
	// Each round is a new request id; the retry echoes requestState byte
	// for byte and carries the original name and arguments.
	ids := map[string]bool{}
	var prevState json.RawMessage
	for i, s := range rec.all() {
		if s.RPC != "tools/call" {
			continue
		}
		var b struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name           string          `json:"name"`
				RequestState   json.RawMessage `json:"requestState"`
				InputResponses json.RawMessage `json:"inputResponses"`
			} `json:"params"`
		}
		json.Unmarshal(s.Body, &b)
		if ids[string(b.ID)] {
			t.Fatalf("request %d reuses id %s", i, b.ID)
		}
		ids[string(b.ID)] = true
		if b.Params.Name != "forever" {
			t.Fatal("name lost on retry")
		}
		if prevState == nil && b.Params.RequestState != nil && len(ids) == 1 {
			t.Fatal("first request carried requestState")
		}
		prevState = b.Params.RequestState
	}
	// No input_required leaks into the next call.
	r, k, err := c.CallToolOnce(ctx, "stateful", nil, nil)
	if err != nil || r != nil || k == nil || len(k.Requests) != 1 || len(k.Keys) != 1 || k.Keys[0] != "q" || k.Requests["q"] == nil {
		t.Fatalf("CallToolOnce: %v %v %v", r, k, err)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "between"}, nil); err != nil {
		t.Fatal(err)
	}
	if b := rec.last("tools/call").Body; bytes.Contains(b, []byte("requestState")) || bytes.Contains(b, []byte("inputResponses")) {
		t.Fatalf("unrelated call carried MRTR state: %s", b)
	}
	res, k2, err := k.Answer(ctx)
	if err != nil || k2 != nil {
		t.Fatalf("Answer: %v %v", err, k2)
	}
	if mcptest.Text(res) != "done" {
		t.Fatalf("result %+v", res)
	}
	// Resume with answers given by the caller.
	_, k, err = c.CallToolOnce(ctx, "stateful", nil, nil)
	if err != nil || k == nil {
		t.Fatalf("CallToolOnce: %v", err)
	}
	if _, _, err := k.Resume(ctx, map[string]json.RawMessage{}); err == nil {
		t.Fatal("Resume without the answer sent anyway")
	}
	res, k2, err = k.Resume(ctx, map[string]json.RawMessage{"q": json.RawMessage(`{"action":"accept","content":{"ok":true}}`)})
	if err != nil || k2 != nil || mcptest.Text(res) != "done" {
		t.Fatalf("Resume: %v %v", err, k2)
	}
	// A kind the client did not declare is refused by the server (-32021).
	c2, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	_, err = c2.CallTool(ctx, "forever", nil, nil)
	if !errors.Is(err, mcp.ErrMissingCapability) {
		t.Fatalf("err = %v", err)
	}
}

// challenger is a TokenSource that learns the right token from a
// challenge, as an OAuth flow would.
type challenger struct {
	mu         sync.Mutex
	tok        string
	good       string
	challenges int
	fix        bool
}

func (ch *challenger) Token(context.Context) (string, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.tok, nil
}

func (ch *challenger) Challenge(ctx context.Context, endpoint string, resp *http.Response) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.challenges++
	if p, ok := mcp.BearerChallenge(resp.Header); !ok || p["resource_metadata"] == "" {
		return errors.New("no resource_metadata in the challenge")
	}
	if ch.fix {
		ch.tok = ch.good
	}
	return nil
}

// bearer is authentication middleware: "Bearer good" passes, "Bearer
// narrow" gets 403 insufficient_scope, anything else 401.
func bearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			next.ServeHTTP(w, r)
		case "Bearer narrow":
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource"`)
			w.WriteHeader(403)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
			w.WriteHeader(401)
		}
	})
}

func newAuthServer(t *testing.T, mode core.Mode) (string, *recorder) {
	srv := core.NewServer(core.Implementation{Name: "auth", Version: "1"}, &core.ServerOptions{Mode: mode})
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) { return "ok", nil })
	rec := &recorder{}
	ts := httptest.NewServer(nethttp.NewHandler(srv, &nethttp.Options{Middleware: func(h http.Handler) http.Handler { return rec.wrap(bearer(h)) }}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", rec
}

func TestAuthorization(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []core.Mode{core.ModeAuto, core.ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			url, _ := newAuthServer(t, mode)
			// 401 is not era evidence: authorize, then probe again.
			ch := &challenger{tok: "", good: "good", fix: true}
			c := connect(t, ctx, url, &client.Options{TokenSource: ch})
			if c.Modern() != (mode == core.ModeAuto) || ch.challenges != 1 {
				t.Fatalf("modern %v challenges %d", c.Modern(), ch.challenges)
			}
			if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
				t.Fatal(err)
			}
			// 403 insufficient_scope is a challenge too.
			ch.mu.Lock()
			ch.tok = "narrow"
			ch.mu.Unlock()
			if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil || ch.challenges != 2 {
				t.Fatalf("after step-up: %v, challenges %d", err, ch.challenges)
			}
		})
	}
	t.Run("at most 3 attempts", func(t *testing.T) {
		t.Parallel()
		url, rec := newAuthServer(t, core.ModeAuto)
		ch := &challenger{tok: "bad"}
		_, err := client.Connect(ctx, url, &client.Options{TokenSource: ch})
		var he *client.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 401 || !errors.Is(err, client.ErrUnauthorized) {
			t.Fatalf("err = %v", err)
		}
		if n := len(rec.all()); n != 3 || ch.challenges != 2 {
			t.Fatalf("%d requests, %d challenges", n, ch.challenges)
		}
	})
	t.Run("static token", func(t *testing.T) {
		t.Parallel()
		url, _ := newAuthServer(t, core.ModeAuto)
		c, err := client.Connect(ctx, url, &client.Options{TokenSource: client.StaticToken("good")})
		if err != nil {
			t.Fatal(err)
		}
		// A per-call Authorization replaces the source's token.
		_, err = c.CallTool(ctx, "echo", nil, &client.CallOptions{Token: "bad"})
		if !errors.Is(err, client.ErrUnauthorized) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{CacheHints: map[string]core.CacheHint{
		"tools/list":     {TTL: time.Minute, Scope: core.CacheScopePrivate},
		"resources/read": {TTL: time.Minute, Scope: core.CacheScopePublic},
	}}, func(s *core.Server) {
		s.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "test://r", Text: "x"}}}, nil
		})
	})
	tok := &challenger{tok: "t1"}
	c, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern, TokenSource: tok})
	for range 3 {
		if _, err := c.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := rec.count("tools/list"); n != 1 {
		t.Fatalf("tools/list sent %d times, want 1", n)
	}
	// Private entries belong to the token source: a renewed token keeps
	// them (field_test.go has the rest).
	tok.mu.Lock()
	tok.tok = "t2"
	tok.mu.Unlock()
	c.ListTools(ctx, nil)
	if n := rec.count("tools/list"); n != 1 {
		t.Fatalf("renewed token: tools/list sent %d times, want 1", n)
	}
	// Refresh and bypass; a per-call Authorization bypasses.
	c.ListTools(ctx, &client.CallOptions{Cache: client.CacheRefresh})
	c.ListTools(ctx, &client.CallOptions{Cache: client.CacheBypass})
	c.ListTools(ctx, &client.CallOptions{Token: "t2"})
	if n := rec.count("tools/list"); n != 4 {
		t.Fatalf("tools/list %d, want 4", n)
	}
	// Public results are shared across tokens.
	c.ReadResource(ctx, "test://r", nil)
	tok.mu.Lock()
	tok.tok = "t3"
	tok.mu.Unlock()
	c.ReadResource(ctx, "test://r", nil)
	if n := rec.count("resources/read"); n != 1 {
		t.Fatalf("resources/read %d, want 1", n)
	}
	c.Close()
}

func TestLegacySession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{Mode: core.ModeLegacy}, nil)
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeLegacy})
	if err != nil {
		t.Fatal(err)
	}
	init := rec.last("initialize")
	if init.Header.Get("Mcp-Session-Id") != "" || rec.count("notifications/initialized") != 1 {
		t.Fatal("initialize shape")
	}
	if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	call := rec.last("tools/call")
	sid := call.Header.Get("Mcp-Session-Id")
	if sid == "" || call.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Fatalf("headers %v", call.Header)
	}
	// The server forgets the session: 404 → initialize again, once.
	var once atomic.Bool
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC == "tools/call" && once.CompareAndSwap(false, true) {
			w.WriteHeader(404)
			return true
		}
		return false
	}
	if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	if rec.count("initialize") != 2 {
		t.Fatalf("initialize %d", rec.count("initialize"))
	}
	// Per-call credentials get their own session.
	if _, err := c.CallTool(ctx, "echo", nil, &client.CallOptions{Token: "other"}); err != nil {
		t.Fatal(err)
	}
	if rec.count("initialize") != 3 || rec.last("initialize").Header.Get("Authorization") != "Bearer other" {
		t.Fatal("no session for the per-call credential")
	}
	// Close ends the sessions with DELETE.
	c.Close()
	dels := 0
	for _, s := range rec.all() {
		if s.Method == http.MethodDelete && s.Header.Get("Mcp-Session-Id") != "" {
			dels++
		}
	}
	if dels != 2 {
		t.Fatalf("%d DELETEs", dels)
	}
}

func TestLegacyCancel(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	url, rec := newServer(t, &core.ServerOptions{Mode: core.ModeLegacy}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "block"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			close(started)
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(5 * time.Second):
				return "not cancelled", nil
			}
		})
	})
	c, err := client.Connect(context.Background(), url, &client.Options{Mode: client.ModeLegacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := c.CallTool(ctx, "block", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	n := rec.last("notifications/cancelled")
	if n == nil || !bytes.Contains(n.Body, []byte(`"requestId":`)) {
		t.Fatal("no notifications/cancelled")
	}
}

// breakFirst answers the first request of method with an SSE stream that
// ends before the response.
func breakFirst(method string) func(w http.ResponseWriter, r *http.Request, s *seen) bool {
	var done atomic.Bool
	return func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC != method || !done.CompareAndSwap(false, true) {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte(": keep-alive\n\n"))
		return true
	}
}

func TestBrokenStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	c, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	// An idempotent request is sent again, once, with a new id.
	rec.fault = breakFirst("tools/list")
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range rec.all() {
		if s.RPC == "tools/list" {
			var b struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(s.Body, &b)
			ids = append(ids, string(b.ID))
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("tools/list ids %v", ids)
	}
	// tools/call is never repeated.
	rec.fault = breakFirst("tools/call")
	_, err := c.CallTool(ctx, "echo", nil, nil)
	if !errors.Is(err, client.ErrStreamBroken) || rec.count("tools/call") != 1 {
		t.Fatalf("err %v, calls %d", err, rec.count("tools/call"))
	}
}

// TestVersionRetry: -32022 on an ordinary request that lists our version
// makes the client send it once more.
func TestVersionRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	c, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	rec.fault = unsupported(1, "2026-07-28")
	if _, err := c.Discover(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if rec.count("server/discover") != 2 {
		t.Fatalf("discover %d", rec.count("server/discover"))
	}
}

// TestHostileResponses: what one hostile response costs the client is
// bounded by MaxResponseBytes, whatever the server sends.
func TestHostileResponses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	c, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern, MaxResponseBytes: 64 << 10})
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		switch s.RPC {
		case "tools/list": // a JSON body far over the bound
			w.Header().Set("Content-Type", "application/json")
			chunk := bytes.Repeat([]byte(" "), 32<<10)
			for i := 0; i < 1024; i++ { // up to 32 MiB, until the client stops reading
				if _, err := w.Write(chunk); err != nil {
					break
				}
			}
			return true
		case "prompts/list": // one endless SSE event
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: "))
			chunk := bytes.Repeat([]byte("x"), 32<<10)
			for i := 0; i < 1024; i++ {
				if _, err := w.Write(chunk); err != nil {
					break
				}
			}
			return true
		}
		return false
	}
	if _, err := c.ListToolsPage(ctx, nil, &client.CallOptions{Cache: client.CacheBypass}); err == nil {
		t.Fatal("oversized JSON accepted")
	}
	if _, err := c.ListPrompts(ctx, nil, nil); !errors.Is(err, client.ErrStreamBroken) {
		t.Fatalf("oversized SSE event: %v", err)
	}
	// The connection still works.
	rec.fault = nil
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "ok"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestExtraHeaders: Options.Header and CallOptions.Header reach the server
// in both eras.
func TestExtraHeaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		c, err := client.Connect(ctx, url, &client.Options{Mode: mode, Header: http.Header{"X-Conn": {"c"}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.CallTool(ctx, "echo", nil, &client.CallOptions{Header: http.Header{"X-Call": {"k"}}}); err != nil {
			t.Fatal(err)
		}
		h := rec.last("tools/call").Header
		if h.Get("X-Conn") != "c" || h.Get("X-Call") != "k" {
			t.Fatalf("%v: headers %v", mode, h)
		}
	}
}

// TestCallCredential: a call's own credential replaces the TokenSource's
// token: CallOptions.Token, an Authorization in CallOptions.Header (any
// spelling), Token over Header, and an empty Authorization sends none.
func TestCallCredential(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern, TokenSource: client.StaticToken("conn")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, tc := range []struct {
		opts *client.CallOptions
		want []string
	}{
		{nil, []string{"Bearer conn"}},
		{&client.CallOptions{Token: "t1"}, []string{"Bearer t1"}},
		{&client.CallOptions{Header: http.Header{"authorization": {"Bearer h"}}}, []string{"Bearer h"}},
		{&client.CallOptions{Token: "t2", Header: http.Header{"Authorization": {"Bearer h"}}}, []string{"Bearer t2"}},
		{&client.CallOptions{Header: http.Header{"Authorization": {""}}}, nil},
	} {
		if _, err := c.CallTool(ctx, "echo", nil, tc.opts); err != nil {
			t.Fatal(err)
		}
		if got := rec.last("tools/call").Header.Values("Authorization"); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: Authorization %q, want %q", tc.opts, got, tc.want)
		}
	}
}

// answerWith answers the first request of method with result (raw JSON),
// echoing the request id.
func answerWith(method, result string) func(w http.ResponseWriter, r *http.Request, s *seen) bool {
	var done atomic.Bool
	return func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC != method || !done.CompareAndSwap(false, true) {
			return false
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(s.Body, &m)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
		return true
	}
}

func TestMRTRProtocolErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	c, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	// An input request of a kind the client did not declare.
	rec.fault = answerWith("tools/call", `{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{}}}}`)
	if _, err := c.CallTool(ctx, "echo", nil, nil); !errors.Is(err, client.ErrProtocol) || rec.count("tools/call") != 1 {
		t.Fatalf("undeclared kind: %v", err)
	}
	// An unknown resultType.
	rec.fault = answerWith("tools/call", `{"resultType":"later","content":[]}`)
	if _, err := c.CallTool(ctx, "echo", nil, nil); !errors.Is(err, client.ErrProtocol) {
		t.Fatalf("unknown resultType: %v", err)
	}
	// input_required on a method that may not return it.
	rec.fault = answerWith("tools/list", `{"resultType":"input_required","requestState":"x"}`)
	if _, err := c.ListTools(ctx, &client.CallOptions{Cache: client.CacheBypass}); !errors.Is(err, client.ErrProtocol) {
		t.Fatalf("input_required on tools/list: %v", err)
	}
	// requestState alone: retried at once, state echoed byte for byte,
	// no inputResponses.
	first := answerWith("tools/call", `{"resultType":"input_required","requestState":"busy\u002fwait"}`)
	second := answerWith("tools/call", `{"resultType":"complete","content":[{"type":"text","text":"later"}]}`)
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		return first(w, r, s) || second(w, r, s)
	}
	r, err := c.CallTool(ctx, "echo", map[string]any{"s": "again"}, nil)
	if err != nil || mcptest.Text(r) != "later" {
		t.Fatalf("state-only retry: %v", err)
	}
	retry := rec.last("tools/call").Body
	if !bytes.Contains(retry, []byte(`"requestState":"busy\u002fwait"`)) || bytes.Contains(retry, []byte("inputResponses")) {
		t.Fatalf("retry body %s", retry)
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{PageSize: 1, CacheHints: map[string]core.CacheHint{
		"tools/list": {TTL: time.Minute, Scope: core.CacheScopePublic}}}, func(s *core.Server) {
		for _, n := range []string{"a", "b", "c"} {
			core.AddTool(s, &core.Tool{Name: n}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) { return n, nil })
		}
	})
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		c, err := client.Connect(ctx, url, &client.Options{Mode: mode, NoGETStream: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		before := rec.count("tools/list")
		tools, err := c.ListTools(ctx, nil)
		if err != nil || len(tools) != 4 {
			t.Fatalf("%v: %d tools, %v", mode, len(tools), err)
		}
		if n := rec.count("tools/list") - before; n != 4 {
			t.Fatalf("%v: %d pages fetched", mode, n)
		}
	}
	// "" is a cursor like any other: it is sent.
	c, _ := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	empty := ""
	_, err := c.ListToolsPage(ctx, &empty, nil)
	if !bytes.Contains(rec.last("tools/list").Body, []byte(`"cursor":""`)) {
		t.Fatalf("empty cursor not sent (err %v)", err)
	}
	// A rejected cursor drops the cached pages of that list.
	c.ListTools(ctx, nil)
	n := rec.count("tools/list")
	c.ListTools(ctx, nil)
	if rec.count("tools/list") != n {
		t.Fatal("pages not cached")
	}
	bad := "not-a-cursor"
	if _, err := c.ListToolsPage(ctx, &bad, nil); !errors.Is(err, &mcp.Error{Code: core.CodeInvalidParams}) {
		t.Fatalf("bad cursor: %v", err)
	}
	n = rec.count("tools/list")
	c.ListTools(ctx, nil)
	if rec.count("tools/list") != n+4 {
		t.Fatalf("pages still cached after a rejected cursor (%d requests)", rec.count("tools/list")-n)
	}
}

// TestEraReprobe: a remembered era that fails with legacy evidence is
// forgotten, and the next Connect probes again.
func TestEraReprobe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	cl := client.New(nil)
	c, _ := cl.Connect(ctx, url) // probes, remembers modern
	c.Close()
	c, _ = cl.Connect(ctx, url) // from memory
	defer c.Close()
	if rec.count("server/discover") != 1 {
		t.Fatal("remembered era not used")
	}
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC == "tools/list" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return true
		}
		return false
	}
	var he *client.HTTPError
	if _, err := c.ListTools(ctx, nil); !errors.As(err, &he) || he.StatusCode != 405 {
		t.Fatalf("err = %v", err)
	}
	rec.fault = nil
	connectWith(t, ctx, cl, url)
	if rec.count("server/discover") != 2 {
		t.Fatalf("not probed again (%d discovers)", rec.count("server/discover"))
	}
}

func TestDiscoverAdopt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{Instructions: "be nice",
		CompletionHandler: func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
			return &core.CompleteResult{Completion: core.Completion{Values: []string{"a", "b"}}}, nil
		}}, func(s *core.Server) {
		s.AddPrompt(&core.Prompt{Name: "p", Arguments: []core.PromptArgument{{Name: "x"}}}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{}, nil
		})
	})
	d, err := client.Discover(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Instructions != "be nice" || d.ServerInfo == nil || d.ServerInfo.Name != "test" || d.Capabilities.Tools == nil {
		t.Fatalf("discovery %+v", d)
	}
	c, err := client.Adopt(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	if rec.count("server/discover") != 1 {
		t.Fatal("Adopt probed again")
	}
	req := &core.CompleteParams{Ref: core.CompletionReference{Type: "ref/prompt", Name: "p"}}
	req.Argument.Name, req.Argument.Value = "x", "y"
	r, err := c.Complete(ctx, req, nil)
	if err != nil || len(r.Completion.Values) != 2 {
		t.Fatalf("complete: %v %+v", err, r)
	}
	// InitializeLegacy talks legacy to the same endpoint.
	l, err := client.InitializeLegacy(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Modern() || l.InitializeResult() == nil || l.InitializeResult().ServerInfo.Name != "test" {
		t.Fatal("InitializeLegacy")
	}
}

// TestModernCancel: cancelling the context closes the stream, which the
// server takes as the cancellation (no notifications/cancelled).
func TestModernCancel(t *testing.T) {
	t.Parallel()
	started, stopped := make(chan struct{}), make(chan struct{})
	url, rec := newServer(t, nil, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "block"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			close(started)
			select {
			case <-ctx.Done():
				close(stopped)
				return "", ctx.Err()
			case <-time.After(10 * time.Second):
				return "not cancelled", nil
			}
		})
	})
	c, _ := client.Connect(context.Background(), url, &client.Options{Mode: client.ModeModern})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := c.CallTool(ctx, "block", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's handler was not cancelled")
	}
	if rec.count("notifications/cancelled") != 0 {
		t.Fatal("notifications/cancelled sent in 2026-07-28")
	}
}

// TestConcurrentUse: one Conn, many goroutines, both eras (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, _ := newServer(t, &core.ServerOptions{CacheHints: map[string]core.CacheHint{
		"tools/list": {TTL: time.Minute, Scope: core.CacheScopePrivate}}}, nil)
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		c, err := client.Connect(ctx, url, &client.Options{Mode: mode, TokenSource: client.StaticToken("t")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 4 {
					var err error
					switch (i + j) % 3 {
					case 0:
						_, err = c.ListTools(ctx, nil)
					case 1:
						var r *mcp.CallToolResult
						r, err = c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil)
						if err == nil && mcptest.Text(r) != "echo:x" {
							err = fmt.Errorf("wrong result %+v", r)
						}
					case 2:
						_, err = c.CallTool(ctx, "echo", nil, &client.CallOptions{Token: "other"})
					}
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%v: %v", mode, err)
		}
	}
}
