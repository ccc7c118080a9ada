//go:build !(js && wasm)

package main

import (
	"bytes"
	"net/http"

	"github.com/mcpfn/mcpfn/core"
)

// buffered serves h the way a platform without response streaming does
// (AWS Lambda buffered, API Gateway HTTP APIs): nothing reaches the client
// before the handler returns. It lets the conformance suite exercise the
// server's buffered mode on net/http.
func buffered(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &bufferingWriter{header: http.Header{}, status: http.StatusOK}
		h.ServeHTTP(bw, r.WithContext(core.NewContextBuffered(r.Context())))
		for k, v := range bw.header {
			w.Header()[k] = v
		}
		w.WriteHeader(bw.status)
		w.Write(bw.body.Bytes())
	})
}

type bufferingWriter struct {
	header  http.Header
	status  int
	written bool
	body    bytes.Buffer
}

func (b *bufferingWriter) Header() http.Header { return b.header }

func (b *bufferingWriter) WriteHeader(status int) {
	if !b.written {
		b.status, b.written = status, true
	}
}

func (b *bufferingWriter) Write(p []byte) (int, error) {
	b.written = true
	return b.body.Write(p)
}

// Flush does nothing: the response leaves when the handler returns.
func (b *bufferingWriter) Flush() {}
