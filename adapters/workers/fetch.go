//go:build js && wasm

package workers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"syscall/js"
)

// DefaultMaxResponseBytes bounds a response body read by Transport when
// its MaxResponseBytes is zero.
const DefaultMaxResponseBytes = 8 << 20

// Transport is an http.RoundTripper for outbound calls from a Worker (a
// JWKS, token introspection, any API): the glue calls fetch in the context
// of the request the call's context belongs to (see Call). net/http's
// default transport on js/wasm calls fetch from whatever request's callback
// Go happens to run in, and Workers cancel that I/O when that other request
// ends.
//
// Redirects are not followed (fetch's redirect: "manual"): a 3xx reaches
// the caller, whose http.Client decides. The body of a response is read
// whole, at most MaxResponseBytes; a longer one is an error. A request
// whose context has no deadline gets DefaultCallTimeout.
type Transport struct {
	// MaxResponseBytes bounds a response body; zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := bounded(req.Context())
	defer cancel()
	r, err := requestFor(ctx)
	if err != nil {
		return nil, err
	}
	var body []byte
	if req.Body != nil {
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	max := t.MaxResponseBytes
	if max <= 0 {
		max = DefaultMaxResponseBytes
	}
	return await(ctx, r, "fetch", func(args []js.Value) (*http.Response, error) {
		if e := args[0]; !e.IsNull() && !e.IsUndefined() {
			return nil, fmt.Errorf("workers: fetch %s: %s", req.URL.Redacted(), e.String())
		}
		resp := &http.Response{
			Status:     fmt.Sprintf("%d %s", args[1].Int(), http.StatusText(args[1].Int())),
			StatusCode: args[1].Int(), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Request: req,
		}
		hs := args[2]
		for i, n := 0, hs.Length(); i < n; i++ {
			resp.Header.Add(hs.Index(i).Index(0).String(), hs.Index(i).Index(1).String())
		}
		b := make([]byte, args[3].Get("length").Int())
		js.CopyBytesToGo(b, args[3])
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		return resp, nil
	}, req.Method, req.URL.String(), jsHeaders(req.Header), jsBytes(body), float64(max))
}

// await posts kind with args to the JavaScript side of request r, with a
// callback (err, values...) last, and returns what settle reads from the
// callback's arguments, or ctx's error when ctx ends first (the callback,
// should it come later, is then dropped).
func await[T any](ctx context.Context, r *request, kind string, settle func(args []js.Value) (T, error), args ...any) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	var cb js.Func
	cb = js.FuncOf(func(_ js.Value, a []js.Value) any {
		cb.Release()
		v, err := settle(a)
		ch <- result{v, err}
		return nil
	})
	post(r.rq, kind, append(args, cb)...)
	select {
	case res := <-ch:
		return res.v, res.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// requestFor returns the request whose context I/O for ctx is made in.
func requestFor(ctx context.Context) (*request, error) {
	if r, _ := ctx.Value(requestKey{}).(*request); r != nil {
		return r, nil
	}
	if current != nil {
		current.mu.Lock()
		r := current.recent
		current.mu.Unlock()
		if r != nil {
			return r, nil
		}
	}
	return nil, ErrNoRequest
}
