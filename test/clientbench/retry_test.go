package clientbench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// refuseCalls answers the first n tools/call POSTs (every one when n < 0)
// with status and Retry-After retryAfter, before the server sees them, and
// counts the tools/call POSTs.
func refuseCalls(n int32, status int, retryAfter string, calls *atomic.Int32) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			if r.Method == http.MethodPost && strings.Contains(string(body), `"method":"tools/call"`) {
				if k := calls.Add(1); n < 0 || k <= n {
					w.Header().Set("Retry-After", retryAfter)
					http.Error(w, http.StatusText(status), status)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
}

// TestRetryGoSDK: in front of go-sdk servers (stateless, 2026-07-28; and
// stateful, in a legacy session), a tools/call refused with 503 or 429 and
// a Retry-After of 0 (delta-seconds) or a past HTTP-date is sent again at
// once and answered; one refused every time fails after DefaultMaxRetries
// retries with a *RetryLaterError.
func TestRetryGoSDK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		stateless bool
		mode      client.Mode
	}{{true, client.ModeAuto}, {false, client.ModeLegacy}} {
		for _, ref := range []struct {
			status     int
			retryAfter string
		}{{503, "0"}, {429, "Sat, 01 Jan 2000 00:00:00 GMT"}} {
			var calls atomic.Int32
			url := gosdkServer(t, tc.stateless, refuseCalls(2, ref.status, ref.retryAfter, &calls))
			c, err := client.Connect(ctx, url, &client.Options{Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.CallTool(ctx, "greet", map[string]any{"name": "Bob"}, nil)
			if err != nil || mcptest.Text(r) != "hi Bob" || calls.Load() != 3 {
				t.Errorf("stateless=%v %d: %v %v after %d tools/call", tc.stateless, ref.status, err, r, calls.Load())
			}
			c.Close()
		}
		var calls atomic.Int32
		url := gosdkServer(t, tc.stateless, refuseCalls(-1, 503, "0", &calls))
		c, err := client.Connect(ctx, url, &client.Options{Mode: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CallTool(ctx, "greet", map[string]any{"name": "Bob"}, nil)
		var re *client.RetryLaterError
		if !errors.As(err, &re) || re.Attempts != client.DefaultMaxRetries+1 || calls.Load() != client.DefaultMaxRetries+1 || re.StatusCode != 503 {
			t.Errorf("stateless=%v, always 503: %v after %d tools/call", tc.stateless, err, calls.Load())
		}
		c.Close()
	}
}
