package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/mcp"
)

// legacyState holds the sessions of a legacy Conn: the default one (the
// TokenSource's credential) and one per per-call credential, bounded.
type legacyState struct {
	def *session

	listen listeners // the Listen calls

	mu     sync.Mutex
	byAuth map[string]*session
	order  []string // least recently used first
}

// session is one legacy MCP session (2025-11-25 basic/transports §Session
// Management), or, with Options.NoInitialize, the sessionless stand-in of
// one: never initialized, no id.
type session struct {
	c       *Conn
	co      *callOptions // the credential; nil = the TokenSource's
	want    string       // the version asked for in initialize
	initMu  sync.Mutex   // serialises initialize
	mu      sync.Mutex
	id      string
	version string
	init    *Initialization
	ready   bool
	// owned: this Conn created the session (initialize), so Close ends it;
	// false for an adopted one (Options.SessionID).
	owned bool
	// stopGET ends the session's GET stream.
	stopGET context.CancelFunc
}

func (s *session) snapshot() (id, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.version
}

func (s *session) initResult() *Initialization {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}

// startLegacy makes c a legacy Conn and initializes its default session;
// with Options.NoInitialize it sends nothing: the Conn is sessionless and
// speaks 2025-03-26, which has no MCP-Protocol-Version header.
func (c *Conn) startLegacy(ctx context.Context, version string) error {
	c.modern = false
	c.legacy = &legacyState{byAuth: map[string]*session{}}
	if c.opts.NoInitialize {
		v := mcp.ProtocolVersion20250326
		c.legacy.def = &session{c: c, want: v, version: v, ready: true, init: &Initialization{InitializeResult: mcp.InitializeResult{ProtocolVersion: v}}}
		c.version = v
		return nil
	}
	c.legacy.def = &session{c: c, want: version}
	if err := c.legacy.def.ensure(ctx, ""); err != nil {
		return err
	}
	c.version = c.legacy.def.version
	return nil
}

// adoptLegacy makes c a legacy Conn whose default session is an existing
// one (Options.SessionID), without a network call but the GET stream.
func (c *Conn) adoptLegacy(id, version string) {
	c.modern = false
	c.legacy = &legacyState{byAuth: map[string]*session{}}
	s := &session{c: c, want: version, id: id, version: version, ready: true, init: &Initialization{InitializeResult: mcp.InitializeResult{ProtocolVersion: version}}}
	c.legacy.def = s
	c.version = version
	if !c.opts.NoGETStream {
		s.startGET()
	}
}

// sessionless reports whether the Conn runs without sessions
// (Options.NoInitialize without Options.SessionID).
func (l *legacyState) sessionless(c *Conn) bool { return c.opts.NoInitialize && c.opts.SessionID == "" }

// expire marks the session as ended by the server if id is still its id
// (a 404 to a request that carried it): the next request starts a new
// session (2025-11-25 basic/transports §Session Management).
func (s *session) expire(id string) {
	s.mu.Lock()
	if id != "" && s.id == id {
		s.ready = false
	}
	s.mu.Unlock()
}

// ensure initializes the session unless it is ready; failedID, when not
// empty, is a session id the server no longer knows (404): if it is still
// the current one, the session starts over.
func (s *session) ensure(ctx context.Context, failedID string) error {
	s.initMu.Lock()
	defer s.initMu.Unlock()
	s.mu.Lock()
	if s.ready && (failedID == "" || s.id != failedID) {
		s.mu.Unlock()
		return nil
	}
	s.ready, s.id = false, ""
	s.mu.Unlock()
	s.stopGETStream()
	return s.initialize(ctx)
}

// initialize sends initialize (without a session id) and then
// notifications/initialized (2025-11-25 basic/lifecycle §Initialization).
func (s *session) initialize(ctx context.Context) error {
	c := s.c
	id := c.nextID.Add(1)
	pb := append([]byte(`{"protocolVersion":`), quoteJSON(s.want)...)
	pb = append(append(pb, `,"capabilities":`...), c.capsJSON...)
	ij, _ := json.Marshal(&c.opts.ClientInfo)
	pb = append(append(pb, `,"clientInfo":`...), ij...)
	pb = append(pb, '}')
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"initialize","params":`)
	body = append(append(body, pb...), '}')
	resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: "initialize", co: s.co}, func(h http.Header) {
		h["Content-Type"] = []string{"application/json"}
		h["Accept"] = []string{acceptBoth}
	})
	if err != nil {
		return err
	}
	sid := resp.Header.Get(mcp.HeaderSessionID)
	x := &exchange{c: c, id: id, method: "initialize", sess: s}
	res, err := x.read(ctx, resp)
	if err != nil {
		return err
	}
	var ir Initialization
	if err := json.Unmarshal(res, &ir.InitializeResult); err != nil {
		return protocolError("initialize result: %v", err)
	}
	ir.Raw = res
	if !isLegacy(ir.ProtocolVersion) {
		// The server answered with a version we do not speak: disconnect
		// (2025-11-25 basic/lifecycle §Version Negotiation).
		return fmt.Errorf("%w: initialize answered %q", ErrNoCommonVersion, ir.ProtocolVersion)
	}
	s.mu.Lock()
	s.id, s.version, s.init, s.owned = sid, ir.ProtocolVersion, &ir, true
	s.mu.Unlock()
	if err := s.notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	if c.opts.LogLevel != "" && ir.Capabilities.Logging != nil {
		p := params{{"level", quoteJSON(string(c.opts.LogLevel))}}
		if _, err := c.callLegacyIn(ctx, s, "logging/setLevel", p, s.co, false); err != nil {
			return err
		}
	}
	if s == c.legacy.def {
		// A session that replaces an ended one: the Listen calls'
		// resource subscriptions went with the old one.
		for _, uri := range c.legacy.listen.subscriptions() {
			if _, err := c.callLegacyIn(ctx, s, "resources/subscribe", params{{"uri", quoteJSON(uri)}}, nil, false); err != nil {
				c.log.WarnContext(ctx, "mcp client: resources/subscribe in the new session failed", "uri", uri, "err", err)
			}
		}
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	if !c.opts.NoGETStream {
		// Wait until the stream is open (or refused): a server may send
		// a request there as soon as the next call arrives.
		ready := s.startGET()
		t := time.NewTimer(getOpenWait)
		select {
		case <-ready:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	return nil
}

// getOpenWait bounds how long initialize waits for the GET stream to open.
const getOpenWait = 2 * time.Second

// startGET opens the session's GET stream, on which the server may send
// requests and notifications unrelated to a client request (2025-11-25
// basic/transports §Listening for Messages from the Server). A server that
// answers 405 has none.
func (s *session) startGET() <-chan struct{} {
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	if s.stopGET != nil {
		s.stopGET()
	}
	s.stopGET = cancel
	s.mu.Unlock()
	go s.getLoop(ctx, ready)
	return ready
}

func (s *session) stopGETStream() {
	s.mu.Lock()
	if s.stopGET != nil {
		s.stopGET()
		s.stopGET = nil
	}
	s.mu.Unlock()
}

func (s *session) getLoop(ctx context.Context, ready chan struct{}) {
	defer func() {
		if ready != nil {
			close(ready)
		}
	}()
	c := s.c
	x := &exchange{c: c, id: 0, method: "GET", sess: s} // id 0 matches no request
	for attempt := 0; attempt < maxResumes && ctx.Err() == nil; attempt++ {
		sid, ver := s.snapshot()
		last := x.lastID
		resp, err := c.send(ctx, &httpReq{method: http.MethodGet, co: s.co}, func(h http.Header) {
			h["Accept"] = []string{"text/event-stream"}
			if sid != "" {
				h["Mcp-Session-Id"] = []string{sid}
			}
			if ver != "" && ver != mcp.ProtocolVersion20250326 {
				h["Mcp-Protocol-Version"] = []string{ver}
			}
			if last != "" {
				h["Last-Event-Id"] = []string{last}
			}
		})
		if err != nil {
			if sessionGone(err, sid) {
				s.expire(sid)
			}
			return // 405: no GET stream; anything else: give up quietly
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			resp.Body.Close()
			return
		}
		if ready != nil {
			close(ready)
			ready = nil
		}
		before := x.lastID
		_, err = x.readSSE(ctx, resp.Body, resp.StatusCode)
		resp.Body.Close()
		// A stream silent for StreamIdleTimeout may be a dead connection:
		// open it again, resumable or not.
		idle := errors.Is(err, ErrTimeout)
		if x.lastID == "" && !idle {
			return // not resumable
		}
		if x.lastID != before || idle {
			attempt = 0 // progress: the budget is per silent reconnect
		}
		d := x.retry
		if d <= 0 {
			d = time.Second
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// legacyHeaders sets the headers of a request in session s.
func (s *session) headers(h http.Header, sid, version string) {
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{acceptBoth}
	if sid != "" {
		h["Mcp-Session-Id"] = []string{sid}
	}
	// 2025-03-26 has no MCP-Protocol-Version header.
	if version != "" && version != mcp.ProtocolVersion20250326 {
		h["Mcp-Protocol-Version"] = []string{version}
	}
}

// notify POSTs a notification (the server answers 202).
func (s *session) notify(ctx context.Context, method string, p json.RawMessage) error {
	body := []byte(`{"jsonrpc":"2.0","method":`)
	body = appendJSONString(body, method)
	if p != nil {
		body = append(append(body, `,"params":`...), p...)
	}
	body = append(body, '}')
	return s.post(ctx, method, body)
}

// post sends a notification or a response and drains the answer.
func (s *session) post(ctx context.Context, method string, body []byte) error {
	sid, ver := s.snapshot()
	resp, err := s.c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: method, co: s.co}, func(h http.Header) {
		s.headers(h, sid, ver)
	})
	if err != nil {
		if sessionGone(err, sid) {
			s.expire(sid) // a notification or answer is not re-sent
		}
		return err
	}
	resp.Body.Close()
	return nil
}

// sessionFor returns the session of a call's credential.
// A sessionless Conn (Options.NoInitialize) runs every call without a
// session, each with its own credential.
func (l *legacyState) sessionFor(ctx context.Context, c *Conn, co *callOptions) (*session, error) {
	if co == nil || !co.hasAuth || l.sessionless(c) {
		return l.def, l.def.ensure(ctx, "")
	}
	key := co.authz
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
		s = &session{c: c, co: &callOptions{authz: key, hasAuth: true}, want: v}
		l.byAuth[key] = s
		if len(l.order) >= c.opts.MaxSessions {
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

func (l *legacyState) close(ctx context.Context, c *Conn) error {
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

// end sends DELETE for the session (2025-11-25 basic/transports §Session
// Management); 405 (the server does not let clients end sessions) is fine.
func (s *session) end(ctx context.Context) error {
	s.stopGETStream()
	s.mu.Lock()
	sid, ver, owned := s.id, s.version, s.owned
	s.mu.Unlock()
	if sid == "" || !owned {
		return nil // no session, or an adopted one: not this Conn's to end
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := s.c.send(ctx, &httpReq{method: http.MethodDelete, rpc: "", co: s.co}, func(h http.Header) {
		h["Mcp-Session-Id"] = []string{sid}
		if ver != mcp.ProtocolVersion20250326 {
			h["Mcp-Protocol-Version"] = []string{ver}
		}
	})
	s.mu.Lock()
	s.id, s.ready = "", false
	s.mu.Unlock()
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && (he.StatusCode == http.StatusMethodNotAllowed || he.StatusCode == http.StatusNotFound) {
			return nil
		}
		return err
	}
	resp.Body.Close()
	return nil
}

// callLegacy sends a request in the session of the call's credential.
func (c *Conn) callLegacy(ctx context.Context, method string, p params, co *callOptions) (json.RawMessage, error) {
	s, err := c.legacy.sessionFor(ctx, c, co)
	if err != nil {
		return nil, err
	}
	return c.callLegacyIn(ctx, s, method, p, co, true)
}

// maxResumes bounds the reconnections of one request's stream without
// progress.
const maxResumes = 5

// callLegacyIn sends a request in session s. renew lets a 404 start a new
// session and send the request again; requests sent by initialize itself
// (which holds the session's initMu) pass false.
func (c *Conn) callLegacyIn(ctx context.Context, s *session, method string, p params, co *callOptions, renew bool) (json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		id := c.nextID.Add(1)
		var meta []byte
		if co != nil && co.progress != nil {
			meta = append([]byte(`"progressToken":`), strconv.FormatInt(id, 10)...)
		}
		body := appendRequest(nil, id, method, p, meta, false)
		sid, ver := s.snapshot()
		// The call's options carry its headers; its credential is the
		// session's (sessionFor chose the session by it).
		hco := s.co
		if co != nil {
			hco = co
		}
		resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: method, co: hco}, func(h http.Header) {
			s.headers(h, sid, ver)
		})
		if err != nil {
			if ctx.Err() != nil {
				c.cancelled(s, id, ctx.Err())
				return nil, ctx.Err()
			}
			if errors.Is(err, ErrTimeout) {
				// The server may have the request: a timed-out call is given
				// up as a cancelled one is.
				c.cancelled(s, id, err)
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
		x := &exchange{c: c, id: id, method: method, sess: s, maxInputs: c.opts.MaxRounds}
		if co != nil {
			x.progress = co.progress
		}
		res, err := x.read(ctx, resp)
		for resumes := 0; err != nil && errors.Is(err, ErrStreamBroken) && x.lastID != "" && resumes < maxResumes; resumes++ {
			res, err = c.resume(ctx, s, x)
		}
		if err != nil && ctx.Err() != nil {
			c.cancelled(s, id, ctx.Err())
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrMaxRounds) || errors.Is(err, ErrTimeout) {
			c.cancelled(s, id, err) // the server may stop asking and working
		}
		return res, err
	}
}

// sessionGone reports whether err is a 404 to a request that carried the
// session id sid: whatever the body (empty, or a JSON-RPC error such as the
// official TypeScript SDK's -32001 "Session not found"), the server no
// longer knows the session and the client MUST start a new one (2025-11-25
// basic/transports §Session Management).
func sessionGone(err error, sid string) bool {
	if sid == "" || err == nil {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusNotFound
	}
	var re *mcp.Error
	return errors.As(err, &re) && re.ResponseStatus() == http.StatusNotFound
}

// resume waits the stream's retry delay and reconnects with GET and
// Last-Event-ID (2025-11-25 basic/transports §Resumability and Redelivery).
func (c *Conn) resume(ctx context.Context, s *session, x *exchange) (json.RawMessage, error) {
	d := x.retry
	if d <= 0 {
		d = time.Second
	}
	t := time.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return nil, ctx.Err()
	case <-t.C:
	}
	sid, ver := s.snapshot()
	last := x.lastID
	resp, err := c.send(ctx, &httpReq{method: http.MethodGet, rpc: x.method, co: s.co}, func(h http.Header) {
		h["Accept"] = []string{"text/event-stream"}
		if sid != "" {
			h["Mcp-Session-Id"] = []string{sid}
		}
		if ver != mcp.ProtocolVersion20250326 {
			h["Mcp-Protocol-Version"] = []string{ver}
		}
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
func (c *Conn) cancelled(s *session, id int64, reason error) {
	p := append([]byte(`{"requestId":`), strconv.FormatInt(id, 10)...)
	p = append(append(p, `,"reason":`...), quoteJSON(reason.Error())...)
	p = append(p, '}')
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.notify(ctx, "notifications/cancelled", p); err != nil {
		c.log.Warn("mcp client: notifications/cancelled failed", "err", err)
	}
}

// answerServerRequest answers a legacy server→client request by POSTing the
// response (2025-11-25 basic/transports §Sending Messages to the Server).
func (c *Conn) answerServerRequest(ctx context.Context, s *session, m *wireMessage) {
	var res json.RawMessage
	var rerr *mcp.Error
	switch m.Method {
	case "ping":
		res = json.RawMessage(`{}`)
	case "elicitation/create", "sampling/createMessage", "roots/list":
		r, err := c.answerInput(ctx, m.Method, m.Params)
		if err != nil {
			code := mcp.CodeInternalError
			if errors.Is(err, ErrProtocol) {
				code = mcp.CodeMethodNotFound
			}
			rerr = mcp.NewError(code, err.Error())
		} else {
			res = r
		}
	default:
		rerr = mcp.NewError(mcp.CodeMethodNotFound, "Method not found")
	}
	c.postAnswer(ctx, s, m, res, rerr)
}

// refuseServerRequest answers a legacy server request with an error.
func (c *Conn) refuseServerRequest(ctx context.Context, s *session, m *wireMessage, msg string) {
	c.postAnswer(ctx, s, m, nil, mcp.NewError(mcp.CodeInternalError, msg))
}

// postAnswer POSTs the response to a legacy server request.
func (c *Conn) postAnswer(ctx context.Context, s *session, m *wireMessage, res json.RawMessage, rerr *mcp.Error) {
	body := append([]byte(`{"jsonrpc":"2.0","id":`), m.ID...)
	if rerr != nil {
		e, _ := json.Marshal(rerr)
		body = append(append(body, `,"error":`...), e...)
	} else {
		body = append(append(body, `,"result":`...), res...)
	}
	body = append(body, '}')
	if err := s.post(ctx, "", body); err != nil {
		c.log.Warn("mcp client: answering a server request failed", "method", m.Method, "err", err)
	}
}
