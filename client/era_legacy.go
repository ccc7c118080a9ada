package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/mcp"
)

// legacyEra speaks the initialize-based revisions (2025-11-25,
// 2025-06-18, 2025-03-26): requests run in a session (Mcp-Session-Id) that
// initialize opened; the server asks for input with requests on the
// response stream or the session's GET stream, which the client answers by
// POST; a broken stream is resumed with Last-Event-ID; a call given up is
// cancelled with notifications/cancelled. Results are never cached (the
// revisions have no cache hints).
//
// The session of the Conn's own credential is def; each per-call
// credential (CallOptions.Token) gets a session of its own, at most
// Options.MaxSessions of them, the least recently used ended first.
type legacyEra struct {
	c *Conn
	v string // the version def's first initialize agreed on
	// sessionless: Options.NoInitialize without Options.SessionID; every
	// call runs without a session, with its own credential.
	sessionless bool
	def         *session

	listeners listeners // the Listen calls

	mu     sync.Mutex
	byAuth map[string]*session
	order  []string // least recently used first
}

var _ era = (*legacyEra)(nil)

// startLegacy makes c a legacy Conn and initializes its default session,
// asking for version; with Options.NoInitialize it sends nothing: the Conn
// is sessionless and speaks 2025-03-26, which has no MCP-Protocol-Version
// header. It returns c.
func startLegacy(ctx context.Context, c *Conn, version string) (*Conn, error) {
	l := &legacyEra{c: c, byAuth: map[string]*session{}}
	c.era = l
	if c.opts.NoInitialize {
		v := mcp.ProtocolVersion20250326
		l.v, l.sessionless = v, true
		l.def = &session{l: l, want: v, version: v, ready: true, init: &Initialization{InitializeResult: mcp.InitializeResult{ProtocolVersion: v}}}
		return c, nil
	}
	l.def = &session{l: l, want: version}
	if err := l.def.ensure(ctx, ""); err != nil {
		return nil, err
	}
	_, l.v = l.def.snapshot()
	return c, nil
}

// adoptLegacy makes c a legacy Conn whose default session is an existing
// one (Options.SessionID), without a network call but the GET stream.
func adoptLegacy(c *Conn, id, version string) *legacyEra {
	l := &legacyEra{c: c, v: version, byAuth: map[string]*session{}}
	c.era = l
	l.def = &session{l: l, want: version, id: id, version: version, ready: true, init: &Initialization{InitializeResult: mcp.InitializeResult{ProtocolVersion: version}}}
	if !c.opts.NoGETStream {
		l.def.startGET()
	}
	return l
}

func (l *legacyEra) version() string { return l.v }

func (l *legacyEra) session() (string, *Initialization) {
	id, _ := l.def.snapshot()
	return id, l.def.initResult()
}

// keepTool keeps every tool: x-mcp-header is a 2026-07-28 feature.
func (l *legacyEra) keepTool(*mcp.Tool) bool { return true }

// notified delivers a notification to the Listen calls.
func (l *legacyEra) notified(n Notification) { l.listeners.deliver(n) }

// discover: the initialize-based revisions have no server/discover.
func (l *legacyEra) discover(context.Context, *callOptions) (*Discovery, error) {
	return nil, errors.New("mcp client: server/discover on a legacy connection")
}

// call sends r in the session of its credential.
func (l *legacyEra) call(ctx context.Context, r request) (json.RawMessage, error) {
	s, err := l.sessionFor(ctx, r.co)
	if err != nil {
		return nil, err
	}
	return l.callIn(ctx, s, r.method, r.params, r.co, true)
}

// callOnce is call: a legacy call answers the server's requests for input
// on its stream, so no round is left to the caller.
func (l *legacyEra) callOnce(ctx context.Context, r request) (json.RawMessage, *Continuation, error) {
	res, err := l.call(ctx, r)
	return res, nil, err
}

// sessionFor returns the session of a call's credential.
// A sessionless Conn (Options.NoInitialize) runs every call without a
// session, each with its own credential.
func (l *legacyEra) sessionFor(ctx context.Context, co *callOptions) (*session, error) {
	key, own := co.ownAuth()
	if !own || l.sessionless {
		return l.def, l.def.ensure(ctx, "")
	}
	l.mu.Lock()
	s, ok := l.byAuth[key]
	if ok {
		for i, k := range l.order {
			if k == key {
				l.order = append(l.order[:i], l.order[i+1:]...)
				break
			}
		}
	} else {
		_, v := l.def.snapshot()
		s = &session{l: l, co: &callOptions{authz: key, hasAuth: true}, want: v}
		l.byAuth[key] = s
		if len(l.order) >= l.c.opts.MaxSessions {
			old := l.order[0]
			l.order = l.order[1:]
			ev := l.byAuth[old]
			delete(l.byAuth, old)
			go ev.end(context.Background()) // never skip initialize, so end it
		}
	}
	l.order = append(l.order, key)
	l.mu.Unlock()
	return s, s.ensure(ctx, "")
}

// close ends every session the Conn created (DELETE) and their GET streams.
func (l *legacyEra) close(ctx context.Context) error {
	l.mu.Lock()
	all := []*session{l.def}
	for _, s := range l.byAuth {
		all = append(all, s)
	}
	l.byAuth = map[string]*session{}
	l.order = nil
	l.mu.Unlock()
	var first error
	for _, s := range all {
		if err := s.end(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// maxResumes bounds the reconnections of one request's stream without
// progress.
const maxResumes = 5

// callIn sends a request in session s. renew lets a 404 start a new
// session and send the request again; requests sent by initialize itself
// (which holds the session's initMu) pass false.
//
// With middleware the call is one Call, its 404 renewal and stream
// resumptions included.
func (l *legacyEra) callIn(ctx context.Context, s *session, method string, p params, co *callOptions, renew bool) (json.RawMessage, error) {
	if l.c.cl.mw == nil {
		return l.callWith(ctx, s, method, p, co, renew, nil, nil)
	}
	sid, ver := s.snapshot()
	req := &Call{Method: method, Target: targetOf(method, p), Version: ver, SessionID: sid}
	resp, err := l.c.intercept(ctx, req, func(ctx context.Context, req *Call) (*Outcome, error) {
		res, err := l.callWith(ctx, s, method, p, co, renew, encodeMeta(req.Meta), req.Header)
		if err != nil {
			return nil, err
		}
		return req.outcome(res, resultComplete), nil
	})
	if err != nil {
		return nil, err
	}
	return resp.Result, nil
}

// callWith is callIn with the _meta members (without braces; nil: none)
// and HTTP headers of the request's middleware.
func (l *legacyEra) callWith(ctx context.Context, s *session, method string, p params, co *callOptions, renew bool, mwMeta []byte, mwHeader http.Header) (json.RawMessage, error) {
	c := l.c
	progress := co.progressFn()
	for attempt := 0; ; attempt++ {
		id := c.nextID.Add(1)
		meta := mwMeta
		if progress != nil {
			meta = appendProgress(meta, id)
		}
		body := appendRequest(nil, id, method, p, meta, false)
		sid, ver := s.snapshot()
		// The call's options carry its headers; its credential is the
		// session's (sessionFor chose the session by it).
		hco := s.co
		if co != nil {
			hco = co
		}
		resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: method, co: hco, mw: mwHeader}, func(h http.Header) {
			s.headers(h, sid, ver)
		})
		if err != nil {
			if ctx.Err() != nil {
				l.cancelled(s, id, ctx.Err())
				return nil, ctx.Err()
			}
			if errors.Is(err, ErrTimeout) {
				// The server may have the request: a timed-out call is given
				// up as a cancelled one is.
				l.cancelled(s, id, err)
				return nil, err
			}
			if sessionGone(err, sid) && renew && attempt == 0 {
				// The session is gone: start a new one and send the
				// request again, once. The 404 says the server did not
				// process the request (a server looks the session up
				// before it handles the message), so sending it again
				// repeats nothing, even for a tools/call (2025-11-25
				// basic/transports §Session Management).
				if err := s.ensure(ctx, sid); err != nil {
					return nil, err
				}
				continue
			}
			if sessionGone(err, sid) {
				s.expire(sid)
			}
			return nil, err
		}
		x := &exchange{c: c, id: id, method: method, progress: progress, srv: s, maxInputs: c.opts.MaxRounds}
		res, err := x.read(ctx, resp)
		for resumes := 0; err != nil && errors.Is(err, ErrStreamBroken) && x.lastID != "" && resumes < maxResumes; resumes++ {
			res, err = l.resume(ctx, s, x)
		}
		if err != nil && ctx.Err() != nil {
			l.cancelled(s, id, ctx.Err())
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrMaxRounds) || errors.Is(err, ErrTimeout) {
			l.cancelled(s, id, err) // the server may stop asking and working
		}
		return res, err
	}
}

// waitRetry waits a stream's retry delay d, one second when the server
// gave none, and returns ctx's error if ctx ends first.
func waitRetry(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		d = time.Second
	}
	return sleep(ctx, d)
}

// resume waits the stream's retry delay and reconnects with GET and
// Last-Event-ID (2025-11-25 basic/transports §Resumability and Redelivery).
func (l *legacyEra) resume(ctx context.Context, s *session, x *exchange) (json.RawMessage, error) {
	if err := waitRetry(ctx, x.retry); err != nil {
		return nil, err
	}
	sid, ver := s.snapshot()
	last := x.lastID
	resp, err := l.c.send(ctx, &httpReq{method: http.MethodGet, rpc: x.method, co: s.co}, func(h http.Header) {
		h["Accept"] = []string{"text/event-stream"}
		if sid != "" {
			h["Mcp-Session-Id"] = []string{sid}
		}
		setVersionHeader(h, ver)
		h["Last-Event-Id"] = []string{last}
	})
	if err != nil {
		if sessionGone(err, sid) {
			// The response is lost with the session; the request was
			// processed, so it is not sent again.
			s.expire(sid)
		}
		return nil, err
	}
	return x.read(ctx, resp)
}

// cancelled tells the server a request was given up (2025-11-25
// basic/utilities/cancellation): in legacy, closing the stream is not a
// cancellation.
func (l *legacyEra) cancelled(s *session, id int64, reason error) {
	p := append([]byte(`{"requestId":`), strconv.FormatInt(id, 10)...)
	p = append(append(p, `,"reason":`...), quoteJSON(reason.Error())...)
	p = append(p, '}')
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.notify(ctx, "notifications/cancelled", p); err != nil {
		l.c.cl.log.Warn("mcp client: notifications/cancelled failed", "err", err)
	}
}

// listen registers fn for the session's change notifications (they come on
// the GET stream and the calls' streams), subscribing to the filter's
// resources first (resources/subscribe; sent again in a session that
// replaces an ended one), until ctx ends.
func (l *legacyEra) listen(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification)) error {
	want := map[string]bool{
		"notifications/tools/list_changed":     f.ToolsListChanged,
		"notifications/prompts/list_changed":   f.PromptsListChanged,
		"notifications/resources/list_changed": f.ResourcesListChanged,
		"notifications/resources/updated":      len(f.ResourceSubscriptions) > 0,
	}
	for _, uri := range f.ResourceSubscriptions {
		if _, err := l.callIn(ctx, l.def, "resources/subscribe", params{{"uri", quoteJSON(uri)}}, nil, true); err != nil {
			return err
		}
	}
	if ack != nil {
		ack(f)
	}
	var mu sync.Mutex
	key := l.listeners.add(f.ResourceSubscriptions, func(n Notification) {
		if want[n.Method] && fn != nil {
			mu.Lock()
			fn(n)
			mu.Unlock()
		}
	})
	<-ctx.Done()
	l.listeners.remove(key)
	return nil
}

// listeners are the Listen calls of a legacy Conn.
type listeners struct {
	mu  sync.Mutex
	fns map[int]func(Notification)
	// uris are the resource subscriptions of each Listen call, sent again
	// when the session is replaced (they belong to the session).
	uris map[int][]string
	n    int
}

// add registers fn, with the resources its Listen subscribed to, and
// returns its key.
func (l *listeners) add(uris []string, fn func(Notification)) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fns == nil {
		l.fns = map[int]func(Notification){}
	}
	l.n++
	if len(uris) > 0 {
		if l.uris == nil {
			l.uris = map[int][]string{}
		}
		l.uris[l.n] = uris
	}
	l.fns[l.n] = fn
	return l.n
}

// remove drops the Listen call of key.
func (l *listeners) remove(key int) {
	l.mu.Lock()
	delete(l.fns, key)
	delete(l.uris, key)
	l.mu.Unlock()
}

// subscriptions returns the resource URIs the Listen calls subscribed to.
func (l *listeners) subscriptions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []string
	for _, u := range l.uris {
		all = append(all, u...)
	}
	return all
}

// deliver hands n to every Listen call.
func (l *listeners) deliver(n Notification) {
	l.mu.Lock()
	fns := make([]func(Notification), 0, len(l.fns))
	for _, f := range l.fns {
		fns = append(fns, f)
	}
	l.mu.Unlock()
	for _, f := range fns {
		f(n)
	}
}

// checkLegacyOptions checks the options that name a legacy session or
// version (Options.SessionID, SessionVersion, LegacyVersion), defaulting
// SessionVersion to the newest legacy version.
func checkLegacyOptions(o *Options) error {
	if o.SessionID != "" {
		if o.SessionVersion == "" {
			o.SessionVersion = legacyVersions[0]
		}
		switch {
		case !visibleASCII(o.SessionID):
			return errors.New("mcp client: Options.SessionID must be visible ASCII")
		case !isLegacy(o.SessionVersion):
			return fmt.Errorf("mcp client: Options.SessionVersion %q is not a legacy version", o.SessionVersion)
		case o.Mode == ModeModern:
			return errors.New("mcp client: Options.SessionID needs a legacy connection, not ModeModern")
		}
	}
	if o.LegacyVersion != "" && !isLegacy(o.LegacyVersion) {
		return fmt.Errorf("mcp client: Options.LegacyVersion %q is not a legacy version", o.LegacyVersion)
	}
	return nil
}

func (*legacyEra) tasks() bool { return false }

func (*legacyEra) forward(context.Context, json.RawMessage, func(Notification)) (json.RawMessage, error) {
	return nil, errors.New("mcp client: Forward needs a 2026-07-28 connection")
}
