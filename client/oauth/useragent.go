package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
)

// Loopback is the user agent of a native client (RFC 8252 §7.3): it listens
// on a loopback port for the authorization server's redirect and opens the
// authorization URL with a caller-supplied function (a browser). Use its
// RedirectURL and Authorize in Config; Close it when done.
type Loopback struct {
	ln   net.Listener
	srv  *http.Server
	open func(authURL string) error
	path string

	mu      sync.Mutex
	waiting chan url.Values // the pending authorization, if any
}

// NewLoopback listens on 127.0.0.1 at an ephemeral port. open shows the
// authorization URL to the user (e.g. starts a browser); it must not block
// until the user is done.
func NewLoopback(open func(authURL string) error) (*Loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Loopback{ln: ln, open: open, path: "/callback"}
	l.srv = &http.Server{Handler: http.HandlerFunc(l.serve)}
	go l.srv.Serve(ln)
	return l, nil
}

// RedirectURL is the loopback redirect URI, http://127.0.0.1:PORT/callback.
func (l *Loopback) RedirectURL() string {
	return "http://" + l.ln.Addr().String() + l.path
}

func (l *Loopback) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != l.path || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	l.mu.Lock()
	ch := l.waiting
	l.waiting = nil
	l.mu.Unlock()
	if ch == nil {
		http.Error(w, "no authorization in progress", http.StatusBadRequest)
		return
	}
	ch <- r.URL.Query()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "Authorization received. You can close this window.")
}

// Authorize opens authURL and waits for the redirect (or ctx).
func (l *Loopback) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	ch := make(chan url.Values, 1)
	l.mu.Lock()
	if l.waiting != nil {
		l.mu.Unlock()
		return nil, errors.New("oauth: an authorization is already in progress")
	}
	l.waiting = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if l.waiting == ch {
			l.waiting = nil
		}
		l.mu.Unlock()
	}()
	if err := l.open(authURL); err != nil {
		return nil, err
	}
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the listener.
func (l *Loopback) Close() error { return l.srv.Close() }

// Headless returns a Config.Authorize for authorization servers that
// approve without a user (tests, automation): it GETs the authorization URL
// with hc, does not follow the redirect, and returns the query of its
// Location. hc nil means http.DefaultClient. The GET is bounded by
// DefaultRequestTimeout.
func Headless(hc *http.Client) func(ctx context.Context, authURL string) (url.Values, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(ctx context.Context, authURL string) (url.Values, error) {
		ctx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode < 300 || resp.StatusCode > 399 {
			return nil, fmt.Errorf("oauth: authorization endpoint answered %d, not a redirect", resp.StatusCode)
		}
		loc, err := resp.Location()
		if err != nil {
			return nil, err
		}
		return loc.Query(), nil
	}
}
