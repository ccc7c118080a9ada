package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// LogBuffer is a bytes.Buffer safe for concurrent use, for capturing the
// logs of code under test that writes from several goroutines, or the
// output of a process. WaitFor waits for a line without polling. The zero
// value is ready to use.
type LogBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced by every Write and by Close
	closed  bool
}

// Write appends p to the buffer.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.b.Write(p)
	b.signal()
	return n, err
}

// Close records that nothing more will be written (the process's output
// ended), so that WaitFor stops waiting. Writes may still follow.
func (b *LogBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.signal()
	return nil
}

// signal wakes WaitFor; b.mu is held.
func (b *LogBuffer) signal() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// DefaultLogs routes slog.Default() to a text handler on a new LogBuffer
// until the test ends, for checking that code built without a Logger logs
// through the default logger. It replaces a process-wide value, so the
// test that calls it must not run in parallel.
func DefaultLogs(t testing.TB) *LogBuffer {
	logs := new(LogBuffer)
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return logs
}

// WaitFor reports whether s appears in the buffer before Close is called
// or ctx ends: bound ctx to turn a process that never writes s into a
// failure.
func (b *LogBuffer) WaitFor(ctx context.Context, s string) bool {
	for {
		b.mu.Lock()
		if strings.Contains(b.b.String(), s) {
			b.mu.Unlock()
			return true
		}
		if b.closed {
			b.mu.Unlock()
			return false
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// LockedWriter serialises the writes to W, for a writer shared by
// goroutines that is not safe for concurrent use (an *os.File is; a
// bytes.Buffer or a testing.T log adapter is not). The zero value needs W
// set before the first Write.
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

// Write writes p to W under the lock.
func (w *LockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.W.Write(p)
}

// DiscardWriter is a reusable http.ResponseWriter and http.Flusher that
// keeps only the status and the body, so that benchmarks measure the
// handler, not a recorder. Reset readies it for the next request. It is
// not safe for concurrent use. The zero value is ready to use.
type DiscardWriter struct {
	// Status is the status WriteHeader was called with; 0 when it was not
	// (an implicit 200).
	Status int
	// Body holds what was written.
	Body bytes.Buffer

	h http.Header
}

// Header returns the response header map.
func (w *DiscardWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}

// WriteHeader records the status.
func (w *DiscardWriter) WriteHeader(code int) { w.Status = code }

// Write appends p to Body.
func (w *DiscardWriter) Write(p []byte) (int, error) { return w.Body.Write(p) }

// Flush does nothing.
func (w *DiscardWriter) Flush() {}

// Reset clears the header, the status and the body, keeping their memory.
func (w *DiscardWriter) Reset() {
	clear(w.h)
	w.Status = 0
	w.Body.Reset()
}

// Dribble answers 200 with a JSON content type and then writes one space
// every interval, n times, flushing each: a body that keeps arriving but
// never ends in time. It reports whether all n were written; false means
// the client went away first.
func Dribble(w http.ResponseWriter, r *http.Request, n int, interval time.Duration) bool {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	for range n {
		if _, err := w.Write([]byte(" ")); err != nil {
			return false
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return false
		case <-time.After(interval):
		}
	}
	return true
}

// WriteJSON answers status with v encoded as a JSON body, as a metadata,
// token or registration endpoint of a test's authorization server does.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
