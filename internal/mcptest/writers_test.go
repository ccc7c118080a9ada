package mcptest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

func TestLogBuffer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var b mcptest.LogBuffer
		found := make(chan bool)
		go func() { found <- b.WaitFor(t.Context(), "ready") }()
		synctest.Wait()
		fmt.Fprintln(&b, "starting")
		synctest.Wait()
		select {
		case <-found:
			t.Fatal("WaitFor returned before the line")
		default:
		}
		fmt.Fprintln(&b, "ready")
		if !<-found {
			t.Fatal("WaitFor missed the line")
		}
		if b.String() != "starting\nready\n" {
			t.Fatalf("String %q", b.String())
		}
		if !b.WaitFor(t.Context(), "start") {
			t.Fatal("WaitFor of a line already there")
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		if b.WaitFor(ctx, "never") || time.Since(start) != time.Minute {
			t.Fatal("WaitFor did not give up when ctx ended")
		}
		go b.Close()
		if b.WaitFor(t.Context(), "never") {
			t.Fatal("WaitFor found a line after Close")
		}
	})
}

func TestLockedWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := &mcptest.LockedWriter{W: &buf}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				w.Write([]byte("x"))
			}
		})
	}
	wg.Wait()
	if buf.Len() != 800 {
		t.Fatalf("%d bytes, want 800", buf.Len())
	}
}

func TestDiscardWriter(t *testing.T) {
	t.Parallel()
	var w mcptest.DiscardWriter
	var _ http.Flusher = &w
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-A", "1")
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("body"))
		w.(http.Flusher).Flush()
	})
	h.ServeHTTP(&w, nil)
	if w.Status != http.StatusTeapot || w.Body.String() != "body" || w.Header().Get("X-A") != "1" {
		t.Fatalf("status %d, body %q, header %v", w.Status, w.Body.String(), w.Header())
	}
	w.Reset()
	if w.Status != 0 || w.Body.Len() != 0 || len(w.Header()) != 0 {
		t.Fatalf("after Reset: status %d, body %q, header %v", w.Status, w.Body.String(), w.Header())
	}
}
