//go:build !(js && wasm)

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
)

// counter is an http.Handler wrapper that counts the JSON-RPC requests the
// server receives, by method and by Authorization header: the server-side
// view of what the client's cache saves.
type counter struct {
	next http.Handler
	mu   sync.Mutex
	n    map[[2]string]int // {method, authorization} → requests
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(b, &m)
		c.mu.Lock()
		c.n[[2]string{m.Method, r.Header.Get("Authorization")}]++
		c.mu.Unlock()
	}
	c.next.ServeHTTP(w, r)
}

// count returns the requests for method, all tokens together.
func (c *counter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.n {
		if k[0] == method {
			n += v
		}
	}
	return n
}

// countFor returns the requests for method sent with token.
func (c *counter) countFor(method, token string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[[2]string{method, "Bearer " + token}]
}

// cacheHints are the hints the cache test gives the fixture: tools/list and
// resources/list private (per token), prompts/list and resources/read
// public. The conformance suite runs the fixture without hints; the test
// builds the same server (newServer) with them.
var cacheHints = map[string]core.CacheHint{
	"tools/list":     {TTL: time.Hour, Scope: core.CacheScopePrivate},
	"resources/list": {TTL: time.Hour, Scope: core.CacheScopePrivate},
	"prompts/list":   {TTL: time.Hour, Scope: core.CacheScopePublic},
	"resources/read": {TTL: time.Hour, Scope: core.CacheScopePublic},
}

// adapters serve the fixture as each adapter a test reaches on loopback
// does: net/http (streaming and buffered, as the conformance scripts run
// it), the Cloud Functions adapter and the Lambda adapter behind a
// buffered Function URL.
var adapters = []struct {
	name    string
	handler func(*core.Server) http.Handler
}{
	{"nethttp", func(s *core.Server) http.Handler { return nethttp.NewHandler(s, nil) }},
	{"nethttp-buffered", func(s *core.Server) http.Handler {
		return nethttp.NewHandler(s, &nethttp.Options{Middleware: buffered})
	}},
	{"gcf", func(s *core.Server) http.Handler { return http.HandlerFunc(gcf.Handler(s)) }},
	{"lambda-url-buffered", func(s *core.Server) http.Handler { return functionURL(lambda.Wrap(s, nil)) }},
	{"lambda-url-streaming", func(s *core.Server) http.Handler {
		return functionURL(lambda.Wrap(s, &lambda.Options{Streaming: true}))
	}},
}

// functionURL is a minimal Function URL front for a Lambda handler
// (adapters/lambda.Wrap) in process: the request becomes a payload 2.0
// event with a lambda-url domain; a buffered response is written back
// whole, a streamed one (prelude, 8 NUL bytes, body) as it arrives.
// (test/lambdafront is the full front door, with the emulator.)
func functionURL(fn func(context.Context, json.RawMessage) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		headers := map[string]string{}
		for k, vs := range r.Header {
			headers[strings.ToLower(k)] = strings.Join(vs, ",")
		}
		headers["host"] = r.Host
		ev, _ := json.Marshal(map[string]any{
			"version": "2.0", "rawPath": r.URL.Path, "rawQueryString": r.URL.RawQuery, "headers": headers,
			"requestContext": map[string]any{"domainName": "abc.lambda-url.us-east-1.on.aws",
				"http": map[string]any{"method": r.Method, "path": r.URL.Path, "sourceIp": "127.0.0.1"}},
			"body": base64.StdEncoding.EncodeToString(body), "isBase64Encoded": true,
		})
		res, err := fn(r.Context(), ev)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if rc, ok := res.(io.ReadCloser); ok {
			defer rc.Close()
			streamed(w, rc)
			return
		}
		b, _ := json.Marshal(res)
		var out struct {
			StatusCode      int               `json:"statusCode"`
			Headers         map[string]string `json:"headers"`
			Cookies         []string          `json:"cookies"`
			Body            string            `json:"body"`
			IsBase64Encoded bool              `json:"isBase64Encoded"`
		}
		if err := json.Unmarshal(b, &out); err != nil || out.StatusCode == 0 {
			http.Error(w, "not a buffered Function URL response", http.StatusBadGateway)
			return
		}
		for k, v := range out.Headers {
			w.Header().Set(k, v)
		}
		payload := []byte(out.Body)
		if out.IsBase64Encoded {
			payload, _ = base64.StdEncoding.DecodeString(out.Body)
		}
		w.WriteHeader(out.StatusCode)
		w.Write(payload)
	})
}

// streamed writes a streamed Function URL response to w, flushing each
// chunk of the body.
func streamed(w http.ResponseWriter, body io.Reader) {
	br := bufio.NewReader(body)
	prelude, err := br.ReadBytes(0)
	var nul [7]byte
	if err == nil {
		_, err = io.ReadFull(br, nul[:])
	}
	var p struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
	}
	if err != nil || nul != [7]byte{} || json.Unmarshal(prelude[:len(prelude)-1], &p) != nil || p.StatusCode == 0 {
		http.Error(w, "bad streamed response", http.StatusBadGateway)
		return
	}
	for k, v := range p.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(p.StatusCode)
	rc := http.NewResponseController(w)
	rc.Flush() // the headers leave now, as a Function URL sends them
	buf := make([]byte, 32<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// switchToken is a TokenSource whose token the test changes.
type switchToken struct{ v atomic.Pointer[string] }

func (s *switchToken) set(tok string) { s.v.Store(&tok) }

func (s *switchToken) Token(context.Context) (string, error) { return *s.v.Load(), nil }

// TestClientCache runs the client, in each mode, against examples/everything
// behind each adapter, and counts on the server side what its result cache
// (2026-07-28 server/utilities/caching) saves: a second list within ttlMs
// costs no request; CacheRefresh and CacheBypass reach the server; private
// results belong to the token source (a renewed token keeps them), a call
// with its own Authorization bypasses the cache. Legacy sessions
// carry no cache hints, so there every call reaches the server.
func TestClientCache(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the fixture on loopback")
	}
	for _, ad := range adapters {
		for _, mode := range []client.Mode{client.ModeAuto, client.ModeModern, client.ModeLegacy} {
			t.Run(ad.name+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				srv := newServer(&core.ServerOptions{CacheHints: cacheHints})
				defer srv.Close()
				cnt := &counter{next: ad.handler(srv), n: map[[2]string]int{}}
				hs := httptest.NewServer(cnt)
				defer hs.Close()
				url := hs.URL + nethttp.DefaultPath
				if ad.name == "gcf" {
					url = hs.URL + "/"
				}

				tok := &switchToken{}
				tok.set("token-a")
				c, err := client.Connect(ctx, url, &client.Options{Mode: mode, TokenSource: tok})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				cached := c.Modern()
				if cached != (mode != client.ModeLegacy) {
					t.Fatalf("mode %v: modern=%v", mode, cached)
				}
				// want is the server-side count after a call that the
				// cache answers (when the era has cache hints).
				hit := func(before int) int {
					if cached {
						return before
					}
					return before + 1
				}

				// Lists: the second within ttl costs nothing.
				type list struct {
					method string
					call   func(*client.CallOptions) error
				}
				lists := []list{
					{"tools/list", func(o *client.CallOptions) error {
						tools, err := c.ListTools(ctx, o)
						if err == nil && len(tools) == 0 {
							t.Error("no tools")
						}
						return err
					}},
					{"prompts/list", func(o *client.CallOptions) error {
						r, err := c.ListPrompts(ctx, nil, o)
						if err == nil && len(r.Prompts) == 0 {
							t.Error("no prompts")
						}
						return err
					}},
					{"resources/list", func(o *client.CallOptions) error {
						r, err := c.ListResources(ctx, nil, o)
						if err == nil && len(r.Resources) == 0 {
							t.Error("no resources")
						}
						return err
					}},
					{"resources/read", func(o *client.CallOptions) error {
						r, err := c.ReadResource(ctx, "test://static-text", o)
						if err == nil && (len(r.Contents) != 1 || r.Contents[0].Text == "") {
							t.Errorf("read: %+v", r)
						}
						return err
					}},
				}
				for _, l := range lists {
					must := func(err error) {
						t.Helper()
						if err != nil {
							t.Fatalf("%s: %v", l.method, err)
						}
					}
					must(l.call(nil))
					if n := cnt.count(l.method); n != 1 {
						t.Fatalf("%s: first call: %d requests on the server, want 1", l.method, n)
					}
					must(l.call(nil))
					if n, want := cnt.count(l.method), hit(1); n != want {
						t.Fatalf("%s: second call within ttl: %d requests, want %d", l.method, n, want)
					}
					must(l.call(&client.CallOptions{Cache: client.CacheRefresh}))
					if n, want := cnt.count(l.method), hit(1)+1; n != want {
						t.Fatalf("%s: CacheRefresh: %d requests, want %d", l.method, n, want)
					}
					// The refreshed result is stored: the next call is a hit.
					must(l.call(nil))
					if n, want := cnt.count(l.method), hit(hit(1)+1); n != want {
						t.Fatalf("%s: after refresh: %d requests, want %d", l.method, n, want)
					}
					before := cnt.count(l.method)
					must(l.call(&client.CallOptions{Cache: client.CacheBypass}))
					if n := cnt.count(l.method); n != before+1 {
						t.Fatalf("%s: CacheBypass: %d requests, want %d", l.method, n, before+1)
					}
				}

				// A renewed token of the same source is the same
				// credential: its private results stay cached. A call
				// with a credential of its own bypasses the cache.
				tok.set("token-b")
				for _, l := range lists {
					before := cnt.count(l.method)
					if err := l.call(nil); err != nil {
						t.Fatalf("%s with token-b: %v", l.method, err)
					}
					if n, want := cnt.count(l.method), hit(before); n != want {
						t.Fatalf("%s with a renewed token: %d requests, want %d", l.method, n, want)
					}
					before = cnt.count(l.method)
					if err := l.call(&client.CallOptions{Token: "token-c"}); err != nil {
						t.Fatalf("%s with its own token: %v", l.method, err)
					}
					if n := cnt.count(l.method); n != before+1 || cnt.countFor(l.method, "token-c") != 1 {
						t.Fatalf("%s with its own token: %d requests (%d with token-c), want %d (1)", l.method, n, cnt.countFor(l.method, "token-c"), before+1)
					}
				}
			})
		}
	}
}

// TestClientCachePerToken: two clients with static tokens each fill their
// own cache; neither is served the other's private results, and each
// repeats its lists for free.
func TestClientCachePerToken(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the fixture on loopback")
	}
	ctx := context.Background()
	srv := newServer(&core.ServerOptions{CacheHints: cacheHints})
	defer srv.Close()
	cnt := &counter{next: nethttp.NewHandler(srv, nil), n: map[[2]string]int{}}
	hs := httptest.NewServer(cnt)
	defer hs.Close()
	var conns []*client.Conn
	for _, tok := range []string{"alice", "bob"} {
		c, err := client.Connect(ctx, hs.URL+nethttp.DefaultPath, &client.Options{Mode: client.ModeModern, TokenSource: client.StaticToken(tok)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for round := range 2 {
		for i, tok := range []string{"alice", "bob"} {
			if _, err := conns[i].ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if n := cnt.countFor("tools/list", tok); n != 1 {
				t.Fatalf("round %d: %d tools/list with %s, want 1", round, n, tok)
			}
		}
	}
}
