package mcptest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcpfn/mcpfn/mcptest"
)

// do sends req through Transport(h).
func do(t *testing.T, h http.HandlerFunc, req *http.Request) *http.Response {
	t.Helper()
	resp, err := mcptest.Transport(h).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServerRequest: the handler sees the request as net/http's server
// makes it.
func TestServerRequest(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		url, local, remoteHost string
		tls                    bool
	}{
		"loopback":      {"http://127.0.0.1/mcp?x=1", "127.0.0.1:80", "127.0.0.1", false},
		"localhost":     {"http://localhost:8080/mcp?x=1", "127.0.0.1:8080", "127.0.0.1", false},
		"ipv6 loopback": {"http://[::1]:9000/mcp?x=1", "[::1]:9000", "::1", false},
		"a name":        {"https://mcp.example.com/mcp?x=1", "192.0.2.1:443", "192.0.2.2", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got *http.Request
			var local net.Addr
			var body string
			req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(`{"a":1}`))
			req.Header.Set("Mcp-Method", "tools/call")
			resp := do(t, func(w http.ResponseWriter, r *http.Request) {
				got, local = r, r.Context().Value(http.LocalAddrContextKey).(net.Addr)
				b, _ := io.ReadAll(r.Body)
				body = string(b)
			}, req)
			readAll(t, resp.Body)
			u := req.URL
			if got.Host != u.Host || got.URL.String() != "/mcp?x=1" || got.RequestURI != "/mcp?x=1" || got.Method != http.MethodPost ||
				got.Proto != "HTTP/1.1" || got.ContentLength != 7 || body != `{"a":1}` || got.Header.Get("Mcp-Method") != "tools/call" ||
				got.Header.Get("Content-Length") != "7" || got.Header.Get("User-Agent") == "" {
				t.Errorf("request %+v, body %q", got, body)
			}
			if local.String() != tc.local {
				t.Errorf("local address %s, want %s", local, tc.local)
			}
			if host, _, err := net.SplitHostPort(got.RemoteAddr); err != nil || host != tc.remoteHost {
				t.Errorf("remote address %q, want host %s", got.RemoteAddr, tc.remoteHost)
			}
			if (got.TLS != nil) != tc.tls || (resp.TLS != nil) != tc.tls {
				t.Errorf("TLS %v/%v, want %v", got.TLS, resp.TLS, tc.tls)
			}
		})
	}
}

// TestResponseWhole: a response written whole within the buffer gets a
// Content-Length, its type sniffed when the handler set none, and its
// status; a body the status forbids is refused.
func TestResponseWhole(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodGet, mcptest.DefaultURL, nil)
	resp := do(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "1")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "<html>hello</html>")
		w.Header().Set("X-Late", "1") // after the headers were written: not sent
	}, req)
	if resp.StatusCode != http.StatusTeapot || resp.Status != "418 I'm a teapot" || resp.ContentLength != 18 ||
		resp.Header.Get("Content-Length") != "18" || resp.Header.Get("X-Test") != "1" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || readAll(t, resp.Body) != "<html>hello</html>" {
		t.Errorf("response %+v", resp)
	}

	var werr error
	resp = do(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		_, werr = w.Write([]byte("x"))
	}, req)
	if resp.StatusCode != http.StatusNoContent || readAll(t, resp.Body) != "" || !errors.Is(werr, http.ErrBodyNotAllowed) {
		t.Errorf("204: %d, write error %v", resp.StatusCode, werr)
	}
}

// TestResponseStreams: RoundTrip returns at the first flush, and each
// flush's bytes reach the client while the handler runs.
func TestResponseStreams(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	req, _ := http.NewRequest(http.MethodGet, mcptest.DefaultURL, nil)
	resp := do(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{"one", "two"} {
			io.WriteString(w, "data: "+ev+"\n\n")
			w.(http.Flusher).Flush()
			<-next // the client read the event
		}
	}, req)
	if resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
		t.Errorf("a streamed response has a length: %d", resp.ContentLength)
	}
	buf := make([]byte, 64)
	for _, want := range []string{"data: one\n\n", "data: two\n\n"} {
		n, err := io.ReadAtLeast(resp.Body, buf, len(want))
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("read %q, %v; want %q", buf[:n], err, want)
		}
		next <- struct{}{}
	}
	if rest := readAll(t, resp.Body); rest != "" {
		t.Errorf("after the events: %q", rest)
	}
}

// TestPipeBound: a handler writing to a client that does not read blocks
// once PipeBytes (and net/http's buffer) wait; closing the body fails its
// write and cancels its context.
func TestPipeBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var written atomic.Int64
		ended := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			chunk := bytes.Repeat([]byte("x"), 1000)
			for {
				if _, err := w.Write(chunk); err != nil {
					<-r.Context().Done()
					ended <- err
					return
				}
				written.Add(int64(len(chunk)))
			}
		})
		req, _ := http.NewRequest(http.MethodGet, mcptest.DefaultURL, nil)
		resp, err := mcptest.Transport(h).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the handler is blocked in Write
		// PipeBytes in the pipe, up to 4 KiB in the writer's buffer, up to one
		// chunk in the blocked Write.
		const slack = 8 << 10
		if n := written.Load(); n < mcptest.PipeBytes-slack || n > mcptest.PipeBytes+slack {
			t.Errorf("the handler wrote %d bytes ahead of the client, want about %d", n, mcptest.PipeBytes)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := written.Load(); n < mcptest.PipeBytes+100<<10-slack {
			t.Errorf("after reading 100 KiB the handler wrote %d bytes", n)
		}
		resp.Body.Close()
		if err := <-ended; err == nil {
			t.Error("a write after the client closed the body succeeded")
		}
	})
}

// TestCancelBeforeHeaders: a context that ends before the response starts
// fails RoundTrip with its error and cancels the handler's context.
func TestCancelBeforeHeaders(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("the test gave up")
	started, stopped := make(chan struct{}), make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		stopped <- r.Context().Err()
	})
	go func() {
		<-started
		cancel(cause)
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, mcptest.DefaultURL, nil)
	if _, err := mcptest.Transport(h).RoundTrip(req); !errors.Is(err, cause) {
		t.Errorf("RoundTrip: %v, want the cause", err)
	}
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("handler context: %v", err)
	}
}

// TestPanic: a handler's panic fails the exchange with its value, before
// or after the headers, and does not end the test binary.
func TestPanic(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodGet, mcptest.DefaultURL, nil)
	_, err := mcptest.Transport(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("RoundTrip: %v", err)
	}
	_, err = mcptest.Transport(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Errorf("RoundTrip of an aborted handler: %v", err)
	}
	resp := do(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		panic("late")
	}, req)
	if _, err := io.ReadAll(resp.Body); err == nil || !strings.Contains(err.Error(), "panicked: late") {
		t.Errorf("body read: %v", err)
	}
}

// closeTracker records that the transport closed the request body.
type closeTracker struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeTracker) Close() error { c.closed.Store(true); return nil }

// TestRequestBodyClosed: the transport closes the request body once the
// handler returned, as a RoundTripper must, and the handler cannot read
// it after.
func TestRequestBodyClosed(t *testing.T) {
	t.Parallel()
	body := &closeTracker{Reader: strings.NewReader("abc")}
	var kept io.Reader
	req, _ := http.NewRequest(http.MethodPost, mcptest.DefaultURL, body)
	resp := do(t, func(w http.ResponseWriter, r *http.Request) {
		kept = r.Body
		if r.ContentLength != -1 || r.TransferEncoding[0] != "chunked" {
			t.Errorf("a body of unknown length: ContentLength %d", r.ContentLength)
		}
	}, req)
	readAll(t, resp.Body)
	if !body.closed.Load() {
		t.Error("the request body was not closed")
	}
	if _, err := kept.Read(make([]byte, 1)); !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Errorf("read after the handler returned: %v", err)
	}
}

// TestRecorderWrap records through a transport that reads the request
// body itself (no GetBody), and splits an SSE response into messages.
func TestRecorderWrap(t *testing.T) {
	t.Parallel()
	rec := &mcptest.Recorder{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata:\n\n: keep-alive\n\ndata: {\"a\":1}\n\ndata: {\"b\":\ndata: 2}\n\n")
	})
	hc := &http.Client{Transport: rec.Wrap(mcptest.Transport(h))}
	req, _ := http.NewRequest(http.MethodPost, "http://localhost/x", io.NopCloser(strings.NewReader(`{"q":1}`)))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp.Body)
	resp.Body.Close()
	xs := rec.Exchanges()
	if len(xs) != 1 || string(xs[0].Body) != `{"q":1}` || xs[0].Status != 200 || xs[0].URL != "http://localhost/x" {
		t.Fatalf("exchanges %+v", xs)
	}
	ms, err := xs[0].ResponseMessages()
	if err != nil || len(ms) != 2 || string(ms[0]) != `{"a":1}` || string(ms[1]) != "{\"b\":\n2}" {
		t.Fatalf("messages %q, %v", ms, err)
	}
	// Exchanges returns copies.
	xs[0].Body[0] = 'X'
	xs[0].Header.Set("X", "y")
	if x := rec.Exchanges()[0]; x.Body[0] != '{' || x.Header.Get("X") != "" {
		t.Error("Exchanges shares its slices or maps")
	}
}
