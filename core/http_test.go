package core_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

func assertServesLive(t *testing.T, url string) {
	t.Helper()
	r := callReq(999, "add", map[string]any{"a": 1, "b": 1}).post(t, http.DefaultClient, url)
	if textOf(r.result(t)) != "2" {
		t.Errorf("follow-up call: %s", r.Body)
	}
}

// TestOriginAndHost checks DNS rebinding protection and Origin validation
// (2025-11-25 basic/transports) on a server reached on
// 127.0.0.1, and on a server that is not on loopback.
func TestOriginAndHost(t *testing.T) {
	t.Parallel()
	discover := func() *testReq { return mreq("d", "server/discover", nil) }
	send := func(t *testing.T, url string, r *testReq, host string) *resp {
		t.Helper()
		hr := r.httpRequest(url)
		hr.RequestURI = ""
		if host != "" {
			hr.Host = host
		}
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return parseResp(t, res.StatusCode, res.Header, []byte(b.String()))
	}
	t.Run("loopback", func(t *testing.T) {
		t.Parallel()
		var handled atomic.Int32
		srv := newFixture(t, nil)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handled.Add(1)
			srv.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		port := ts.URL[strings.LastIndexByte(ts.URL, ':'):]
		cases := []struct {
			host, origin string
			status       int
		}{
			{"", "", 200},
			{"evil.example.com", "http://evil.example.com", 403},
			{"evil.example.com", "", 403},
			{"evil.example.com" + port, "", 403},
			{"127.0.0.1" + port, "http://127.0.0.1" + port, 200},
			{"localhost:1234", "", 200},
			{"[::1]:80", "", 200},
			{"LOCALHOST", "", 200},
			{"", "http://localhost:9999", 200},
			{"", "https://127.0.0.1", 200},
			{"", "http://[::1]:3000", 200},
			{"", "http://evil.example.com", 403},
			{"", "http://localhost.evil.example.com", 403},
			{"", "null", 403},
			{"", "file://", 403},
			{"", "ftp://localhost", 403},
		}
		for _, c := range cases {
			r := send(t, ts.URL, discover().withHeader("Origin", c.origin), c.host)
			if r.Status != c.status {
				t.Errorf("Host %q Origin %q: HTTP %d, want %d: %s", c.host, c.origin, r.Status, c.status, r.Body)
			}
			if c.status == 403 {
				if len(r.Msgs) == 1 {
					r.wantID(t, "")
				}
				if r.Header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("CORS header on a refused request")
				}
			} else {
				r.result(t)
				if c.origin != "" && r.Header.Get("Access-Control-Allow-Origin") != c.origin {
					t.Errorf("Origin %q: Access-Control-Allow-Origin = %q", c.origin, r.Header.Get("Access-Control-Allow-Origin"))
				}
			}
		}
		// Every HTTP method is checked.
		for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodOptions} {
			hr, _ := http.NewRequest(m, ts.URL, nil)
			hr.Header.Set("Origin", "http://evil.example.com")
			res, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 403 {
				t.Errorf("%s with a foreign Origin: HTTP %d", m, res.StatusCode)
			}
		}
		if handled.Load() == 0 {
			t.Fatal("no request reached the server")
		}
	})
	t.Run("allow lists", func(t *testing.T) {
		t.Parallel()
		srv := newFixture(t, &core.ServerOptions{AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"mcp.example.com"}})
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		for _, c := range []struct {
			host, origin string
			status       int
		}{
			{"", "https://app.example.com", 200},
			{"", "https://app.example.com:443", 403},
			{"", "http://localhost:1", 403},
			{"mcp.example.com", "", 200},
			{"mcp.example.com:8443", "", 200},
			{"other.example.com", "", 403},
		} {
			if r := send(t, ts.URL, discover().withHeader("Origin", c.origin), c.host); r.Status != c.status {
				t.Errorf("Host %q Origin %q: HTTP %d, want %d", c.host, c.origin, r.Status, c.status)
			}
		}
		star := httptest.NewServer(newFixture(t, &core.ServerOptions{AllowedOrigins: []string{"*"}}))
		t.Cleanup(star.Close)
		if r := send(t, star.URL, discover().withHeader("Origin", "https://anything.example"), ""); r.Status != 200 {
			t.Errorf(`AllowedOrigins ["*"]: HTTP %d`, r.Status)
		}
	})
	t.Run("not loopback", func(t *testing.T) {
		t.Parallel()
		srv := newFixture(t, nil)
		for _, c := range []struct {
			origin string
			status int
		}{
			{"", 200},
			{"http://example.com", 200}, // httptest.NewRequest's Host
			{"https://example.com", 200},
			{"http://EXAMPLE.com", 200},
			{"http://localhost:3000", 403},
			{"https://evil.example.com", 403},
			{"http://example.com.evil.example", 403},
		} {
			r := mreq(1, "server/discover", nil).withHeader("Origin", c.origin).do(t, srv)
			if r.Status != c.status {
				t.Errorf("Origin %q: HTTP %d, want %d", c.origin, r.Status, c.status)
			}
		}
	})
}

// TestCORSPreflight checks OPTIONS answers.
func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	for _, mode := range []core.Mode{core.ModeAuto, core.ModeModern} {
		srv := newFixture(t, &core.ServerOptions{Mode: mode})
		const asked = "content-type, mcp-protocol-version, mcp-method, mcp-name, authorization, mcp-param-region, x-evil"
		rec := preflight(srv, "/mcp", "http://example.com", asked)
		h := rec.Header()
		if rec.Code != http.StatusNoContent && rec.Code != http.StatusOK {
			t.Fatalf("%v: preflight HTTP %d", mode, rec.Code)
		}
		if h.Get("Access-Control-Allow-Origin") != "http://example.com" {
			t.Errorf("%v: Allow-Origin = %q", mode, h.Get("Access-Control-Allow-Origin"))
		}
		allowed := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
		for _, want := range []string{"content-type", "mcp-protocol-version", "mcp-method", "mcp-name", "authorization", "mcp-param-region"} {
			if !strings.Contains(allowed, want) {
				t.Errorf("%v: Allow-Headers %q lacks %s", mode, allowed, want)
			}
		}
		if strings.Contains(allowed, "x-evil") {
			t.Errorf("%v: Allow-Headers allows x-evil", mode)
		}
		methods := h.Get("Access-Control-Allow-Methods")
		if !strings.Contains(methods, "POST") {
			t.Errorf("%v: Allow-Methods = %q", mode, methods)
		}
		if mode == core.ModeModern && strings.Contains(methods, "GET") {
			t.Errorf("modern-only server allows GET in CORS: %q", methods)
		}
		// A foreign origin is refused.
		rec = preflight(srv, "/mcp", "http://evil.example.com", asked)
		if rec.Code != http.StatusForbidden {
			t.Errorf("%v: foreign preflight HTTP %d", mode, rec.Code)
		}
	}
	// Exposed headers on an actual response.
	srv := newFixture(t, nil)
	r := mreq("d", "server/discover", nil).withHeader("Origin", "http://example.com").do(t, srv)
	if exp := r.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, "WWW-Authenticate") || !strings.Contains(exp, "Mcp-Session-Id") {
		t.Errorf("Expose-Headers = %q", exp)
	}
}

// TestConcurrentMessages: requests of both eras served at once, on a server
// that recycles the parsed form of every message, each get their own answer
// (run with -race: a message used after it was recycled is a data race).
func TestConcurrentMessages(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, quietBench())
	sid := initialize(t, srv, legacyVersion, nil, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				a, b := g*1000+i, i
				args := map[string]any{"a": a, "b": b}
				r := callReq(i+1, "add", args)
				if g%2 == 1 {
					r = lreq(fmt.Sprintf("g%d-%d", g, i), "tools/call", map[string]any{"name": "add", "arguments": args}, legacyVersion, sid)
				}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, r.httpRequest("/mcp"))
				var env struct {
					ID     json.RawMessage `json:"id"`
					Result struct {
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"result"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || len(env.Result.Content) != 1 {
					t.Errorf("goroutine %d call %d: %s", g, i, rec.Body.Bytes())
					return
				}
				wantID, _ := json.Marshal(r.msg["id"])
				if got := env.Result.Content[0].Text; got != strconv.Itoa(a+b) || string(env.ID) != string(wantID) {
					t.Errorf("goroutine %d call %d: id %s text %q, want id %s text %d", g, i, env.ID, got, wantID, a+b)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// shortBody is a body that sends a few bytes of what it declared.
type shortBody struct{ sent bool }

// TestDeclaredBodySizeNotAllocated: the body buffer grows with what
// arrives, not with the declared Content-Length, so a request that
// declares 4 MiB and sends 10 bytes allocates little. Not parallel: it
// reads the process's allocation counter.
func TestDeclaredBodySizeNotAllocated(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	srv := newFixture(t, nil)
	const n, declared = 20, 4 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		req := callReq(1, "add", map[string]any{"a": 1, "b": 2}).httpRequest("/mcp")
		req.Body, req.ContentLength = io.NopCloser(&shortBody{}), declared
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusBadRequest {
			t.Fatalf("HTTP %d: %s", w.Code, w.Body.Bytes())
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 256<<10 {
		t.Fatalf("%d bytes allocated per request that declared %d and sent 10", per, declared)
	}
	assertServes(t, srv)
}

func (b *shortBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, io.EOF
	}
	b.sent = true
	return copy(p, `{"jsonrpc"`), nil
}

// TestCORSAllowCredentials checks that AllowCredentials sends
// Access-Control-Allow-Credentials to listed origins, on preflights and
// responses, never by default, and that Validate refuses it without a list
// of origins.
func TestCORSAllowCredentials(t *testing.T) {
	t.Parallel()
	const app = "https://app.example"
	for _, c := range []struct {
		name   string
		opts   core.ServerOptions
		origin string
		status int
		want   string
	}{
		{"default", core.ServerOptions{AllowedOrigins: []string{app}}, app, http.StatusOK, ""},
		{"listed origin", core.ServerOptions{AllowedOrigins: []string{app}, AllowCredentials: true}, app, http.StatusOK, "true"},
		{"unlisted origin", core.ServerOptions{AllowedOrigins: []string{app}, AllowCredentials: true}, "https://evil.example", http.StatusForbidden, ""},
		{"no Origin", core.ServerOptions{AllowedOrigins: []string{app}, AllowCredentials: true}, "", http.StatusOK, ""},
	} {
		srv := newFixture(t, &c.opts)
		r := mreq(1, "server/discover", nil).withHeader("Origin", c.origin).do(t, srv)
		if r.Status != c.status {
			t.Errorf("%s: HTTP %d, want %d", c.name, r.Status, c.status)
		}
		if got := r.Header.Get("Access-Control-Allow-Credentials"); got != c.want {
			t.Errorf("%s: Access-Control-Allow-Credentials = %q, want %q", c.name, got, c.want)
		}
		if c.origin == "" || c.status != http.StatusOK {
			continue
		}
		rec := preflight(srv, "/mcp", c.origin, "content-type, authorization")
		if got := rec.Header().Get("Access-Control-Allow-Credentials"); got != c.want {
			t.Errorf("%s: preflight Access-Control-Allow-Credentials = %q, want %q", c.name, got, c.want)
		}
	}
	for name, o := range map[string]core.ServerOptions{
		"wildcard":   {AllowedOrigins: []string{app, "*"}, AllowCredentials: true},
		"no origins": {AllowCredentials: true},
		"empty list": {AllowedOrigins: []string{}, AllowCredentials: true},
	} {
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "AllowCredentials") {
			t.Errorf("%s: Validate = %v, want an error naming AllowCredentials", name, err)
		}
	}
}
