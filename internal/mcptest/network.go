package mcptest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Network is an in-memory network of HTTP servers, for tests that run in a
// testing/synctest bubble: a goroutine blocked on a real socket is not
// durably blocked, so the bubble's clock cannot advance past it, while one
// blocked on a net.Pipe is. Connections are net.Pipe pairs; servers speak
// plain HTTP (an https URL does not work). Outside a bubble it works the
// same way. Create it, its servers and its clients inside the bubble that
// uses them. A Network is safe for concurrent use.
type Network struct {
	mu         sync.Mutex
	listeners  map[string]*pipeListener // by host:port; "" serves the rest
	servers    []*http.Server
	transports []*http.Transport
}

// NewNetwork returns an empty network.
func NewNetwork() *Network { return &Network{listeners: map[string]*pipeListener{}} }

// Serve serves h at addr, a "host:port" as an HTTP client dials it (the
// host of an http URL, with port 80 when it names none), until Close. An
// empty addr serves every address that has no server of its own. Serving
// an address twice panics.
func (n *Network) Serve(addr string, h http.Handler) {
	addr = canonAddr(addr)
	l := &pipeListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	n.mu.Lock()
	if _, dup := n.listeners[addr]; dup {
		n.mu.Unlock()
		panic(fmt.Sprintf("mcptest: Network.Serve: %q is served already", addr))
	}
	n.listeners[addr] = l
	n.servers = append(n.servers, srv)
	n.mu.Unlock()
	go srv.Serve(l)
}

// ServeURL is Serve at the host and port of an http URL such as an
// httptest.Server's (only its scheme and host are read).
func (n *Network) ServeURL(rawURL string, h http.Handler) {
	host, _ := strings.CutPrefix(rawURL, "http://")
	host, _, _ = strings.Cut(host, "/")
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	n.Serve(host, h)
}

func canonAddr(addr string) string {
	if addr == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return strings.ToLower(addr)
	}
	return net.JoinHostPort(strings.ToLower(host), port)
}

// DialContext connects to the server at addr (network is ignored). An
// address that nothing serves gives an error wrapping
// syscall.ECONNREFUSED, as a closed port does.
func (n *Network) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	l, ok := n.listeners[canonAddr(addr)]
	if !ok {
		l, ok = n.listeners[""]
	}
	n.mu.Unlock()
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: "pipe", Err: fmt.Errorf("%s: %w", addr, syscall.ECONNREFUSED)}
	}
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "pipe", Err: fmt.Errorf("%s: %w", addr, syscall.ECONNREFUSED)}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Transport returns a new *http.Transport whose connections reach the
// servers of n, with no proxy. Close closes its idle connections.
func (n *Network) Transport() *http.Transport {
	tr := &http.Transport{DialContext: n.DialContext}
	n.mu.Lock()
	n.transports = append(n.transports, tr)
	n.mu.Unlock()
	return tr
}

// Client returns a new *http.Client on Transport, following redirects as
// http.Client does by default.
func (n *Network) Client() *http.Client { return &http.Client{Transport: n.Transport()} }

// Close stops every server, ends their connections and closes the idle
// connections of the transports n made. It may be called more than once.
func (n *Network) Close() {
	n.mu.Lock()
	servers, transports := n.servers, n.transports
	n.servers, n.transports = nil, nil
	n.mu.Unlock()
	for _, s := range servers {
		s.Close()
	}
	for _, tr := range transports {
		tr.CloseIdleConnections()
	}
}

// pipeListener is a net.Listener whose connections are net.Pipe ends.
type pipeListener struct {
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.addr) }

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }

// Serve serves h on a new in-memory Network at every address and returns a
// client whose connections all reach h: the one-server case of Network.
// Call it inside the synctest bubble that uses it; the network closes when
// the test ends.
func Serve(t testing.TB, h http.Handler) *http.Client {
	n := NewNetwork()
	n.Serve("", h)
	t.Cleanup(n.Close)
	return n.Client()
}
