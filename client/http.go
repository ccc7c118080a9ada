package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/mcp"
)

// httpReq describes one HTTP exchange.
type httpReq struct {
	method string // HTTP method
	body   []byte
	header http.Header // request-specific headers
	rpc    string      // MCP method, for errors
	co     *callOptions
	// mw are the headers of the Call's Middleware, over the call's
	// and under header and the protocol's.
	mw http.Header
	// cached is request.cached.
	cached *cacheAt
}

// send does one HTTP exchange with authorization: on a 401, or a 403 whose
// challenge says insufficient_scope, a Challenger token source is asked to
// authorize and the request is sent again, at most maxAuthAttempts times in
// all; on a 429 or 503 the request is sent again after the wait its
// Retry-After asks for, Options.MaxRetries times at most (retry.go). It
// returns the response with its body unread for 2xx; any other status is
// turned into an error (*mcp.Error if the body is a JSON-RPC error, else
// *HTTPError; wrapped in a *RetryLaterError for a 429 or 503).
func (c *Conn) send(ctx context.Context, hr *httpReq, build func(h http.Header)) (*http.Response, error) {
	sent := 0
	for attempt := 1; ; attempt++ {
		sent++
		authz, err := c.authorization(ctx, hr.co)
		if err != nil {
			return nil, err
		}
		t := c.startTiming(ctx, hr.rpc)
		req, err := http.NewRequestWithContext(t.ctx, hr.method, c.url, bytes.NewReader(hr.body))
		if err != nil {
			t.done()
			return nil, err
		}
		h := req.Header
		for k, vs := range c.opts.Header {
			h[k] = append([]string(nil), vs...)
		}
		for k, vs := range hr.co.headers() {
			h[k] = append([]string(nil), vs...)
		}
		for k, vs := range hr.mw {
			h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
		for k, vs := range hr.header {
			h[k] = vs
		}
		if build != nil {
			build(h)
		}
		_, own := hr.co.ownAuth()
		switch {
		case authz != "" && !own:
			ra, ok := c.opts.TokenSource.(RequestAuthorizer)
			if !ok {
				h["Authorization"] = []string{authz}
				break
			}
			ah, err := ra.AuthorizeRequest(ctx, hr.method, c.url, strings.TrimPrefix(authz, "Bearer "))
			if err != nil {
				t.done()
				return nil, err
			}
			for k, vs := range ah {
				h[http.CanonicalHeaderKey(k)] = vs
			}
		case authz != "":
			h["Authorization"] = []string{authz}
		case own:
			delete(h, "Authorization") // the call's own credential is none
		}
		resp, err := c.cl.hc.Do(req)
		if err != nil {
			err = t.err(err)
			t.done()
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			t.watch(resp)
			return resp, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		err = t.err(err)
		t.done()
		if errors.Is(err, ErrTimeout) {
			return nil, err
		}
		if isAuthChallenge(resp) {
			ch, ok := c.opts.TokenSource.(Challenger)
			if ok && !own && attempt < maxAuthAttempts {
				if err := ch.Challenge(ctx, c.url, resp); err != nil {
					return nil, err
				}
				if c.cl.cache != nil {
					c.cl.cache.dropPrivate() // new token: private entries go
					if hr.cached != nil {
						// The next attempt carries the new token: its
						// result is that credential's, of the new
						// generation.
						hr.cached.gen = c.cl.cache.generation()
						if hr.cached.src, err = c.credential(ctx); err != nil {
							return nil, err
						}
					}
				}
				continue
			}
		}
		err = statusError(hr.rpc, resp, body)
		if retryable(resp.StatusCode) {
			wait, rerr := c.retryLater(ctx, hr, resp, err, sent)
			if rerr != nil {
				return nil, rerr
			}
			c.cl.log.DebugContext(ctx, "mcp client: the server asks to retry", "method", hr.rpc, "status", resp.StatusCode, "wait", wait)
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			attempt-- // the authorization's attempts are its own
			continue
		}
		return nil, err
	}
}

// ErrTimeout: a request got no complete answer within
// Options.RequestTimeout, or its SSE stream stayed silent for
// Options.StreamIdleTimeout. The errors that match it also match
// context.DeadlineExceeded.
var ErrTimeout = errors.New("mcp client: timed out")

// timeoutError is the cause of a cancelled exchange: what ran out and
// after how long. It matches ErrTimeout and context.DeadlineExceeded.
type timeoutError struct {
	method string
	what   string
	after  time.Duration
}

func (e *timeoutError) Error() string {
	m := e.method
	if m == "" {
		m = "GET stream"
	}
	return "mcp client: " + m + ": timed out: " + e.what + " " + e.after.String()
}

func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Timeout reports true, as net.Error timeouts do.
func (e *timeoutError) Timeout() bool { return true }

// timing bounds one HTTP exchange: Options.RequestTimeout from sending the
// request until its answer is complete, or until the answer turns out to be
// an SSE stream; from then on Options.StreamIdleTimeout between two reads
// that return bytes. Either cancels the exchange's context with a
// *timeoutError. The caller's context is not touched: its cancellation
// still reads as itself.
type timing struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	method   string
	deadline *time.Timer // nil: no request timeout
	idle     time.Duration
	idleT    *time.Timer // running while a stream is read
	body     io.ReadCloser
}

func (c *Conn) startTiming(ctx context.Context, method string) *timing {
	t := &timing{method: method, idle: c.opts.StreamIdleTimeout}
	t.ctx, t.cancel = context.WithCancelCause(ctx)
	if d := c.opts.RequestTimeout; d > 0 {
		t.deadline = time.AfterFunc(d, func() {
			t.cancel(&timeoutError{method: method, what: "no complete answer within", after: d})
		})
	}
	return t
}

// watch takes over resp.Body: the request deadline keeps running for a
// plain body; an SSE stream trades it for the idle bound.
func (t *timing) watch(resp *http.Response) {
	t.body = resp.Body
	resp.Body = t
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return
	}
	if t.deadline != nil {
		t.deadline.Stop()
	}
	if t.idle > 0 {
		d := t.idle
		t.idleT = time.AfterFunc(d, func() {
			t.cancel(&timeoutError{method: t.method, what: "SSE stream silent for", after: d})
		})
	}
}

// Read reads the body; every read that returns bytes, a keep-alive comment
// as much as an event, restarts the idle bound.
func (t *timing) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	if n > 0 && t.idleT != nil {
		t.idleT.Reset(t.idle)
	}
	if err != nil && err != io.EOF {
		err = t.err(err)
	}
	return n, err
}

// Close closes the body and ends the exchange.
func (t *timing) Close() error {
	err := t.body.Close()
	t.done()
	return err
}

// err is the *timeoutError that cancelled the exchange, if one did, in
// place of the transport's error; else err.
func (t *timing) err(err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(t.ctx); cause != nil && errors.Is(cause, ErrTimeout) {
		return cause
	}
	return err
}

// done stops the timers and releases the exchange's context.
func (t *timing) done() {
	if t.deadline != nil {
		t.deadline.Stop()
	}
	if t.idleT != nil {
		t.idleT.Stop()
	}
	t.cancel(nil)
}

// isAuthChallenge: 401, or 403 with error="insufficient_scope".
func isAuthChallenge(resp *http.Response) bool {
	if resp.StatusCode == http.StatusUnauthorized {
		return true
	}
	if resp.StatusCode == http.StatusForbidden {
		if p, ok := mcp.BearerChallenge(resp.Header); ok && p["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// statusError turns a non-2xx response into an error.
func statusError(method string, resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		if m, err := decodeMessage(body); err == nil && m.isResponse() && m.Error != nil {
			return rpcError(method, resp.StatusCode, m.Error)
		}
	}
	if len(body) > 4096 {
		body = body[:4096]
	}
	return &HTTPError{Method: method, StatusCode: resp.StatusCode, Header: resp.Header, Body: body}
}

// Is lets errors.Is(err, ErrUnauthorized) match a 401 or 403.
func (e *HTTPError) Is(target error) bool {
	return target == ErrUnauthorized && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden)
}

// authorization returns the Authorization value a request sends: the
// call's own credential, else "Bearer " and the TokenSource's token; ""
// leaves Options.Header's Authorization, if any, in place.
func (c *Conn) authorization(ctx context.Context, co *callOptions) (string, error) {
	if authz, ok := co.ownAuth(); ok {
		return authz, nil
	}
	if c.opts.TokenSource == nil {
		return "", nil
	}
	tok, err := c.opts.TokenSource.Token(ctx)
	if err != nil || tok == "" {
		return "", err
	}
	return "Bearer " + tok, nil
}

// credential tells which credential of the Conn a request without one of
// its own carries: the TokenSource's token, the static Authorization of
// Options.Header, or none. Private cache entries are kept per credential
// source (see cache).
func (c *Conn) credential(ctx context.Context) (credSource, error) {
	if c.opts.TokenSource != nil {
		tok, err := c.opts.TokenSource.Token(ctx)
		if err != nil {
			return 0, err
		}
		if tok != "" {
			return credToken, nil
		}
	}
	if c.cl.staticAuth {
		return credStatic, nil
	}
	return credNone, nil
}

// visibleASCII reports whether s is not empty and only visible ASCII
// (0x21-0x7E), as session ids must be.
func visibleASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
