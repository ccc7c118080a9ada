package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// core's tests read SSE with internal/mcptest's reader (text/event-stream,
// WHATWG HTML "Server-sent events"): whole bodies (parseSSE,
// readAllEvents) and live streams (sseStream) go through readSSE.

// sseEvent is one event of an SSE response: its id ("" for none) and its
// data, the data lines joined with "\n".
type sseEvent struct{ id, data string }

// readSSE calls fn for every event of r that carries data, in order, until
// r ends or fn fails. strict refuses a line that is no SSE field or comment
// (the server writes none).
func readSSE(r io.Reader, strict bool, fn func(sseEvent) error) error {
	return mcptest.EachEvent(r, strict, func(ev mcptest.Event) error {
		return fn(sseEvent{id: ev.ID, data: ev.Data})
	})
}

// parseSSE returns the data of each event of a whole SSE body; every data
// must be valid JSON.
func parseSSE(body []byte) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := readSSE(bytes.NewReader(body), true, func(ev sseEvent) error {
		if !json.Valid([]byte(ev.data)) {
			return fmt.Errorf("event data is not JSON: %q", ev.data)
		}
		out = append(out, json.RawMessage(ev.data))
		return nil
	})
	return out, err
}

// readAllEvents reads the whole SSE body of a response, which must be a
// 200 event stream.
func readAllEvents(t *testing.T, res *http.Response) []sseEvent {
	t.Helper()
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("HTTP %d %s, want an event stream", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var out []sseEvent
	if err := readSSE(res.Body, false, func(ev sseEvent) error { out = append(out, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// sessionRequest sends method (POST with body, or GET with a nil body) to
// the legacy session c holds, resuming its stream after lastEventID when
// that is set.
func sessionRequest(ctx context.Context, c *mcptest.Client, method string, body []byte, lastEventID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.SessionID)
	req.Header.Set("Mcp-Protocol-Version", c.Version)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return http.DefaultClient.Do(req)
}

// sessionEvents sends method to the legacy session c holds, as
// sessionRequest does, and returns every event of the answer, which must
// be a 200 event stream.
func sessionEvents(ctx context.Context, t *testing.T, c *mcptest.Client, method string, body []byte, lastEventID string) []sseEvent {
	t.Helper()
	res, err := sessionRequest(ctx, c, method, body, lastEventID)
	if err != nil {
		t.Fatal(err)
	}
	return readAllEvents(t, res)
}

// sseStream reads the events of a live SSE response as they arrive.
type sseStream struct {
	t      testing.TB
	res    *http.Response
	cancel context.CancelFunc
	events chan json.RawMessage
	done   chan error
}

// openStream posts r to url and returns the open response stream. The
// response must be 200 text/event-stream.
func openStream(t testing.TB, url string, r *testReq) *sseStream {
	t.Helper()
	return openStreamVia(t, http.DefaultClient, url, r)
}

// openStreamVia is openStream through c.
func openStreamVia(t testing.TB, c *http.Client, url string, r *testReq) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(r.body()))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	for k, v := range r.hdr {
		hr.Header[k] = append([]string(nil), v...)
	}
	res, err := c.Do(hr)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return newSSEStream(t, res, cancel)
}

// newSSEStream reads the live response res, which must be 200
// text/event-stream; cancel (or nil) ends its request.
func newSSEStream(t testing.TB, res *http.Response, cancel context.CancelFunc) *sseStream {
	t.Helper()
	if cancel == nil {
		cancel = func() {}
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		t.Fatalf("HTTP %d %s, want a 200 event stream: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	s := &sseStream{t: t, res: res, cancel: cancel, events: make(chan json.RawMessage, 64), done: make(chan error, 1)}
	go s.read()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) read() {
	s.done <- readSSE(s.res.Body, false, func(ev sseEvent) error {
		s.events <- json.RawMessage(ev.data)
		return nil
	})
	close(s.events)
}

// next returns the next event, decoded; it fails after timeout.
func (s *sseStream) next(timeout time.Duration) map[string]any {
	s.t.Helper()
	ev := s.nextRaw(timeout)
	if !json.Valid(ev) {
		s.t.Fatalf("event is not JSON: %q", ev)
	}
	return decode(s.t, ev).(map[string]any)
}

// nextRaw returns the next event as raw JSON; it fails after timeout.
func (s *sseStream) nextRaw(timeout time.Duration) json.RawMessage {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatalf("stream ended, want another event")
		}
		return ev
	case <-time.After(timeout):
		s.t.Fatalf("no event within %v", timeout)
	}
	return nil
}

// ends checks that the stream ends within timeout without further events.
func (s *sseStream) ends(timeout time.Duration) {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			s.t.Fatalf("event after the end: %s", ev)
		}
	case <-time.After(timeout):
		s.t.Fatalf("stream still open after %v", timeout)
	}
}

// closes checks that the stream ends within timeout, whatever events come
// before its end.
func (s *sseStream) closes(timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

func (s *sseStream) close() {
	s.cancel()
	s.res.Body.Close()
}
