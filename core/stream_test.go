package core_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

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
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(r.body()))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.hdr {
		hr.Header[k] = append([]string(nil), v...)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		cancel()
		t.Fatal(err)
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
	sc := bufio.NewScanner(s.res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				s.events <- json.RawMessage(strings.Join(data, "\n"))
				data = nil
			}
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	s.done <- sc.Err()
	close(s.events)
}

// next returns the next event, decoded; it fails after timeout.
func (s *sseStream) next(timeout time.Duration) map[string]any {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatalf("stream ended, want another event")
		}
		if !json.Valid(ev) {
			s.t.Fatalf("event is not JSON: %q", ev)
		}
		return decode(s.t, ev).(map[string]any)
	case <-time.After(timeout):
		s.t.Fatalf("no event within %v", timeout)
	}
	return nil
}

// nextRaw returns the next event as raw JSON.
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

func (s *sseStream) close() {
	s.cancel()
	s.res.Body.Close()
}
