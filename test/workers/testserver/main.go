//go:build js && wasm

// Command testserver is the Worker the adapter's tests run in workerd: the
// tools and the middleware below exercise streaming, cancellation, panics,
// exits and memory.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/adapters/workers"
	"github.com/mcpfn/mcpfn/core"
)

type countArgs struct {
	To int `json:"to"`
}

type none struct{}

type fetchArgs struct {
	URL string `json:"url"`
}

// Stats is what the stats tool returns.
type Stats struct {
	Instance  string `json:"instance"`
	Cancelled int64  `json:"cancelled"`
	HeapInuse uint64 `json:"heapInuse"`
	Sys       uint64 `json:"sys"`
}

var (
	instance  = newID()
	cancelled atomic.Int64
)

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func main() {
	srv := core.NewServer(core.Implementation{Name: "workers-test", Version: "1.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "count", Description: "Count with progress."},
		func(ctx context.Context, req *core.CallToolRequest, in countArgs) (string, error) {
			for i := 1; i <= in.To; i++ {
				req.NotifyProgress(ctx, float64(i), float64(in.To), "")
				select {
				case <-time.After(3 * time.Millisecond):
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			return fmt.Sprintf("counted to %d", in.To), nil
		})
	core.AddTool(srv, &core.Tool{Name: "wait", Description: "Stream one progress note, then wait for the client to go away."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			req.NotifyProgress(ctx, 0, 1, "waiting")
			<-ctx.Done()
			cancelled.Add(1)
			return "", ctx.Err()
		})
	core.AddTool(srv, &core.Tool{Name: "stats", Description: "This instance's id, cancellations seen and memory."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (Stats, error) {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return Stats{Instance: instance, Cancelled: cancelled.Load(), HeapInuse: m.HeapInuse, Sys: m.Sys}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "crash", Description: "Panic in a goroutine of its own: the Go instance ends."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			go func() { panic("crash: a goroutine panicked") }()
			<-ctx.Done()
			return "", ctx.Err()
		})
	core.AddTool(srv, &core.Tool{Name: "fetch", Description: "GET a URL through workers.Transport (1 KiB at most, no redirects)."},
		func(ctx context.Context, req *core.CallToolRequest, in fetchArgs) (string, error) {
			c := &http.Client{Transport: &workers.Transport{MaxResponseBytes: 1024},
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			hr, err := http.NewRequestWithContext(ctx, "GET", in.URL, nil)
			if err != nil {
				return "", err
			}
			resp, err := c.Do(hr)
			if err != nil {
				return "error: " + err.Error(), nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return fmt.Sprintf("%d %s", resp.StatusCode, b), nil
		})
	workers.Serve(srv, &workers.Options{Middleware: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Header.Get("X-Test") {
			case "panic":
				panic("the handler panicked")
			case "exit":
				os.Exit(3)
			}
			next.ServeHTTP(w, r)
		})
	}})
}
