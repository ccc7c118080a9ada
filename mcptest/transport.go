package mcptest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// PipeBytes bounds the response bytes a handler may write ahead of the
// client's reading, as a socket's buffers do: a handler that writes more
// blocks until the client reads, closes the body or gives up.
const PipeBytes = 256 << 10

// chunkBytes is how much a response buffers before it is sent without a
// Flush, as net/http's server buffers (bufferBeforeChunkingSize and its
// 4 KiB connection writer): a response written whole within it gets a
// Content-Length.
const chunkBytes = 4 << 10

// Transport returns an http.RoundTripper that serves every request with h
// in the calling process: no socket, no listener, one goroutine per
// request, which ends when h returns. Use it as the Transport of an
// http.Client (Connect does, for a client.Conn).
//
// h sees requests as net/http's server makes them: URL holds the path and
// query only, Host the URL's host, RemoteAddr and RequestURI are set,
// TLS is set for an https URL, and the context carries
// http.LocalAddrContextKey, the server's address: the URL's host when it is
// an IP address, 127.0.0.1 for localhost, 192.0.2.1 (TEST-NET-1, not
// loopback) for any other name. So a core.Server applies its DNS rebinding
// and Origin checks as on that address: a loopback URL such as DefaultURL
// passes them as a local development server does.
//
// The response streams: RoundTrip returns when h flushes or has written
// more than net/http's server buffers (4 KiB), or returns, so the events
// of an SSE response reach the client as h flushes them, and a response
// written whole gets a Content-Length. At most PipeBytes of a response wait
// for the client to read them.
//
// The request's context reaches h as a client's going away reaches a real
// server: when it ends, or when the client closes a response body before
// its end, h's r.Context() is cancelled, and RoundTrip and the body's Read
// fail with the context's error. h's context carries none of the client
// context's values or deadline, as over a network. The context is also
// cancelled when h returns. A panic in h fails the exchange with an error
// that holds the panic's value and stack (http.ErrAbortHandler just fails
// it), instead of ending the test binary.
//
// The RoundTripper is safe for concurrent use; it holds nothing between
// requests but a count of those in flight.
func Transport(h http.Handler) http.RoundTripper {
	if h == nil {
		panic("mcptest: Transport of a nil handler")
	}
	return &transport{h: h}
}

// transport is the RoundTripper Transport returns. It counts the handlers
// running, so that Connect can wait for them.
type transport struct {
	h http.Handler

	mu     sync.Mutex
	active int
	idle   chan struct{} // closed when active drops to 0
	port   int           // the last client port handed out
}

// wait returns when no handler of t is running.
func (t *transport) wait() {
	for {
		t.mu.Lock()
		if t.active == 0 {
			t.mu.Unlock()
			return
		}
		ch := t.idle
		t.mu.Unlock()
		<-ch
	}
}

// start records a handler starting and returns the client port of its
// request.
func (t *transport) start() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active == 0 {
		t.idle = make(chan struct{})
	}
	t.active++
	if t.port < 49152 || t.port >= 65535 {
		t.port = 49152 // the dynamic port range (RFC 6335)
	}
	t.port++
	return t.port
}

func (t *transport) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active--
	if t.active == 0 {
		close(t.idle)
	}
}

// testNet1 is the server address of a URL whose host is a name other than
// localhost: TEST-NET-1 (RFC 5737), which is not loopback.
var testNet1 = netip.AddrFrom4([4]byte{192, 0, 2, 1})

// serverAddrs returns the server's and the client's address for u.
func serverAddrs(u *url.URL, clientPort int) (local *net.TCPAddr, remote string) {
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		port = p
	}
	host := u.Hostname()
	ip, err := netip.ParseAddr(host)
	switch {
	case err == nil:
		ip = ip.WithZone("")
	case strings.EqualFold(host, "localhost"):
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	default:
		ip = testNet1
	}
	client := netip.AddrFrom4([4]byte{192, 0, 2, 2})
	if ip.IsLoopback() {
		client = ip
	}
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port))), netip.AddrPortFrom(client, uint16(clientPort)).String()
}

// outcome is what the handler's goroutine hands RoundTrip: the response,
// once its headers are sent, or why there is none.
type outcome struct {
	resp *http.Response
	err  error
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	closeBody := func() {
		if req.Body != nil {
			req.Body.Close()
		}
	}
	if req.URL == nil {
		closeBody()
		return nil, errors.New("mcptest: request without a URL")
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if (req.URL.Scheme != "http" && req.URL.Scheme != "https") || host == "" {
		closeBody()
		return nil, fmt.Errorf("mcptest: unsupported URL %q: want http:// or https:// and a host", req.URL)
	}
	ctx := req.Context()
	if ctx.Err() != nil {
		closeBody()
		return nil, context.Cause(ctx)
	}
	sreq, err := t.serverRequest(req, host)
	if err != nil {
		closeBody()
		return nil, err
	}
	port := t.start()
	local, remote := serverAddrs(req.URL, port)
	sreq.RemoteAddr = remote
	hctx, hcancel := context.WithCancel(context.WithValue(context.Background(), http.LocalAddrContextKey, local))
	sreq = sreq.WithContext(hctx)
	body := &requestBody{rc: sreq.Body}
	sreq.Body = body

	p := newPipe(PipeBytes)
	got := make(chan outcome, 1)
	w := &responseWriter{
		req:         req,
		header:      http.Header{},
		pipe:        p,
		got:         got,
		head:        req.Method == http.MethodHead,
		stopReading: hcancel,
	}
	go func() {
		defer t.end()
		defer closeBody()
		defer body.close()
		defer hcancel() // net/http cancels the context when the handler returns
		defer func() {
			if v := recover(); v != nil {
				err := errors.New("mcptest: the handler aborted the response")
				if v != http.ErrAbortHandler {
					err = fmt.Errorf("mcptest: the handler panicked: %v\n%s", v, debug.Stack())
				}
				if !w.sent {
					got <- outcome{err: err}
				}
				p.closeWrite(err)
			}
		}()
		t.h.ServeHTTP(w, sreq)
		w.finish()
	}()

	select {
	case o := <-got:
		if o.err != nil {
			return nil, o.err
		}
		// From now on the client's giving up reaches the handler and the
		// body's reader.
		stop := context.AfterFunc(ctx, func() {
			hcancel()
			p.closeWrite(context.Cause(ctx))
		})
		o.resp.Body.(*responseBody).stop = stop
		return o.resp, nil
	case <-ctx.Done():
		hcancel()
		p.closeRead()
		return nil, context.Cause(ctx)
	}
}

// serverRequest returns req as net/http's server would hand it to a
// handler, without its context.
func (t *transport) serverRequest(req *http.Request, host string) (*http.Request, error) {
	u, err := url.ParseRequestURI(req.URL.RequestURI())
	if err != nil {
		return nil, fmt.Errorf("mcptest: request URI %q: %v", req.URL.RequestURI(), err)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	h := req.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	delete(h, "Host")
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", "Go-http-client/1.1") // as net/http's client sends
	}
	sreq := &http.Request{
		Method:     method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		Host:       host,
		RequestURI: req.URL.RequestURI(),
		Body:       http.NoBody,
	}
	if req.Body != nil && req.Body != http.NoBody {
		sreq.Body = req.Body
		sreq.ContentLength = req.ContentLength
		if req.ContentLength > 0 {
			h.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
		} else {
			// "For client requests, a value of 0 with a non-nil Body is
			// also treated as unknown": the server sees it chunked.
			sreq.ContentLength = -1
			sreq.TransferEncoding = []string{"chunked"}
		}
	}
	if req.URL.Scheme == "https" {
		sreq.TLS = &tls.ConnectionState{Version: tls.VersionTLS13, HandshakeComplete: true, ServerName: req.URL.Hostname()}
	}
	return sreq, nil
}

// requestBody is the body a handler reads: the client's, which it must not
// close (the transport does, when the handler returns), and which fails
// reads after the handler closed it or returned.
type requestBody struct {
	rc     io.ReadCloser
	closed atomic.Bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.rc.Read(p)
}

func (b *requestBody) Close() error {
	b.close()
	return nil
}

func (b *requestBody) close() { b.closed.Store(true) }

// responseWriter is the http.ResponseWriter of one request: it buffers up
// to chunkBytes, then sends the headers (once) and writes into the pipe the
// client reads. Like net/http's, it is used by the handler's goroutine
// only.
type responseWriter struct {
	req    *http.Request // the client's
	header http.Header
	pipe   *pipe
	got    chan<- outcome
	head   bool // a HEAD request: no body is sent
	// stopReading cancels the handler's context (the client closed the
	// body early).
	stopReading context.CancelFunc

	status      int
	wroteHeader bool
	sent        bool // the response headers reached RoundTrip
	buf         []byte
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader records the status, as net/http's does: the headers leave
// with the first flush or the end of the handler; informational statuses
// (1xx but 101) are not sent.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.wroteHeader || (code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols) {
		return
	}
	w.wroteHeader = true
	w.status = code
}

// bodyAllowed reports whether the status allows a body (RFC 9110 §6.4.1).
func (w *responseWriter) bodyAllowed() bool {
	return w.status != http.StatusNoContent && w.status != http.StatusNotModified && (w.status < 100 || w.status > 199)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.bodyAllowed() {
		return 0, http.ErrBodyNotAllowed
	}
	if w.pipe.writeErr() != nil {
		return 0, w.pipe.writeErr()
	}
	if w.head {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > chunkBytes {
		if err := w.push(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush sends the headers and what was written so far.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush, returning the error of a client that went away
// (http.ResponseController.Flush uses it).
func (w *responseWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.push()
}

// push sends the headers, if not yet sent, and the buffered body.
func (w *responseWriter) push() error {
	if !w.sent {
		w.send(-1)
	}
	if len(w.buf) == 0 {
		return w.pipe.writeErr()
	}
	_, err := w.pipe.write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// send hands RoundTrip the response; length is its Content-Length, -1
// when unknown.
func (w *responseWriter) send(length int64) {
	w.sent = true
	h := w.header.Clone()
	if w.bodyAllowed() && len(w.buf) > 0 && h.Get("Content-Type") == "" && h.Get("Transfer-Encoding") == "" {
		h.Set("Content-Type", http.DetectContentType(w.buf[:min(len(w.buf), 512)]))
	}
	if length >= 0 && w.bodyAllowed() && h.Get("Content-Length") == "" && h.Get("Transfer-Encoding") == "" {
		h.Set("Content-Length", strconv.FormatInt(length, 10))
	}
	if cl, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && cl >= 0 {
		length = cl
	}
	if w.head || !w.bodyAllowed() {
		length = 0
	}
	resp := &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		ContentLength: length,
		Body:          &responseBody{p: w.pipe, stopReading: w.stopReading},
		Request:       w.req,
	}
	if length < 0 && w.bodyAllowed() && !w.head {
		resp.TransferEncoding = []string{"chunked"}
	}
	if w.req.URL.Scheme == "https" {
		resp.TLS = &tls.ConnectionState{Version: tls.VersionTLS13, HandshakeComplete: true, ServerName: w.req.URL.Hostname()}
	}
	w.got <- outcome{resp: resp}
}

// finish ends the response after the handler returned: a response not
// yet sent goes whole, with its Content-Length.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sent {
		w.send(int64(len(w.buf)))
	}
	if len(w.buf) > 0 {
		w.pipe.write(w.buf)
		w.buf = nil
	}
	w.pipe.closeWrite(nil)
}

// responseBody is the body RoundTrip returns: the read side of the pipe.
type responseBody struct {
	p           *pipe
	stopReading context.CancelFunc
	// stop stops the watch on the request's context (set by RoundTrip
	// before the response is handed out).
	stop func() bool
	once sync.Once
}

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.p.read(p)
	if err == io.EOF {
		b.done()
	}
	return n, err
}

// Close ends the exchange: closing the body before its end is the client
// going away, which cancels the handler's context.
func (b *responseBody) Close() error {
	if !b.p.atEOF() {
		b.stopReading()
	}
	b.p.closeRead()
	b.done()
	return nil
}

func (b *responseBody) done() {
	b.once.Do(func() {
		if b.stop != nil {
			b.stop()
		}
	})
}

// pipe is a bounded in-memory pipe between a handler (the writer) and a
// client (the reader): writes block while max bytes wait to be read.
// Blocking waits on a sync.Cond, which testing/synctest counts as durably
// blocked.
type pipe struct {
	mu   sync.Mutex
	cond sync.Cond
	buf  []byte
	max  int
	werr error // set by closeWrite: what reads return once buf is empty
	rerr error // set by closeRead: what writes return
	eof  bool  // a read returned io.EOF
}

func newPipe(max int) *pipe {
	p := &pipe{max: max}
	p.cond.L = &p.mu
	return p
}

// errClientGone is what a handler's writes return after the client closed
// the body or gave up.
var errClientGone = errors.New("mcptest: the client closed the response body")

func (p *pipe) write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for len(b) > 0 {
		switch {
		case p.rerr != nil:
			return n, p.rerr
		case p.werr != nil:
			return n, errClientGone
		}
		room := p.max - len(p.buf)
		if room == 0 {
			p.cond.Wait()
			continue
		}
		k := min(room, len(b))
		p.buf = append(p.buf, b[:k]...)
		b = b[k:]
		n += k
		p.cond.Broadcast()
	}
	return n, nil
}

// writeErr returns the error a write would return now.
func (p *pipe) writeErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.rerr != nil:
		return p.rerr
	case p.werr != nil:
		return errClientGone
	}
	return nil
}

func (p *pipe) read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 {
		switch {
		case p.rerr != nil:
			return 0, errors.New("mcptest: read on a closed response body")
		case p.werr != nil:
			if p.werr == io.EOF {
				p.eof = true
			}
			return 0, p.werr
		}
		if len(b) == 0 {
			return 0, nil
		}
		p.cond.Wait()
	}
	n := copy(b, p.buf)
	// Keep the buffer at the front: its capacity stays bounded by max.
	rest := copy(p.buf, p.buf[n:])
	p.buf = p.buf[:rest]
	p.cond.Broadcast()
	return n, nil
}

// closeWrite ends the stream: reads return err (io.EOF for nil) once what
// was written has been read. Only the first call counts.
func (p *pipe) closeWrite(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.werr != nil {
		return
	}
	if err == nil {
		err = io.EOF
	} else {
		p.buf = nil // an error ends the stream now, as a reset connection does
	}
	p.werr = err
	p.cond.Broadcast()
}

// closeRead is the reader going away: what is buffered is dropped, and
// writes fail.
func (p *pipe) closeRead() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rerr == nil {
		p.rerr = errClientGone
	}
	p.buf = nil
	p.cond.Broadcast()
}

// atEOF reports whether the reader has seen the end of the stream.
func (p *pipe) atEOF() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.eof || (p.werr == io.EOF && len(p.buf) == 0)
}
