// Package proxy is a reverse proxy that spreads the requests of MCP clients
// over several replicas of one server, the way a serverless platform routes
// each request to whichever instance is free: consecutive requests of one
// client land on different replicas. It exists to test that a server keeps
// nothing in process that a client relies on (legacy sessions, the answers of
// server-to-client requests, the keys of sealed requestState).
//
// # Routing
//
// Strict round robin per request, never per connection (clients keep their
// connections alive): each request goes to the next routable replica in the
// order they were added. Requests of a legacy session (Mcp-Session-Id) have
// their own cursor, so two consecutive requests of one session always reach
// two different replicas when two or more are routable; other requests share
// one cursor (one client sending one request at a time also alternates). A
// replica is routable when its last health check passed and it is not
// draining.
//
// Responses stream through as they arrive (each write is flushed), so SSE
// responses, server-to-client requests on a call's stream and GET streams
// work. The client's Host header is passed on unchanged (the server's DNS
// rebinding protection sees what the client sent).
//
// # Health and failures
//
// A health check is a 2026-07-28 server/discover POST answered with 200 and a
// JSON-RPC result. Run checks every replica every Options.HealthInterval;
// Add checks a new replica until it passes before routing to it. A request
// that fails in transport (connection refused or reset, the replica died
// mid-response) marks the replica unhealthy at once, so the next request
// skips it; the proxy never retries a request itself (a POST may have had its
// effect): the client gets 502, or a cut-off response.
//
// # Rolling restarts
//
// Drain stops routing new requests to a replica and waits until its
// requests in flight have ended (GET streams excepted: they last as long as
// the session, and the server ends them when it shuts down); then the replica
// can be stopped, and Remove forgets it.
//
// # Log
//
// Every request is recorded (Records) and, when Options.Log is set, written
// as one line: sequence number, HTTP method, JSON-RPC kind, method and id,
// session, the replica that served it, status and duration.
package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultHealthInterval is the period of Run's health checks.
const DefaultHealthInterval = 500 * time.Millisecond

// maxBody bounds the request bodies the proxy reads to log them.
const maxBody = 8 << 20

// maxRecords bounds the records kept in memory.
const maxRecords = 200000

// Options configures a Proxy. The zero value is usable.
type Options struct {
	// Log receives one line per request and per change of a replica's
	// health; nil means none.
	Log io.Writer
	// HealthInterval is the period of Run's health checks; zero means
	// DefaultHealthInterval.
	HealthInterval time.Duration
}

// Proxy is an http.Handler that routes requests to replicas. It is safe for
// concurrent use. Build it with New.
type Proxy struct {
	logw      io.Writer
	interval  time.Duration
	transport *http.Transport
	health    *http.Client

	mu       sync.Mutex
	cond     *sync.Cond // signalled when a request ends
	replicas []*replica
	cursor   uint64
	sessions map[string]uint64 // session id -> its cursor
	served   map[string]int    // replica name -> requests sent, removed replicas included
	seq      int64
	records  []Record
	dropped  int
}

type replica struct {
	name     string
	target   *url.URL // scheme and host
	endpoint string   // the MCP endpoint, for health checks
	rp       *httputil.ReverseProxy
	healthy  bool
	draining bool
	inflight int // requests other than GET streams
	streams  int // GET streams
}

// Record describes one proxied request.
type Record struct {
	// Seq numbers the requests in the order they arrived, from 1.
	Seq int64
	// Replica is the name of the replica that served the request, "" when
	// none was routable.
	Replica string
	// HTTPMethod is POST, GET or DELETE.
	HTTPMethod string
	// Kind is "request", "notification", "response" (a client's answer to
	// a server-to-client request), "batch", or "" for a body that is not
	// JSON-RPC (GET, DELETE).
	Kind string
	// RPCMethod is the JSON-RPC method of a request or notification.
	RPCMethod string
	// RPCID is the JSON-RPC id as raw JSON ("" for none).
	RPCID string
	// Session is the Mcp-Session-Id of the request, if any.
	Session string
	// StateKey is the id of the key that sealed the request's
	// params.requestState (a 2026-07-28 retry), "" when it has none.
	StateKey string
	// SealedKey is the id of the key that sealed a requestState in the
	// response (the replica asked for input), "" when there is none.
	SealedKey string
	// RPCError is the code of a JSON-RPC error in the response, 0 for none
	// (only the first 64 KB of a response are looked at).
	RPCError int
	// Status is the HTTP status sent to the client (502 when the replica
	// could not be reached, 503 when no replica was routable).
	Status int
	// Err is the transport error, if the request failed in transport.
	Err string
	// Start and Duration time the request, until its response ended.
	Start    time.Time
	Duration time.Duration

	upstreamErr error // reading the replica's response failed
}

// upstreamBody records the error of reading a replica's response body,
// and keeps its first 64 KB for the record.
type upstreamBody struct {
	io.ReadCloser
	rec  *Record
	head []byte
}

func (u *upstreamBody) Read(b []byte) (int, error) {
	n, err := u.ReadCloser.Read(b)
	if room := 64<<10 - len(u.head); room > 0 {
		u.head = append(u.head, b[:min(n, room)]...)
	}
	if err != nil && err != io.EOF && u.rec.upstreamErr == nil {
		u.rec.upstreamErr = err
	}
	return n, err
}

var (
	sealedRE   = regexp.MustCompile(`"requestState":"v1\.([A-Za-z0-9_-]+)\.`)
	rpcErrorRE = regexp.MustCompile(`"error":\{"code":(-?[0-9]+)`)
)

func (u *upstreamBody) Close() error {
	if m := sealedRE.FindSubmatch(u.head); m != nil {
		u.rec.SealedKey = string(m[1])
	}
	if m := rpcErrorRE.FindSubmatch(u.head); m != nil {
		u.rec.RPCError, _ = strconv.Atoi(string(m[1]))
	}
	return u.ReadCloser.Close()
}

// New returns a proxy with no replicas.
func New(opts *Options) *Proxy {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = DefaultHealthInterval
	}
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	p := &Proxy{logw: o.Log, interval: o.HealthInterval, transport: tr,
		health:   &http.Client{Transport: tr, Timeout: 2 * time.Second},
		sessions: map[string]uint64{}, served: map[string]int{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *Proxy) logf(format string, args ...any) {
	if p.logw != nil {
		fmt.Fprintf(p.logw, "proxy: "+format+"\n", args...)
	}
}

// Add checks the replica at rawURL (its MCP endpoint's origin: the request's
// path is kept) until a health check passes or ctx ends, then routes
// requests to it under name.
func (p *Proxy) Add(ctx context.Context, name, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	target := &url.URL{Scheme: u.Scheme, Host: u.Host}
	r := &replica{name: name, target: target, endpoint: u.String()}
	r.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		Transport:     p.transport,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if rec, ok := resp.Request.Context().Value(recordKey{}).(*Record); ok {
				resp.Body = &upstreamBody{ReadCloser: resp.Body, rec: rec}
			}
			return nil
		},
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if req.Context().Err() == nil {
				p.setHealth(r, false, err.Error())
			}
			if rec, ok := req.Context().Value(recordKey{}).(*Record); ok {
				rec.Err = err.Error()
			}
			http.Error(w, "502 bad gateway: replica "+name+" failed", http.StatusBadGateway)
		},
	}
	p.mu.Lock()
	for _, o := range p.replicas {
		if o.name == name {
			p.mu.Unlock()
			return fmt.Errorf("proxy: replica %s already added", name)
		}
	}
	p.replicas = append(p.replicas, r)
	p.mu.Unlock()
	for {
		if err = p.check(ctx, r.endpoint); err == nil {
			p.setHealth(r, true, "added")
			return nil
		}
		select {
		case <-ctx.Done():
			p.Remove(name)
			return fmt.Errorf("proxy: replica %s never became healthy: %w (last: %v)", name, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Remove forgets a replica; requests it is serving go on.
func (p *Proxy) Remove(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.replicas {
		if r.name == name {
			p.replicas = append(p.replicas[:i:i], p.replicas[i+1:]...)
			return
		}
	}
}

// Drain stops routing new requests to the replica name and waits until it
// serves no request but GET streams, or ctx ends. It returns the number of
// requests still in flight (0 unless ctx ended first).
func (p *Proxy) Drain(ctx context.Context, name string) (int, error) {
	p.mu.Lock()
	r := p.find(name)
	if r == nil {
		p.mu.Unlock()
		return 0, fmt.Errorf("proxy: no replica %s", name)
	}
	r.draining = true
	p.mu.Unlock()
	p.logf("draining %s", name)
	defer p.wakeOnDone(ctx)()
	p.mu.Lock()
	defer p.mu.Unlock()
	for r.inflight > 0 && ctx.Err() == nil {
		p.cond.Wait()
	}
	p.logf("drained %s: %d requests still in flight, %d GET streams", name, r.inflight, r.streams)
	return r.inflight, nil
}

// Served returns the number of requests sent to each replica ever added.
func (p *Proxy) Served() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.served)
}

// InFlight returns the number of requests (GET streams excepted) the
// replica name is serving.
func (p *Proxy) InFlight(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.find(name); r != nil {
		return r.inflight
	}
	return 0
}

// wakeOnDone wakes the waiters on p.cond when ctx ends, so that a wait
// loop sees ctx.Err; the function it returns stops that.
func (p *Proxy) wakeOnDone(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
}

// WaitRecords waits until fn, given the requests recorded so far, reports
// true, or ctx ends. A request is recorded once it has ended.
func (p *Proxy) WaitRecords(ctx context.Context, fn func([]Record) bool) error {
	defer p.wakeOnDone(ctx)()
	p.mu.Lock()
	defer p.mu.Unlock()
	for !fn(p.records) {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.cond.Wait()
	}
	return nil
}

// WaitHealth waits until the replica name is healthy (or unhealthy, when
// healthy is false), or ctx ends.
func (p *Proxy) WaitHealth(ctx context.Context, name string, healthy bool) error {
	defer p.wakeOnDone(ctx)()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		r := p.find(name)
		if r == nil {
			return fmt.Errorf("proxy: no replica %s", name)
		}
		if r.healthy == healthy {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		p.cond.Wait()
	}
}

// Records returns a copy of the requests recorded so far (at most the last
// 200,000), in the order they arrived. A record is filed when its handler
// returns, which for concurrent or keep-alive requests can be after a later
// request's, so the copy is sorted by Seq.
func (p *Proxy) Records() []Record {
	p.mu.Lock()
	recs := append([]Record(nil), p.records...)
	p.mu.Unlock()
	slices.SortFunc(recs, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return recs
}

func (p *Proxy) find(name string) *replica {
	for _, r := range p.replicas {
		if r.name == name {
			return r
		}
	}
	return nil
}

func (p *Proxy) setHealth(r *replica, ok bool, why string) {
	p.mu.Lock()
	changed := r.healthy != ok
	r.healthy = ok
	p.cond.Broadcast()
	p.mu.Unlock()
	if changed {
		state := "unhealthy"
		if ok {
			state = "healthy"
		}
		p.logf("replica %s (%s) is %s: %s", r.name, r.target.Host, state, why)
	}
}

// discover is the body of a health check.
const discover = `{"jsonrpc":"2.0","id":"health","method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// check sends one health check to the MCP endpoint at endpoint.
func (p *Proxy) check(ctx context.Context, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(discover))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := p.health.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"result"`)) {
		return fmt.Errorf("server/discover: HTTP %d %.200s", resp.StatusCode, b)
	}
	return nil
}

// Run checks the health of every replica every HealthInterval until ctx
// ends.
func (p *Proxy) Run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		rs := append([]*replica(nil), p.replicas...)
		p.mu.Unlock()
		var wg sync.WaitGroup
		for _, r := range rs {
			wg.Go(func() {
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				err := p.check(cctx, r.endpoint)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					p.setHealth(r, false, err.Error())
				} else {
					p.setHealth(r, true, "health check passed")
				}
			})
		}
		wg.Wait()
	}
}

type recordKey struct{}

// pick chooses the replica of a request and counts it in flight.
func (p *Proxy) pick(session string, stream bool) *replica {
	p.mu.Lock()
	defer p.mu.Unlock()
	var routable []*replica
	for _, r := range p.replicas {
		if r.healthy && !r.draining {
			routable = append(routable, r)
		}
	}
	if len(routable) == 0 {
		return nil
	}
	var n uint64
	if session == "" {
		n = p.cursor
		p.cursor++
	} else {
		c, ok := p.sessions[session]
		if !ok {
			if len(p.sessions) >= 100000 {
				clear(p.sessions)
			}
			c = p.cursor
		}
		n = c
		p.sessions[session] = c + 1
	}
	r := routable[n%uint64(len(routable))]
	p.served[r.name]++
	if stream {
		r.streams++
	} else {
		r.inflight++
	}
	return r
}

func (p *Proxy) done(r *replica, stream bool, rec *Record) {
	p.mu.Lock()
	if stream {
		r.streams--
	} else {
		r.inflight--
	}
	if len(p.records) < maxRecords {
		p.records = append(p.records, *rec)
	} else {
		p.dropped++
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// ServeHTTP routes one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rec := &Record{HTTPMethod: req.Method, Session: req.Header.Get("Mcp-Session-Id"), Start: time.Now()}
	p.mu.Lock()
	p.seq++
	rec.Seq = p.seq
	p.mu.Unlock()
	if req.Body != nil && req.Method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(req.Body, maxBody))
		req.Body.Close()
		if err != nil {
			http.Error(w, "400 reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		describe(rec, body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	stream := req.Method == http.MethodGet
	r := p.pick(rec.Session, stream)
	if r == nil {
		rec.Status = http.StatusServiceUnavailable
		rec.Err = "no routable replica"
		p.mu.Lock()
		p.records = append(p.records, *rec)
		p.cond.Broadcast()
		p.mu.Unlock()
		p.logLine(rec)
		http.Error(w, "503 no replica available", http.StatusServiceUnavailable)
		return
	}
	rec.Replica = r.name
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		if v != nil {
			// ReverseProxy aborts the response when copying the body fails:
			// the replica died mid-response, or the client left (then
			// reading from the replica fails with context.Canceled, or
			// writing to the client fails).
			switch {
			case rec.upstreamErr != nil && !errors.Is(rec.upstreamErr, context.Canceled) && req.Context().Err() == nil:
				rec.Err = "response cut off by the replica: " + rec.upstreamErr.Error()
				p.setHealth(r, false, rec.Err)
			case rec.Err == "":
				rec.Err = "client went away"
			}
		}
		rec.Status = sw.status
		rec.Duration = time.Since(rec.Start)
		p.done(r, stream, rec)
		p.logLine(rec)
		if v != nil {
			panic(v)
		}
	}()
	if rec.Kind == "" && req.Method == http.MethodDelete && rec.Session != "" {
		p.mu.Lock()
		delete(p.sessions, rec.Session)
		p.mu.Unlock()
	}
	r.rp.ServeHTTP(sw, req.WithContext(context.WithValue(req.Context(), recordKey{}, rec)))
}

func (p *Proxy) logLine(rec *Record) {
	if p.logw == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", rec.Seq, rec.HTTPMethod)
	switch rec.Kind {
	case "request", "notification":
		fmt.Fprintf(&b, " %s %s", rec.Kind, rec.RPCMethod)
	case "":
	default:
		b.WriteString(" " + rec.Kind)
	}
	if rec.RPCID != "" {
		b.WriteString(" id=" + rec.RPCID)
	}
	if rec.StateKey != "" {
		b.WriteString(" state-key=" + rec.StateKey)
	}
	if rec.SealedKey != "" {
		b.WriteString(" sealed-key=" + rec.SealedKey)
	}
	if rec.RPCError != 0 {
		fmt.Fprintf(&b, " rpc-error=%d", rec.RPCError)
	}
	if rec.Session != "" {
		s := rec.Session
		if len(s) > 8 {
			s = s[:8]
		}
		b.WriteString(" session=" + s)
	}
	replica := rec.Replica
	if replica == "" {
		replica = "(none)"
	}
	fmt.Fprintf(&b, " -> %s %d %s", replica, rec.Status, rec.Duration.Round(time.Millisecond))
	if rec.Err != "" {
		b.WriteString(" error: " + rec.Err)
	}
	p.logf("%s", b.String())
}

// describe fills the JSON-RPC fields of rec from a POST body.
func describe(rec *Record, body []byte) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		rec.Kind = "batch"
		return
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return
	}
	rec.RPCMethod, rec.RPCID = m.Method, string(m.ID)
	var ps struct {
		RequestState string `json:"requestState"`
	}
	// A sealed state is "v1.<key id>.<payload>.<signature>".
	if json.Unmarshal(m.Params, &ps) == nil {
		if parts := strings.Split(ps.RequestState, "."); len(parts) == 4 {
			rec.StateKey = parts[1]
		}
	}
	switch {
	case m.Method != "" && m.ID != nil:
		rec.Kind = "request"
	case m.Method != "":
		rec.Kind = "notification"
	case m.Result != nil || m.Error != nil:
		rec.Kind = "response"
	}
}

// statusWriter records the status of a response; Unwrap lets
// http.ResponseController (which ReverseProxy uses to flush) reach the
// connection.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
