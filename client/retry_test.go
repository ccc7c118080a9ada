package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
)

// refusal is one answer of the gate in front of the server: the status
// and headers it refuses a tools/call with.
type refusal struct {
	status int
	header func(now time.Time) http.Header
}

// gate serves a real core.Server (one tool, echo, which returns its
// argument) behind an http.Handler that refuses the first tools/call POSTs
// with refusals, one each, before letting them through; it records when
// each tools/call arrived (the bubble's clock) and its body.
type gate struct {
	mu       sync.Mutex
	refusals []refusal
	arrivals []time.Time
	bodies   []string
}

func (g *gate) handler(t *testing.T, opts *core.ServerOptions) http.Handler {
	if opts == nil {
		opts = &core.ServerOptions{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	srv := core.NewServer(core.Implementation{Name: "gated", Version: "1"}, opts)
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return "echo:" + in.S, nil
	})
	h := nethttp.NewHandler(srv, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if !strings.Contains(string(body), `"method":"tools/call"`) {
			h.ServeHTTP(w, r)
			return
		}
		g.mu.Lock()
		g.arrivals = append(g.arrivals, time.Now())
		g.bodies = append(g.bodies, string(body))
		var ref *refusal
		if len(g.refusals) > 0 {
			ref = &g.refusals[0]
			g.refusals = g.refusals[1:]
		}
		g.mu.Unlock()
		if ref == nil {
			h.ServeHTTP(w, r)
			return
		}
		if ref.header != nil {
			for k, vs := range ref.header(time.Now()) {
				w.Header()[k] = vs
			}
		}
		http.Error(w, http.StatusText(ref.status), ref.status)
	})
}

// gaps returns the time between each tools/call and the one before.
func (g *gate) gaps() []time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(g.arrivals); i++ {
		out = append(out, g.arrivals[i].Sub(g.arrivals[i-1]))
	}
	return out
}

func retryAfterHeader(v string) func(time.Time) http.Header {
	return func(time.Time) http.Header { return http.Header{"Retry-After": {v}} }
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRetryAfter: a tools/call refused with 503 or 429 is sent again, with
// the same body, after the wait the response's Retry-After asks for, in
// either form (delta-seconds; an HTTP-date, read against the response's
// Date so that a server clock an hour ahead changes nothing), or after 1 s
// then 2 s without one; the call then succeeds, in both eras. The waits
// are the bubble's clock: exact, no real sleeping.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		refusals []refusal
		gaps     []time.Duration
	}{
		"503 delta-seconds": {
			refusals: []refusal{{503, retryAfterHeader("3")}},
			gaps:     []time.Duration{3 * time.Second},
		},
		"429 HTTP-date": {
			refusals: []refusal{{429, func(now time.Time) http.Header {
				return http.Header{"Retry-After": {now.Add(5 * time.Second).UTC().Format(http.TimeFormat)}}
			}}},
			gaps: []time.Duration{5 * time.Second},
		},
		"503 HTTP-date, server clock an hour ahead": {
			refusals: []refusal{{503, func(now time.Time) http.Header {
				skewed := now.Add(time.Hour)
				return http.Header{"Date": {skewed.UTC().Format(http.TimeFormat)}, "Retry-After": {skewed.Add(4 * time.Second).UTC().Format(http.TimeFormat)}}
			}}},
			gaps: []time.Duration{4 * time.Second},
		},
		"503 HTTP-date in the past": {
			refusals: []refusal{{503, retryAfterHeader("Sat, 01 Jan 2000 00:00:00 GMT")}},
			gaps:     []time.Duration{0},
		},
		"no Retry-After: 1 s, then 2 s": {
			refusals: []refusal{{503, nil}, {429, nil}},
			gaps:     []time.Duration{time.Second, 2 * time.Second},
		},
		"unreadable Retry-After: as none": {
			refusals: []refusal{{503, retryAfterHeader("soon")}},
			gaps:     []time.Duration{time.Second},
		},
	}
	for name, tc := range cases {
		for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
			t.Run(name+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					g := &gate{refusals: tc.refusals}
					hc := mcptest.Serve(t, g.handler(t, nil))
					c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &client.Options{Mode: mode, HTTPClient: hc, Logger: slog.New(slog.DiscardHandler)})
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					r, err := c.CallTool(t.Context(), "echo", json.RawMessage(`{"s":"hi"}`), nil)
					if err != nil {
						t.Fatalf("CallTool: %v", err)
					}
					if len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != "echo:hi" {
						t.Fatalf("result %+v", r)
					}
					if got := g.gaps(); !equalDurations(got, tc.gaps) {
						t.Errorf("the retries came after %v, want %v", got, tc.gaps)
					}
					for i, b := range g.bodies {
						if b != g.bodies[0] {
							t.Errorf("attempt %d sent %s, the first %s", i+1, b, g.bodies[0])
						}
					}
				})
			})
		}
	}
}

// TestRetryGivesUp: a server that keeps refusing gets MaxRetries retries
// (2 by default), then the call fails with a *RetryLaterError matching
// ErrRetryLater that gives the last Retry-After and wraps the server's
// -31429 (here from a real core middleware: LimitExceededError, HTTP 429);
// a Retry-After beyond MaxRetryWait, or beyond the call's deadline, fails
// at once without waiting; a negative MaxRetries sends once; a context
// cancelled during the wait ends the call with its error.
func TestRetryGivesUp(t *testing.T) {
	t.Parallel()
	limited := func(calls *atomic.Int32) *core.ServerOptions {
		return &core.ServerOptions{Middleware: []core.Middleware{func(next core.Handler) core.Handler {
			return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
				if c.Method == "tools/call" {
					calls.Add(1)
					return nil, core.LimitExceededError("too_many_calls", 1, 2*time.Second, "Too many calls")
				}
				return next(ctx, c)
			}
		}}}
	}
	connect := func(t *testing.T, h http.Handler, o client.Options) *client.Conn {
		o.Mode, o.HTTPClient, o.Logger = client.ModeModern, mcptest.Serve(t, h), slog.New(slog.DiscardHandler)
		c, err := client.Connect(t.Context(), "http://mcp.test/mcp", &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	call := func(ctx context.Context, c *client.Conn) (time.Duration, *client.RetryLaterError, error) {
		start := time.Now()
		_, err := c.CallTool(ctx, "echo", json.RawMessage(`{"s":"hi"}`), nil)
		var re *client.RetryLaterError
		errors.As(err, &re)
		return time.Since(start), re, err
	}

	t.Run("retries run out", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			var calls atomic.Int32
			c := connect(t, (&gate{}).handler(t, limited(&calls)), client.Options{})
			took, re, err := call(t.Context(), c)
			var me *mcp.Error
			if !errors.Is(err, client.ErrRetryLater) || re == nil || !errors.As(err, &me) || me.Code != mcp.CodeLimitExceeded {
				t.Fatalf("err = %v, want a RetryLaterError wrapping -31429", err)
			}
			if calls.Load() != 3 || re.Attempts != 3 || re.StatusCode != 429 || re.Method != "tools/call" ||
				re.RetryAfter != 2*time.Second || !re.At.Equal(time.Now().Add(2*time.Second)) || took != 4*time.Second {
				t.Errorf("%d calls in %v; %+v", calls.Load(), took, re)
			}
			if msg := err.Error(); !strings.Contains(msg, "HTTP 429 Too Many Requests") || !strings.Contains(msg, "Too many calls") ||
				!strings.Contains(msg, "gave up after 3 attempts") || !strings.Contains(msg, "retry in 2s (at 2000-01-01T00:00:06Z)") {
				t.Errorf("message %q", msg)
			}
		})
	})
	t.Run("no retries", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			var calls atomic.Int32
			c := connect(t, (&gate{}).handler(t, limited(&calls)), client.Options{MaxRetries: -1})
			took, re, err := call(t.Context(), c)
			if re == nil || calls.Load() != 1 || re.Attempts != 1 || took != 0 || strings.Contains(err.Error(), "gave up") {
				t.Errorf("MaxRetries -1: %d calls in %v: %v", calls.Load(), took, err)
			}
		})
	})
	t.Run("more retries", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			var calls atomic.Int32
			c := connect(t, (&gate{}).handler(t, limited(&calls)), client.Options{MaxRetries: 4})
			if took, re, _ := call(t.Context(), c); re == nil || calls.Load() != 5 || took != 8*time.Second {
				t.Errorf("MaxRetries 4: %d calls in %v", calls.Load(), took)
			}
		})
	})
	t.Run("Retry-After beyond MaxRetryWait", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			for _, tc := range []struct {
				header string
				opts   client.Options
				wait   time.Duration
			}{
				{"3600", client.Options{}, time.Hour},
				{"99999999999999999999", client.Options{}, 1<<63 - 1},
				{"20", client.Options{MaxRetryWait: 15 * time.Second}, 20 * time.Second},
				{"1", client.Options{MaxRetryWait: -1}, time.Second},
			} {
				g := &gate{refusals: []refusal{{503, retryAfterHeader(tc.header)}}}
				c := connect(t, g.handler(t, nil), tc.opts)
				took, re, err := call(t.Context(), c)
				if re == nil || took != 0 || len(g.arrivals) != 1 || re.RetryAfter != tc.wait || re.Attempts != 1 || re.StatusCode != 503 {
					t.Errorf("Retry-After %s: %d tools/call in %v: %+v", tc.header, len(g.arrivals), took, err)
					continue
				}
				var he *client.HTTPError
				if !errors.As(err, &he) || he.StatusCode != 503 || !strings.Contains(err.Error(), "longer than the client waits") {
					t.Errorf("Retry-After %s: %v", tc.header, err)
				}
			}
			// With MaxRetryWait -1, a response without Retry-After is
			// retried at once.
			g := &gate{refusals: []refusal{{503, nil}}}
			c := connect(t, g.handler(t, nil), client.Options{MaxRetryWait: -1})
			if took, _, err := call(t.Context(), c); err != nil || took != 0 || len(g.arrivals) != 2 {
				t.Errorf("MaxRetryWait -1 without Retry-After: %v after %v, %d tools/call", err, took, len(g.arrivals))
			}
		})
	})
	t.Run("Retry-After beyond the deadline", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			g := &gate{refusals: []refusal{{503, retryAfterHeader("5")}}}
			c := connect(t, g.handler(t, nil), client.Options{})
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			took, re, err := call(ctx, c)
			if re == nil || took != 0 || len(g.arrivals) != 1 || !strings.Contains(err.Error(), "later than the call's deadline") {
				t.Errorf("%d tools/call in %v: %v", len(g.arrivals), took, err)
			}
		})
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			g := &gate{refusals: []refusal{{503, retryAfterHeader("5")}}}
			c := connect(t, g.handler(t, nil), client.Options{})
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(2*time.Second, cancel)
			took, _, err := call(ctx, c)
			if !errors.Is(err, context.Canceled) || took != 2*time.Second || len(g.arrivals) != 1 {
				t.Errorf("%d tools/call in %v: %v", len(g.arrivals), took, err)
			}
		})
	})
}
