package mcptest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
)

// DefaultURL is the endpoint Connect's client connects to when
// Options.URL is empty: a loopback address, as a local development
// server's, which a core.Server's DNS rebinding protection accepts.
const DefaultURL = "http://127.0.0.1/mcp"

// Options configures Connect. A nil *Options means defaults.
type Options struct {
	// Mode is the era: client.ModeAuto (zero: the client probes with
	// server/discover, as against any server), client.ModeModern
	// (2026-07-28) or client.ModeLegacy (an initialize-based session,
	// 2025-11-25).
	Mode client.Mode
	// Client configures everything else of the client (the Elicitation,
	// Sampling and Roots handlers, Tasks, LogLevel, Notification,
	// TokenSource, Header, ...). Connect copies it and sets Mode and
	// HTTPClient itself. Nil means defaults.
	Client *client.Options
	// Record, if not nil, records every HTTP exchange of the connection,
	// the handshake and the legacy session's GET stream and DELETE
	// included.
	Record *Recorder
	// URL is the endpoint the client connects to, and so the Host the
	// server sees and the address it is reached on (see Transport). Zero
	// means DefaultURL. Set it to the resource URL an auth.Authenticator
	// expects, or to a non-loopback URL to see the server as a deployed
	// one is seen.
	URL string
}

// Connect returns a client.Conn connected to srv in process, through
// Transport: no socket, and no goroutine left running once the test ends.
// It fails the test (t.Fatal) if the connection cannot be made, so call it
// from the test's goroutine.
//
// When the test ends (t.Cleanup), Connect closes the Conn, which ends a
// legacy session (DELETE) and its GET stream, and waits until every
// handler the connection started has returned; a close that fails is
// reported with t.Error. It does not close srv, which the test owns:
// several Conns may share it.
//
// The client reaches srv as over HTTP, so the test exercises what a
// deployed server does: era detection, headers, SSE streams (progress and
// a legacy call's server requests arrive as the handler flushes them),
// sessions, cancellation (cancelling a call's context cancels the handler's
// context), authentication when srv has an Authenticator.
func Connect(t testing.TB, srv *core.Server, opts *Options) *client.Conn {
	t.Helper()
	if srv == nil {
		t.Fatal("mcptest: Connect to a nil *core.Server")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	var co client.Options
	if o.Client != nil {
		co = *o.Client
	}
	url := o.URL
	if url == "" {
		url = DefaultURL
	}
	tr := &transport{h: srv}
	var rt http.RoundTripper = tr
	if o.Record != nil {
		rt = o.Record.Wrap(tr)
	}
	co.Mode = o.Mode
	co.HTTPClient = &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(tr.wait) // runs after the Close below: cleanups run last first
	c, err := client.Connect(t.Context(), url, &co)
	if err != nil {
		t.Fatalf("mcptest: connecting to the server in %v: %v", o.Mode, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("mcptest: closing the connection: %v", err)
		}
	})
	return c
}

// Server serves srv on a real loopback socket (an httptest.Server) until
// the test ends, and returns its endpoint URL, ending in /mcp: for tests
// that need a socket, such as a client in another process. Connect needs
// none. When the test ends, the server's connections are closed (which
// ends streams still open) and the server shut down.
func Server(t testing.TB, srv *core.Server) string {
	t.Helper()
	if srv == nil {
		t.Fatal("mcptest: Server of a nil *core.Server")
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + "/mcp"
}
