//go:build js && wasm

package workers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"syscall/js"
)

// newHTTPRequest builds the *http.Request of a glue request.
func newHTTPRequest(ctx context.Context, rq js.Value) (*http.Request, error) {
	u, err := url.Parse(rq.Get("url").String())
	if err != nil {
		return nil, err
	}
	var body []byte
	if b := rq.Get("body"); b.Truthy() {
		body = make([]byte, b.Get("length").Int())
		js.CopyBytesToGo(body, b)
	}
	req, err := http.NewRequestWithContext(ctx, rq.Get("method").String(), u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.RequestURI = u.RequestURI()
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	hs := rq.Get("headers")
	for i, n := 0, hs.Length(); i < n; i++ {
		kv := hs.Index(i)
		req.Header.Add(kv.Index(0).String(), kv.Index(1).String())
	}
	req.Host = u.Host
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	req.RemoteAddr = req.Header.Get("CF-Connecting-IP")
	return req, nil
}

// responseWriter buffers the response until the handler's first Flush, then
// streams: the glue answers with a ReadableStream fed by later flushes.
type responseWriter struct {
	rq     js.Value
	header http.Header

	mu        sync.Mutex
	status    int
	buf       bytes.Buffer
	streaming bool // the head has been posted
	done      bool
}

var _ http.Flusher = (*responseWriter)(nil)

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return 0, http.ErrHandlerTimeout
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.buf.Write(p)
}

// Flush sends what is buffered: the first Flush sends the status and the
// headers and starts the stream.
func (w *responseWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.streaming {
		w.streaming = true
		post(w.rq, "head", w.status, jsHeaders(w.header), jsBytes(w.buf.Bytes()))
	} else if w.buf.Len() > 0 {
		post(w.rq, "chunk", jsBytes(w.buf.Bytes()))
	}
	w.buf.Reset()
}

// FlushError implements the interface http.ResponseController looks for.
func (w *responseWriter) FlushError() error {
	w.Flush()
	return nil
}

// abort answers 500 if nothing was sent yet, and otherwise cuts the stream.
func (w *responseWriter) abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	if w.streaming {
		post(w.rq, "abort")
		return
	}
	post(w.rq, "full", http.StatusInternalServerError,
		jsHeaders(http.Header{"Content-Type": {"text/plain; charset=utf-8"}}), jsBytes([]byte("internal server error\n")))
}

// finish sends the rest of the response when the handler has returned.
func (w *responseWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	if !w.streaming {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		post(w.rq, "full", w.status, jsHeaders(w.header), jsBytes(w.buf.Bytes()))
		return
	}
	if w.buf.Len() > 0 {
		post(w.rq, "chunk", jsBytes(w.buf.Bytes()))
	}
	post(w.rq, "end")
}

var uint8Array = js.Global().Get("Uint8Array")

// jsBytes copies b into a new Uint8Array (null when b is empty).
func jsBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	a := uint8Array.New(len(b))
	js.CopyBytesToJS(a, b)
	return a
}

// jsHeaders converts h to an array of [name, value] pairs, as the Headers
// constructor takes them.
func jsHeaders(h http.Header) any {
	pairs := make([]any, 0, len(h))
	for k, vs := range h {
		for _, v := range vs {
			pairs = append(pairs, []any{k, v})
		}
	}
	return pairs
}

var _ io.Writer = (*responseWriter)(nil)
