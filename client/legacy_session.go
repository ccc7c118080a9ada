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

// session is one legacy MCP session (2025-11-25 basic/transports §Session
// Management), or, with Options.NoInitialize, the sessionless stand-in of
// one: never initialized, no id.
type session struct {
	l       *legacyEra
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

// sendInitialize sends initialize, with the _meta members (without
// braces; nil: none) and headers of its middleware, and returns its result
// and the session id the server gave.
func (s *session) sendInitialize(ctx context.Context, meta []byte, mwHeader http.Header) (json.RawMessage, string, error) {
	c := s.l.c
	id := c.nextID.Add(1)
	pb := append([]byte(`{"protocolVersion":`), quoteJSON(s.want)...)
	pb = append(append(pb, `,"capabilities":`...), c.cl.capsJSON...)
	pb = append(append(pb, `,"clientInfo":`...), c.cl.clientInfo...)
	if meta != nil {
		pb = append(append(append(pb, `,"_meta":{`...), meta...), '}')
	}
	pb = append(pb, '}')
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"initialize","params":`)
	body = append(append(body, pb...), '}')
	resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: "initialize", co: s.co, mw: mwHeader}, func(h http.Header) {
		h["Content-Type"] = []string{"application/json"}
		h["Accept"] = []string{acceptBoth}
	})
	if err != nil {
		return nil, "", err
	}
	sid := resp.Header.Get(mcp.HeaderSessionID)
	x := &exchange{c: c, id: id, method: "initialize", srv: s}
	res, err := x.read(ctx, resp)
	return res, sid, err
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
	l, c := s.l, s.l.c
	var res json.RawMessage
	var sid string
	var err error
	if c.cl.mw == nil {
		res, sid, err = s.sendInitialize(ctx, nil, nil)
	} else {
		// initialize is a Call of its own (Middleware).
		req := &Call{Method: "initialize", Version: s.want}
		var resp *Outcome
		resp, err = c.intercept(ctx, req, func(ctx context.Context, req *Call) (*Outcome, error) {
			var res json.RawMessage
			var err error
			res, sid, err = s.sendInitialize(ctx, encodeMeta(req.Meta), req.Header)
			if err != nil {
				return nil, err
			}
			return req.outcome(res, resultComplete), nil
		})
		if err == nil {
			res = resp.Result
		}
	}
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
		if _, err := l.callIn(ctx, s, "logging/setLevel", p, s.co, false); err != nil {
			return err
		}
	}
	if s == l.def {
		// A session that replaces an ended one: the Listen calls'
		// resource subscriptions went with the old one.
		for _, uri := range l.listeners.subscriptions() {
			if _, err := l.callIn(ctx, s, "resources/subscribe", params{{"uri", quoteJSON(uri)}}, nil, false); err != nil {
				c.cl.log.WarnContext(ctx, "mcp client: resources/subscribe in the new session failed", "uri", uri, "err", err)
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
	c := s.l.c
	x := &exchange{c: c, id: 0, method: "GET", srv: s} // id 0 matches no request
	for attempt := 0; attempt < maxResumes && ctx.Err() == nil; attempt++ {
		sid, ver := s.snapshot()
		last := x.lastID
		resp, err := c.send(ctx, &httpReq{method: http.MethodGet, co: s.co}, func(h http.Header) {
			h["Accept"] = []string{"text/event-stream"}
			if sid != "" {
				h["Mcp-Session-Id"] = []string{sid}
			}
			setVersionHeader(h, ver)
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
		if waitRetry(ctx, x.retry) != nil {
			return
		}
	}
}

// headers sets the headers of a POST in session s.
func (s *session) headers(h http.Header, sid, version string) {
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{acceptBoth}
	if sid != "" {
		h["Mcp-Session-Id"] = []string{sid}
	}
	setVersionHeader(h, version)
}

// setVersionHeader sets MCP-Protocol-Version to version, which 2025-06-18
// introduced: 2025-03-26 has none (2025-06-18 basic/transports §Protocol
// Version Header).
func setVersionHeader(h http.Header, version string) {
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
	resp, err := s.l.c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: method, co: s.co}, func(h http.Header) {
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
	resp, err := s.l.c.send(ctx, &httpReq{method: http.MethodDelete, rpc: "", co: s.co}, func(h http.Header) {
		h["Mcp-Session-Id"] = []string{sid}
		setVersionHeader(h, ver)
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

// answer answers a server→client request of the session by POSTing the
// response (2025-11-25 basic/transports §Sending Messages to the Server).
func (s *session) answer(ctx context.Context, m *wireMessage) {
	var res json.RawMessage
	var rerr *mcp.Error
	switch m.Method {
	case "ping":
		res = json.RawMessage(`{}`)
	case "elicitation/create", "sampling/createMessage", "roots/list":
		r, err := s.l.c.answerInput(ctx, m.Method, m.Params)
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
	s.postAnswer(ctx, m, res, rerr)
}

// refuse answers a server request of the session with an error.
func (s *session) refuse(ctx context.Context, m *wireMessage, msg string) {
	s.postAnswer(ctx, m, nil, mcp.NewError(mcp.CodeInternalError, msg))
}

// postAnswer POSTs the response to a server request.
func (s *session) postAnswer(ctx context.Context, m *wireMessage, res json.RawMessage, rerr *mcp.Error) {
	body := append([]byte(`{"jsonrpc":"2.0","id":`), m.ID...)
	if rerr != nil {
		e, _ := json.Marshal(rerr)
		body = append(append(body, `,"error":`...), e...)
	} else {
		body = append(append(body, `,"result":`...), res...)
	}
	body = append(body, '}')
	if err := s.post(ctx, "", body); err != nil {
		s.l.c.cl.log.Warn("mcp client: answering a server request failed", "method", m.Method, "err", err)
	}
}

var _ serverRequests = (*session)(nil)
