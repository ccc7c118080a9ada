// Package storeproxy stands between the replicas and DynamoDB (dynalite) so
// that tests can count what the replicas ask of the store and cut the store
// off, as a failing network or a regional outage would.
//
// It is a reverse proxy for the DynamoDB JSON 1.0 protocol: each request is
// one HTTP POST whose X-Amz-Target header names the operation
// ("DynamoDB_20120810.GetItem"). Counts tallies the operations that reached
// the store; Cut makes every request fail in transport until Restore (its
// connection is closed unanswered, as a refused or reset connection looks
// to the AWS SDK). A store that hangs rather than refuses is tested in
// core (TestTaskRunSurvivesHangingStore). Requests refused while cut are tallied
// separately (Refused), and Observe hooks see every request's operation and
// body, forwarded or refused, so a test can wait for an event (a write of a
// given record) instead of sleeping.
package storeproxy

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// Request is one request seen by the proxy.
type Request struct {
	// Op is the DynamoDB operation: "GetItem", "PutItem", "UpdateItem", ...
	Op string
	// Body is the request's JSON body.
	Body []byte
	// Refused reports whether the store was cut when it came.
	Refused bool
}

// Proxy is the store proxy. Its zero value is not usable: build it with New.
type Proxy struct {
	target *url.URL
	rp     *httputil.ReverseProxy
	srv    *http.Server
	// URL is the proxy's endpoint, for AWS_ENDPOINT_URL_DYNAMODB.
	URL string

	mu       sync.Mutex
	cut      bool
	counts   map[string]int
	refused  map[string]int
	watchers []func(Request)
}

// New starts a proxy on a loopback port forwarding to endpoint (dynalite's
// URL). Close stops it.
func New(endpoint string) (*Proxy, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: u, counts: map[string]int{}, refused: map[string]int{}}
	p.rp = httputil.NewSingleHostReverseProxy(u)
	p.srv = &http.Server{Handler: p}
	p.URL = "http://" + ln.Addr().String()
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

// Cut makes the store unreachable until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// Restore makes the store reachable again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Observe calls f (on the request's goroutine, so it must be quick) with
// every request from now on.
func (p *Proxy) Observe(f func(Request)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchers = append(p.watchers, f)
}

// Counts returns how many requests of each operation reached the store.
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return copyCounts(p.counts)
}

// Refused returns how many requests of each operation were refused while
// the store was cut.
func (p *Proxy) Refused() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return copyCounts(p.refused)
}

// copyCounts returns a copy of m, empty rather than nil.
func copyCounts(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	p.mu.Lock()
	cut := p.cut
	if cut {
		p.refused[op]++
	} else {
		p.counts[op]++
	}
	watchers := p.watchers
	p.mu.Unlock()
	for _, f := range watchers {
		f(Request{Op: op, Body: body, Refused: cut})
	}
	if cut {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.Host = p.target.Host
	p.rp.ServeHTTP(w, r)
}
