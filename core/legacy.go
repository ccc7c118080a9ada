package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/core/internal/jsonwire"
)

// This file serves the initialize-based revisions (2025-11-25, 2025-06-18,
// 2025-03-26) on the same endpoint as 2026-07-28: the handshake, sessions,
// legacy-only methods, the GET stream, DELETE, 2025-03-26 batches, and the
// bridge that lets a tool written in the multi round-trip style ask a legacy
// client for input with server-to-client requests.

// local is per-process state of legacy sessions: GET streams, the waiters of
// server-to-client requests, and in-flight requests that can be cancelled.
type local struct {
	mu       sync.Mutex
	streams  map[string]*getStream    // session id -> its GET stream
	waiters  map[string]chan idAnswer // server request id -> its call's answers
	inflight map[string]*inflight     // session id + "\x00" + request id
}

// inflight is a legacy request being answered in this process.
type inflight struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // by notifications/cancelled: send no response
}

// errCancelledByClient means the client cancelled the request: it gets no
// response.
var errCancelledByClient = errors.New("mcp: request cancelled by the client")

// maxCancelled bounds the cancellations a session remembers for requests
// running on other instances.
const maxCancelled = 32

// idAnswer is a client's response to the server-to-client request id.
type idAnswer struct {
	id  string
	ans json.RawMessage
}

type getStream struct {
	sub   *subscription
	ended chan struct{}
	once  sync.Once
}

func (g *getStream) end() { g.once.Do(func() { close(g.ended) }) }

// endLocalSession closes the GET stream of a session that ended.
func (s *Server) endLocalSession(id string) {
	if g := s.local.takeStream(id); g != nil {
		g.end()
	}
}

// The methods of local hold l.mu only around map operations, each released
// by a deferred Unlock: a panic under l.mu would otherwise leave every later
// legacy request of the process waiting for it.

// addStream makes g the GET stream of session id, ending the one it replaces:
// one GET stream per session, so a message goes to one stream.
func (l *local) addStream(id string, g *getStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams == nil {
		l.streams = map[string]*getStream{}
	}
	if old := l.streams[id]; old != nil {
		old.end()
	}
	l.streams[id] = g
}

// dropStream forgets g as the GET stream of session id, unless another
// stream replaced it meanwhile.
func (l *local) dropStream(id string, g *getStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[id] == g {
		delete(l.streams, id)
	}
}

// takeStream removes and returns the GET stream of session id.
func (l *local) takeStream(id string) *getStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.streams[id]
	delete(l.streams, id)
	return g
}

// addInflight records a legacy request being answered in this process.
func (l *local) addInflight(key string, f *inflight) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight == nil {
		l.inflight = map[string]*inflight{}
	}
	l.inflight[key] = f
}

// dropInflight forgets the request recorded under key.
func (l *local) dropInflight(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inflight, key)
}

// findInflight returns the request recorded under key, or nil.
func (l *local) findInflight(key string) *inflight {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight[key]
}

// addWaiters routes the answers to the server requests ids to ch.
func (l *local) addWaiters(ids map[string]string, ch chan idAnswer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiters == nil {
		l.waiters = map[string]chan idAnswer{}
	}
	for id := range ids {
		l.waiters[id] = ch
	}
}

// dropWaiters forgets the waiters of the server requests ids.
func (l *local) dropWaiters(ids map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range ids {
		delete(l.waiters, id)
	}
}

// waiter returns the channel that waits for the answer to server request id.
func (l *local) waiter(id string) chan idAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiters[id]
}

// legacyVersionFor returns the version a legacy initialize negotiates.
func negotiateVersion(requested string) string {
	if isLegacyVersion(requested) {
		return requested
	}
	return legacyVersions[0]
}

// legacyError is an error with an explicit HTTP status.
func legacyError(status, code int, msg string) *Error {
	return &Error{Code: code, Message: msg, status: status}
}

// sessionFor resolves the session and protocol version of a legacy request.
func (s *Server) sessionFor(ctx context.Context, hr *http.Request) (*Session, string, error) {
	hv := hr.Header.Get(HeaderProtocolVersion)
	if id := hr.Header.Get(HeaderSessionID); id != "" {
		if s.opts.Sessions == SessionsStateless {
			return nil, "", legacyError(http.StatusNotFound, CodeInvalidRequest, "Session not found: this server issues no sessions")
		}
		sess, err := s.loadSession(ctx, id, PrincipalFromContext(ctx))
		switch {
		case errors.Is(err, ErrSessionNotFound), errors.Is(err, errSessionForeign):
			return nil, "", legacyError(http.StatusNotFound, CodeInvalidRequest, "Session not found")
		case err != nil:
			return nil, "", storeFailure(err)
		}
		if hv != "" && hv != sess.d.Version {
			return nil, "", legacyError(http.StatusBadRequest, CodeInvalidRequest,
				fmt.Sprintf("%s %q contradicts the session's version %q", HeaderProtocolVersion, hv, sess.d.Version))
		}
		return sess, sess.d.Version, nil
	}
	if s.opts.Sessions == SessionsStateful {
		return nil, "", legacyError(http.StatusBadRequest, CodeInvalidRequest, "Bad Request: "+HeaderSessionID+" header is required")
	}
	if hv == "" {
		return nil, ProtocolVersion20250326, nil
	}
	if !isLegacyVersion(hv) {
		return nil, "", &Error{Code: CodeUnsupportedProtocolVersion, Message: fmt.Sprintf("Unsupported protocol version %q", hv),
			Data: map[string]any{"supported": s.supportedVersions(), "requested": hv}, status: http.StatusBadRequest}
	}
	return nil, hv, nil
}

// storeFailure is the answer when the session store fails: 503, so clients
// retry, with the detail logged rather than sent.
func storeFailure(err error) *Error {
	return &Error{Code: CodeInternalError, Message: "Session store unavailable", Cause: err, status: http.StatusServiceUnavailable}
}

// serveLegacyPost handles one legacy JSON-RPC message.
func (s *Server) serveLegacyPost(w http.ResponseWriter, hr *http.Request, m *rpcMessage, acc acceptance) {
	ctx := hr.Context()
	x := newExchange(w, acc)
	if !s.servesLegacy() {
		// A modern-only server answers a legacy client in terms it can
		// read: the versions it speaks.
		requested := ""
		if m.method == "initialize" {
			var p struct {
				V string `json:"protocolVersion"`
			}
			json.Unmarshal(m.params, &p)
			requested = p.V
		}
		s.replyError(ctx, x, m.id, &Error{Code: CodeInvalidParams,
			Message: "Unsupported protocol version: this server speaks " + strings.Join(modernVersions, ", ") + " only",
			Data:    map[string]any{"supported": modernVersions, "requested": requested}, status: http.StatusBadRequest}, false)
		return
	}
	if m.method == "initialize" && !m.isResponse {
		if m.isNotification() {
			x.accepted()
			return
		}
		s.initialize(ctx, hr, x, m)
		return
	}
	sess, version, err := s.sessionFor(ctx, hr)
	if err != nil {
		s.replyError(ctx, x, m.id, err, false)
		return
	}
	if sess != nil {
		x.header = sessionHeader(sess.rec.ID)
	}
	switch {
	case m.isResponse:
		s.deliverAnswer(ctx, sess, m)
		x.accepted()
	case m.isNotification():
		s.legacyNotification(ctx, sess, m)
		x.accepted()
	default:
		res, err := s.legacyRequest(ctx, hr, x, m, sess, version, nil)
		if errors.Is(err, errParked) {
			return // the response ended after the server's requests (SSE polling)
		}
		if errors.Is(err, errCancelledByClient) {
			x.noResponse() // the spec: no response for a cancelled request
			return
		}
		if err != nil {
			s.replyError(ctx, x, m.id, err, false)
			return
		}
		x.finish(http.StatusOK, jsonwire.AppendResult(make([]byte, 0, len(res)+48), m.id, res))
	}
}

func sessionHeader(id string) func(http.Header) {
	return func(h http.Header) { h.Set(HeaderSessionID, id) }
}

// initialize answers the legacy handshake and, unless sessions are off,
// creates a session.
func (s *Server) initialize(ctx context.Context, hr *http.Request, x *exchange, m *rpcMessage) {
	var p struct {
		ProtocolVersion *string             `json:"protocolVersion"`
		Capabilities    *ClientCapabilities `json:"capabilities"`
		ClientInfo      *Implementation     `json:"clientInfo"`
	}
	if m.params == nil || json.Unmarshal(m.params, &p) != nil || p.ProtocolVersion == nil {
		s.replyError(ctx, x, m.id, InvalidParamsError("Invalid params: initialize needs protocolVersion, capabilities and clientInfo"), false)
		return
	}
	version := negotiateVersion(*p.ProtocolVersion)
	caps := p.Capabilities
	if caps == nil {
		caps = &ClientCapabilities{}
	}
	if err := s.authorize(ctx, &Request{ProtocolVersion: version}, Operation{Method: "initialize"}); err != nil {
		s.replyError(ctx, x, m.id, err, false)
		return
	}
	owner := sessionOwner(PrincipalFromContext(ctx))
	if !owner && s.opts.Sessions == SessionsStateful {
		s.replyError(ctx, x, m.id, legacyError(http.StatusForbidden, CodeInvalidRequest,
			"Forbidden: the credentials name no client or subject to own a session"), false)
		return
	}
	if s.opts.Sessions != SessionsStateless && owner {
		sess, err := s.createSession(ctx, PrincipalFromContext(ctx), sessionData{Version: version, Caps: caps, ClientInfo: p.ClientInfo})
		if err != nil {
			s.replyError(ctx, x, m.id, storeFailure(err), false)
			return
		}
		x.header = sessionHeader(sess.rec.ID)
	}
	res := struct {
		ProtocolVersion string              `json:"protocolVersion"`
		Capabilities    *ServerCapabilities `json:"capabilities"`
		ServerInfo      json.RawMessage     `json:"serverInfo"`
		Instructions    string              `json:"instructions,omitempty"`
	}{version, s.capabilities(false, true), s.implRaw, s.opts.Instructions}
	b, _ := json.Marshal(res)
	x.finish(http.StatusOK, jsonwire.AppendResult(nil, m.id, b))
}

// legacyNotification handles a client notification.
func (s *Server) legacyNotification(ctx context.Context, sess *Session, m *rpcMessage) {
	switch m.method {
	case "notifications/initialized":
		if sess != nil && !sess.d.Initialized {
			if err := sess.mutate(ctx, func(d *sessionData) error { d.Initialized = true; return nil }); err != nil {
				s.log.WarnContext(ctx, "recording initialized", "error", err.Error())
			}
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.params, &p) == nil && p.RequestID != nil && sess != nil {
			f := s.local.findInflight(sess.rec.ID + "\x00" + string(p.RequestID))
			if f != nil {
				f.cancelled.Store(true)
				f.cancel()
				return
			}
			// The request may run on another instance: tell it through the
			// session (a call waiting for the client's input sees it).
			id := string(p.RequestID)
			if err := sess.mutate(ctx, func(d *sessionData) error {
				d.Cancelled = append(d.Cancelled, id)
				if len(d.Cancelled) > maxCancelled {
					d.Cancelled = d.Cancelled[len(d.Cancelled)-maxCancelled:]
				}
				return nil
			}); err != nil {
				s.log.WarnContext(ctx, "recording a cancellation", "error", err.Error())
			}
		}
	}
}

// legacyRequest answers one legacy request and returns its result, or
// errCancelledByClient when the client cancelled it meanwhile.
func (s *Server) legacyRequest(ctx context.Context, hr *http.Request, x *exchange, m *rpcMessage, sess *Session, version string, resume *resumed) (_ []byte, err error) {
	r := &Request{
		Method:             m.method,
		ID:                 m.id,
		ProtocolVersion:    version,
		ClientCapabilities: emptyCaps,
		Header:             hr.Header,
		Principal:          PrincipalFromContext(ctx),
		Session:            sess,
		srv:                s,
		x:                  x,
		logLevel:           -1,
	}
	if m.params != nil {
		jsonwire.EachMember(m.params, func(k, v []byte) bool {
			if jsonwire.KeyIs(k, "_meta") && jsonwire.IsObject(v) {
				r.Meta = v
				jsonwire.EachMember(v, func(k2, v2 []byte) bool {
					if jsonwire.KeyIs(k2, "progressToken") && (validID(v2) || (len(v2) > 0 && v2[0] == '"')) {
						r.progressToken = v2
					}
					return true
				})
				return false
			}
			return true
		})
	}
	if sess != nil {
		r.ClientCapabilities = sess.ClientCapabilities()
		r.ClientInfo = sess.d.ClientInfo
		if sess.d.LogLevel != "" {
			r.logLevel = sess.d.LogLevel.rank()
		}
		// Cancellation is notifications/cancelled, not a disconnect.
		f := &inflight{}
		ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
		key := sess.rec.ID + "\x00" + string(m.id)
		s.local.addInflight(key, f)
		defer func() {
			s.local.dropInflight(key)
			f.cancel()
			if f.cancelled.Load() {
				err = errCancelledByClient
			}
		}()
	}
	if err := s.authorizeMethod(ctx, r); err != nil {
		return nil, err
	}
	switch m.method {
	case "ping":
		return sess.touchResult(ctx)
	case "logging/setLevel":
		var p struct {
			Level LoggingLevel `json:"level"`
		}
		if json.Unmarshal(m.params, &p) != nil || p.Level.rank() < 0 {
			return nil, InvalidParamsError("Invalid params: unknown log level")
		}
		if sess == nil {
			return []byte("{}"), nil
		}
		if err := sess.mutate(ctx, func(d *sessionData) error { d.LogLevel = p.Level; return nil }); err != nil {
			return nil, storeFailure(err)
		}
		return []byte("{}"), nil
	case "resources/subscribe", "resources/unsubscribe":
		if !s.hasResources(s.reg.Load()) {
			return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found: " + m.method}
		}
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.params, &p) != nil || p.URI == "" {
			return nil, InvalidParamsError("Invalid params: uri is required")
		}
		if sess == nil {
			return nil, &Error{Code: CodeInvalidRequest, Message: "Subscriptions need a session"}
		}
		sub := m.method == "resources/subscribe"
		if err := sess.mutate(ctx, func(d *sessionData) error {
			if sub {
				d.Subs = addSorted(d.Subs, p.URI)
			} else {
				d.Subs = removeString(d.Subs, p.URI)
			}
			return nil
		}); err != nil {
			return nil, storeFailure(err)
		}
		return []byte("{}"), nil
	}
	spec := modernMethods[m.method]
	if spec == nil || m.method == "server/discover" || m.method == "subscriptions/listen" || !spec.available(s, s.reg.Load()) {
		return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found: " + m.method}
	}
	if sess != nil {
		if err := sess.touch(ctx); err != nil {
			return nil, storeFailure(err)
		}
	}
	params := m.params
	if params == nil {
		params = []byte("{}")
	}
	if resume != nil {
		r.Input, r.poll = resume.input, resume.poll
	}
	return s.runBridged(ctx, r, spec.handle, params)
}

// touchResult answers ping: {} (and renews the session).
func (sess *Session) touchResult(ctx context.Context) ([]byte, error) {
	if sess != nil {
		if err := sess.touch(ctx); err != nil {
			return nil, storeFailure(err)
		}
	}
	return []byte("{}"), nil
}

// bridgeNeeded is returned by a legacy method handler whose tool, prompt or
// resource asked for input.
type bridgeNeeded struct{ ir *InputRequiredError }

func (b *bridgeNeeded) Error() string { return b.ir.Error() }

// runBridged runs a method handler; when it asks for input, it sends the
// input requests to the legacy client as server-to-client requests on the
// call's SSE stream, waits for the answers and runs the handler again with
// them, so the handler never knows which era it served.
func (s *Server) runBridged(ctx context.Context, r *Request, h methodHandler, params []byte) ([]byte, error) {
	asked := 0 // the times this call has asked for input before
	if r.poll != nil {
		asked = r.poll.round // asked in earlier requests (SSE polling)
	}
	for ; ; asked++ {
		res, err := s.invoke(ctx, h, r, params)
		var bn *bridgeNeeded
		if !errors.As(err, &bn) {
			return res, err
		}
		if asked >= s.opts.MaxInputRounds {
			return nil, tooManyInputRounds(s.opts.MaxInputRounds)
		}
		if isBuffered(ctx) {
			return nil, s.bridgePark(ctx, r, bn.ir, params)
		}
		in, err := s.bridgeAsk(ctx, r, bn.ir)
		if err != nil {
			return nil, err
		}
		r.Input = in
	}
}

// legacyCheck validates what a legacy session may be asked: what was
// negotiated at initialize, never request _meta.
func legacyCheck(ir *InputRequiredError, version string, caps *ClientCapabilities) error {
	if err := checkInputRequired(ir, caps, false); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == CodeMissingRequiredClientCapability {
			return ServerError("This request needs input the client did not declare at initialize (%s)", ir.Error())
		}
		return err
	}
	for _, k := range sortedKeys(ir.Requests) {
		req := ir.Requests[k]
		if req.Method == MethodElicit {
			if version == ProtocolVersion20250326 {
				return ServerError("This request needs elicitation, which protocol version %s does not have", version)
			}
			if p, ok := req.Params.(*ElicitURLParams); ok && p != nil && version != ProtocolVersion20251125 {
				return ServerError("This request needs URL elicitation, which protocol version %s does not have", version)
			}
		}
	}
	return nil
}

func sortedKeys(m InputRequests) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func randomID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// legacyParams adapts an input request's params to the legacy wire: form
// elicitations drop "mode" (absent before 2025-11-25) and URL elicitations
// get the elicitationId 2025-11-25 requires.
func legacyParams(ir *InputRequest) any {
	switch p := ir.Params.(type) {
	case *ElicitFormParams:
		return struct {
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}{p.Message, p.RequestedSchema}
	case *ElicitURLParams:
		c := *p
		if c.ElicitationID == "" {
			c.ElicitationID = randomID("el-")
		}
		return &c
	}
	return ir.Params
}

// bridgeAsk sends the input requests of ir to the client and waits for every
// answer.
func (s *Server) bridgeAsk(ctx context.Context, r *Request, ir *InputRequiredError) (*InputResponses, error) {
	if r.Session == nil || r.x == nil || !r.x.canStream() {
		return nil, ServerError("This request needs input from the client (%s), which needs a session and an SSE response stream", ir.Error())
	}
	if err := legacyCheck(ir, r.Session.d.Version, r.Session.ClientCapabilities()); err != nil {
		return nil, err
	}
	keys := sortedKeys(ir.Requests)
	ids := make(map[string]string, len(keys)) // server request id -> key
	answerCh := make(chan idAnswer, len(keys))
	for _, k := range keys {
		ids[randomID("mcpfn-")] = k
	}
	s.local.addWaiters(ids, answerCh)
	defer s.local.dropWaiters(ids)
	for _, id := range sortedMapKeys(ids) {
		k := ids[id]
		p, err := json.Marshal(legacyParams(ir.Requests[k]))
		if err != nil {
			return nil, err
		}
		msg := []byte(`{"jsonrpc":"2.0","id":`)
		msg = jsonwire.AppendString(msg, id)
		msg = append(msg, `,"method":`...)
		msg = jsonwire.AppendString(msg, ir.Requests[k].Method)
		msg = append(append(append(msg, `,"params":`...), p...), '}')
		if err := r.x.send(ctx, msg); err != nil {
			return nil, fmt.Errorf("sending %s to the client: %w", ir.Requests[k].Method, err)
		}
	}
	answers := make(map[string]json.RawMessage, len(keys))
	timeout := time.NewTimer(s.opts.BridgeTimeout)
	defer timeout.Stop()
	var poll <-chan time.Time
	if s.opts.SessionStore != nil {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		poll = t.C
	}
	var fromStore []string
	var latest *SessionRecord
	var latestData sessionData
	for len(answers) < len(keys) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout.C:
			return nil, ServerError("Timed out waiting for the client's answer to %s", ir.Error())
		case a := <-answerCh:
			if _, ok := ids[a.id]; ok {
				answers[a.id] = a.ans
			}
		case <-poll:
			rec, err := s.store.Get(ctx, r.Session.rec.ID)
			if err != nil {
				return nil, storeFailure(err)
			}
			var d sessionData
			if json.Unmarshal(rec.Data, &d) == nil {
				for _, c := range d.Cancelled {
					if c == string(r.ID) {
						return nil, errCancelledByClient
					}
				}
				for id := range ids {
					if a, ok := d.Answers[id]; ok {
						if _, seen := answers[id]; !seen {
							answers[id] = a
						}
						fromStore = append(fromStore, id)
					}
				}
				latest, latestData = rec, d
			}
		}
	}
	if len(fromStore) > 0 {
		// Start from the record just read: the answers' writes changed it.
		r.Session.reset(latest, latestData)
		if err := r.Session.mutate(ctx, func(d *sessionData) error {
			for _, id := range fromStore {
				delete(d.Answers, id)
			}
			return nil
		}); err != nil {
			s.log.WarnContext(ctx, "removing delivered answers", "error", err.Error())
		}
	}
	in := &InputResponses{raw: make(map[string]json.RawMessage, len(keys)), state: ir.State}
	for id, a := range answers {
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *wireError      `json:"error"`
		}
		if err := json.Unmarshal(a, &resp); err != nil {
			return nil, ServerError("The client's answer to %s is malformed", ids[id])
		}
		if resp.Error != nil {
			return nil, ServerError("The client answered %s with an error: %s", ir.Requests[ids[id]].Method, resp.Error.Message)
		}
		in.raw[ids[id]] = resp.Result
	}
	return in, nil
}

func sortedMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// deliverAnswer routes a client's response to a server-to-client request:
// to the waiter in this process, or through the session store to the
// instance that waits.
func (s *Server) deliverAnswer(ctx context.Context, sess *Session, m *rpcMessage) {
	id, ok := jsonwire.RawString(m.id)
	if !ok {
		return
	}
	var ans []byte
	if m.result != nil {
		ans = append(append([]byte(`{"result":`), m.result...), '}')
	} else {
		ans = append(append([]byte(`{"error":`), m.errObj...), '}')
	}
	ch := s.local.waiter(id)
	if ch != nil {
		select {
		case ch <- idAnswer{id, ans}:
		default: // a duplicate answer; the first one counts
		}
		return
	}
	if sess == nil || !strings.HasPrefix(id, "mcpfn-") {
		return
	}
	if err := sess.mutate(ctx, func(d *sessionData) error {
		if d.Answers == nil {
			d.Answers = map[string]json.RawMessage{}
		}
		d.Answers[id] = ans
		return nil
	}); err != nil {
		s.log.WarnContext(ctx, "storing the client's answer", "error", err.Error())
	}
}

// serveLegacyGet serves the GET stream of a legacy session: server
// notifications unrelated to a request (list changes, resource updates).
func (s *Server) serveLegacyGet(w http.ResponseWriter, hr *http.Request) {
	ctx := hr.Context()
	if !parseAccept(hr.Header.Get("Accept")).sse {
		http.Error(w, "406 not acceptable: GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	if s.opts.Sessions == SessionsStateless || hr.Header.Get(HeaderSessionID) == "" {
		s.methodNotAllowed(w)
		return
	}
	sess, version, err := s.sessionFor(ctx, hr)
	if err != nil {
		x := newExchange(w, acceptance{json: true})
		s.replyError(ctx, x, nil, err, false)
		return
	}
	if last := hr.Header.Get("Last-Event-ID"); last != "" && s.resumeParked(ctx, w, hr, sess, version, last) {
		return
	}
	if isBuffered(ctx) {
		// A buffered response cannot carry a stream that stays open.
		s.methodNotAllowed(w)
		return
	}
	// id outlives sess: alive may replace sess with nil when the session
	// ends, and the cleanup below must still find the stream.
	id := sess.rec.ID
	g := &getStream{sub: s.hub.subscribe(changeTools|changePrompts|changeResources, nil), ended: make(chan struct{})}
	g.sub.allURIs = true
	defer s.hub.unsubscribe(g.sub)
	s.local.addStream(id, g)
	defer s.local.dropStream(id, g)
	x := newExchange(w, acceptance{sse: true})
	x.header = sessionHeader(id)
	x.open()
	var tick <-chan time.Time
	if s.opts.KeepAlive > 0 {
		t := time.NewTicker(s.opts.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	paramsFor := func(uri string) []byte {
		if uri == "" {
			return nil
		}
		return append(jsonwire.AppendString([]byte(`{"uri":`), uri), '}')
	}
	// alive re-reads the session: it may have ended, or its subscriptions
	// changed, through another instance.
	alive := func() (*Session, bool) {
		fresh, err := s.loadSession(ctx, id, PrincipalFromContext(ctx))
		if err != nil {
			if !errors.Is(err, ErrSessionNotFound) && !errors.Is(err, errSessionForeign) {
				s.log.WarnContext(ctx, "GET stream: reading the session", "error", err.Error())
				return sess, true // a store hiccup does not end the stream
			}
			return nil, false
		}
		return fresh, true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.ended:
			return
		case <-s.closed:
			return
		case <-tick:
			var ok bool
			if sess, ok = alive(); !ok {
				return
			}
			if x.comment() != nil {
				return
			}
		case <-g.sub.wake:
			kinds, uris := g.sub.take()
			if len(uris) > 0 {
				var ok bool
				if sess, ok = alive(); !ok {
					return
				}
				subs := make(map[string]bool, len(sess.d.Subs))
				for _, u := range sess.d.Subs {
					subs[u] = true
				}
				kept := uris[:0]
				for _, u := range uris {
					if underAny(u, subs) {
						kept = append(kept, u)
					}
				}
				uris = kept
			}
			for _, msg := range changeMessages(kinds, uris, paramsFor) {
				if x.send(ctx, msg) != nil {
					return
				}
			}
		}
	}
}

// serveLegacyDelete ends a session.
func (s *Server) serveLegacyDelete(w http.ResponseWriter, hr *http.Request) {
	ctx := hr.Context()
	id := hr.Header.Get(HeaderSessionID)
	if s.opts.Sessions == SessionsStateless {
		s.methodNotAllowed(w)
		return
	}
	x := newExchange(w, acceptance{json: true})
	if id == "" {
		s.replyError(ctx, x, nil, legacyError(http.StatusBadRequest, CodeInvalidRequest, "Bad Request: "+HeaderSessionID+" header is required"), false)
		return
	}
	if _, _, err := s.sessionFor(ctx, hr); err != nil {
		s.replyError(ctx, x, nil, err, false)
		return
	}
	if err := s.store.Delete(ctx, id); err != nil && !errors.Is(err, ErrSessionNotFound) {
		s.replyError(ctx, x, nil, storeFailure(err), false)
		return
	}
	s.endLocalSession(id)
	w.WriteHeader(http.StatusNoContent)
}

// serveBatch handles a JSON-RPC batch, which only 2025-03-26 allows.
func (s *Server) serveBatch(w http.ResponseWriter, hr *http.Request, body []byte, acc acceptance) {
	ctx := hr.Context()
	x := newExchange(w, acceptance{json: true})
	if !s.servesLegacy() || s.opts.Mode == ModeModern {
		s.replyError(ctx, x, nil, invalidRequest("batches are not supported"), false)
		return
	}
	sess, version, err := s.sessionFor(ctx, hr)
	if err != nil {
		s.replyError(ctx, x, nil, err, false)
		return
	}
	if version != ProtocolVersion20250326 {
		s.replyError(ctx, x, nil, invalidRequest("batches are only allowed in protocol version "+ProtocolVersion20250326), false)
		return
	}
	var elems [][]byte
	i := jsonwire.SkipSpace(body, jsonwire.SkipSpace(body, 0)+1)
	for i < len(body) && body[i] != ']' {
		end := jsonwire.SkipValue(body, i)
		elems = append(elems, body[i:end])
		i = jsonwire.SkipSpace(body, end)
		if i < len(body) && body[i] == ',' {
			i = jsonwire.SkipSpace(body, i+1)
		}
	}
	if len(elems) == 0 {
		s.replyError(ctx, x, nil, invalidRequest("empty batch"), false)
		return
	}
	if sess != nil {
		x.header = sessionHeader(sess.rec.ID)
	}
	if err := s.authorizeBatch(ctx, elems, version); err != nil {
		s.replyError(ctx, x, nil, err, false)
		return
	}
	quiet := &exchange{acc: acceptance{json: true}} // no stream inside a batch
	var out [][]byte
	for _, e := range elems {
		m, id, perr := parseMessage(e)
		switch {
		case perr != nil:
			out = append(out, appendErrorResponse(nil, id, toWireError(perr)))
		case m.isResponse:
			s.deliverAnswer(ctx, sess, m)
		case m.method == "initialize":
			if !m.isNotification() {
				out = append(out, appendErrorResponse(nil, m.id, toWireError(invalidRequest("initialize must not be part of a batch"))))
			}
		case m.isNotification():
			s.legacyNotification(ctx, sess, m)
		default:
			res, err := s.legacyRequest(ctx, hr, quiet, m, sess, version, nil)
			if errors.Is(err, errCancelledByClient) {
				continue // no response for a cancelled request
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					s.log.ErrorContext(ctx, "request failed", "error", err.Error())
				}
				out = append(out, appendErrorResponse(nil, m.id, toWireError(err)))
			} else {
				out = append(out, jsonwire.AppendResult(nil, m.id, res))
			}
		}
	}
	if len(out) == 0 {
		x.accepted()
		return
	}
	b := []byte{'['}
	for i, o := range out {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, o...)
	}
	x.finish(http.StatusOK, append(b, ']'))
}
