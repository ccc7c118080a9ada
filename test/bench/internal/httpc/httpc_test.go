package httpc

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func read(t *testing.T, raw string) (Response, bool, error) {
	t.Helper()
	var buf []byte
	return ReadResponse(bufio.NewReader(strings.NewReader(raw)), &buf)
}

func TestReadResponseContentLength(t *testing.T) {
	t.Parallel()
	r, keep, err := read(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nmcp-session-id: abc\r\nContent-Length: 5\r\n\r\nhello")
	if err != nil || !keep || r.Status != 200 || string(r.Body) != "hello" || r.ContentType != "application/json" || r.SessionID != "abc" {
		t.Fatalf("%+v keep=%v err=%v", r, keep, err)
	}
}

func TestReadResponseChunked(t *testing.T) {
	t.Parallel()
	raw := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"6\r\ndata: \r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n"
	r, keep, err := read(t, raw)
	if err != nil || !keep || string(r.Body) != "data: abc" {
		t.Fatalf("%q keep=%v err=%v", r.Body, keep, err)
	}
}

func TestReadResponseUntilClose(t *testing.T) {
	t.Parallel()
	r, keep, err := read(t, "HTTP/1.0 200 OK\r\n\r\nall of it")
	if err != nil || keep || string(r.Body) != "all of it" {
		t.Fatalf("%q keep=%v err=%v", r.Body, keep, err)
	}
}

func TestReadResponseNoBody(t *testing.T) {
	t.Parallel()
	r, keep, err := read(t, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	if err != nil || keep || r.Status != 202 || len(r.Body) != 0 {
		t.Fatalf("%+v keep=%v err=%v", r, keep, err)
	}
	r, keep, err = read(t, "HTTP/1.1 204 No Content\r\n\r\n")
	if err != nil || !keep || r.Status != 204 {
		t.Fatalf("%+v keep=%v err=%v", r, keep, err)
	}
}

func TestReadResponseErrors(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"garbage\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	} {
		if _, _, err := read(t, raw); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err %v, want ErrMalformed", raw, err)
		}
	}
	for _, raw := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nContent-Le",
	} {
		if _, _, err := read(t, raw); !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			t.Errorf("%q: err %v, want EOF", raw, err)
		}
	}
}

func TestDo(t *testing.T) {
	t.Parallel()
	var conns, reqs atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/mcp" || r.Header.Get("X-Test") != "1" ||
			r.Header.Get("Content-Type") != "application/json" || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if string(body) == "stream" { // chunked, flushed in pieces
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: a\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: b\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	c := New(strings.TrimPrefix(srv.URL, "http://"), "/mcp", 5*time.Second)
	defer c.Close()
	for i := range 3 {
		r, err := c.Do("X-Test: 1\r\n", []byte(`{"n":1}`))
		if err != nil || r.Status != 200 || string(r.Body) != `{"n":1}` {
			t.Fatalf("request %d: %+v %v", i, r, err)
		}
	}
	first := c.c
	r, err := c.Do("X-Test: 1\r\n", []byte("stream"))
	if err != nil || string(r.Body) != "data: a\n\ndata: b\n\n" || r.ContentType != "text/event-stream" {
		t.Fatalf("stream: %+v %v", r, err)
	}
	if c.c != first {
		t.Error("connection was not reused")
	}
	r, err = c.Do("", []byte("x"))
	if err != nil || r.Status != 400 {
		t.Fatalf("bad request: %+v %v", r, err)
	}
	if reqs.Load() != 5 || conns.Load() != 1 {
		t.Errorf("reqs %d conns %d, want 5 and 1", reqs.Load(), conns.Load())
	}
}

func TestDoRedials(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	c := New(strings.TrimPrefix(srv.URL, "http://"), "/mcp", 5*time.Second)
	defer c.Close()
	for i := range 3 {
		r, err := c.Do("", nil)
		if err != nil || string(r.Body) != "ok" {
			t.Fatalf("request %d: %+v %v", i, r, err)
		}
		if c.c != nil {
			t.Fatalf("request %d: connection kept after Connection: close", i)
		}
	}
}
