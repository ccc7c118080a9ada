package nethttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// wellKnownPRM is the prefix of OAuth protected resource metadata URLs
// (RFC 9728 §3), served by the server whatever Options.Path is.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// DefaultPath is the endpoint path Handler serves.
const DefaultPath = "/mcp"

// Options configures NewHandler and Serve. A nil *Options means defaults.
type Options struct {
	// Path is the MCP endpoint path; other paths get 404, except, when the
	// server has an Authenticator, /.well-known/oauth-protected-resource and
	// the paths below it (RFC 9728 metadata), which the server answers.
	// Empty means DefaultPath; "*" serves every path.
	Path string
	// ShutdownTimeout bounds the graceful shutdown of Serve. Zero means 10s.
	ShutdownTimeout time.Duration
	// Middleware, when set, wraps the endpoint handler (e.g. authentication
	// that puts a core.Principal on the request context). It runs before
	// the server's Origin check; for OAuth, prefer
	// core.ServerOptions.Authenticator (package auth), which every adapter
	// shares.
	Middleware func(http.Handler) http.Handler
	// BodyReadTimeout bounds the time to receive a POST body: a client
	// that trickles its body is answered 408 and disconnected. With
	// NewHandler it counts from the moment the handler starts (see
	// LimitBodyRead); with Serve and ServeListener from the start of the
	// request (see ServeListener). Zero means DefaultBodyReadTimeout; a
	// negative value disables the bound.
	BodyReadTimeout time.Duration
}

// DefaultBodyReadTimeout is the BodyReadTimeout of a zero Options.
const DefaultBodyReadTimeout = 30 * time.Second

// The bounds of ServeListener's http.Server besides the body's.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
)

// Handler returns an http.Handler serving srv at DefaultPath.
func Handler(srv *core.Server) http.Handler { return NewHandler(srv, nil) }

// NewHandler returns an http.Handler serving srv at opts.Path.
func NewHandler(srv *core.Server, opts *Options) http.Handler {
	return newHandler(srv, opts, false)
}

// newHandler is NewHandler; with ownServer, the http.Server is
// ServeListener's, whose ReadTimeout bounds the body instead of
// LimitBodyRead.
func newHandler(srv *core.Server, opts *Options, ownServer bool) http.Handler {
	if srv == nil {
		panic("nethttp: nil server")
	}
	path := DefaultPath
	if opts != nil && opts.Path != "" {
		path = opts.Path
	}
	var h http.Handler = srv
	if opts != nil && opts.Middleware != nil {
		h = opts.Middleware(h)
	}
	if !ownServer {
		h = LimitBodyRead(h, bodyReadTimeout(opts))
	}
	if path == "*" {
		return h
	}
	authn := srv.Authenticator() != nil
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Protected resource metadata (RFC 9728 §3) lives outside the
		// endpoint path; the server's Authenticator decides what it serves.
		if r.URL.Path != path && !(authn && strings.HasPrefix(r.URL.Path, wellKnownPRM)) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bodyReadTimeout is opts.BodyReadTimeout with its default.
func bodyReadTimeout(opts *Options) time.Duration {
	if opts != nil && opts.BodyReadTimeout != 0 {
		return opts.BodyReadTimeout
	}
	return DefaultBodyReadTimeout
}

// Serve listens on addr and serves srv until ctx is done. Then it closes
// srv's long-lived streams (listen streams get their closing result) and
// shuts the HTTP server down gracefully. It returns nil after a clean
// shutdown.
func Serve(ctx context.Context, addr string, srv *core.Server, opts *Options) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ServeListener(ctx, ln, srv, opts)
}

// ServeListener is Serve on an existing listener, which it closes.
//
// Its http.Server bounds the request headers to 10s and an idle keep-alive
// connection to 2 minutes. The body bound (Options.BodyReadTimeout) is the
// server's ReadTimeout: it counts from the start of the request, headers
// included, and net/http clears it once the body has been read to its end
// (at once for a request without a body), when it starts watching the
// connection for the client going away, so that a long response (an SSE
// stream) is not cut by it. That costs a request no deadline of its own,
// as LimitBodyRead's does.
func ServeListener(ctx context.Context, ln net.Listener, srv *core.Server, opts *Options) error {
	hs := &http.Server{
		Handler:           newHandler(srv, opts, true),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
	}
	if d := bodyReadTimeout(opts); d > 0 {
		hs.ReadTimeout = d
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.Close()
	timeout := 10 * time.Second
	if opts != nil && opts.ShutdownTimeout > 0 {
		timeout = opts.ShutdownTimeout
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// LimitBodyRead returns a handler that gives each request with a body d to
// deliver it, then runs h. It sets the connection's read deadline with
// http.ResponseController before h runs and clears it as soon as the body
// has been read to its end, so that a long response (an SSE
// stream) is not cut by the deadline. core.Server answers a body read that
// fails on the deadline with 408. Requests without a body (GET streams,
// DELETE, OPTIONS) are passed through untouched. d <= 0 returns h.
//
// NewHandler applies it with Options.BodyReadTimeout; use it directly when
// mounting core.Server on an http.Server of your own.
func LimitBodyRead(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		b := &deadlineBody{ReadCloser: r.Body, rc: *http.NewResponseController(w)}
		if b.rc.SetReadDeadline(time.Now().Add(d)) != nil {
			h.ServeHTTP(w, r) // not supported by this writer: nothing to clear
			return
		}
		r.Body = b
		h.ServeHTTP(w, r)
	})
}

// deadlineBody clears the read deadline once the body has been read to its
// end. A body left unread keeps the deadline, which then also bounds the
// server's discarding of it after the handler returns.
type deadlineBody struct {
	io.ReadCloser
	rc      http.ResponseController
	cleared bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.clear()
	}
	return n, err
}

func (b *deadlineBody) clear() {
	if !b.cleared {
		b.cleared = true
		b.rc.SetReadDeadline(time.Time{})
	}
}
