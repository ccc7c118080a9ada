package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// legacyEra is the initialize revisions 2025-11-25, 2025-06-18 and
// 2025-03-26: a session negotiated at initialize, no resultType, no cache
// hints, _meta only as the handler sets it, and input asked of the client
// by the legacy bridge as server-to-client requests (2025-11-25
// basic/transports, basic/lifecycle).
type legacyEra struct{}

// legacyMethods is the method table of the legacy revisions: the shared
// methods, plus those 2026-07-28 removed (ping, logging/setLevel and the
// resource subscriptions, whose state lives in the session).
var legacyMethods = methodTable(map[string]*methodSpec{
	"ping":                  {handle: (*Server).ping, available: always, ownsSession: true},
	"logging/setLevel":      {handle: (*Server).setLevel, available: always, ownsSession: true},
	"resources/subscribe":   {handle: (*Server).subscribe, available: (*Server).hasResources, ownsSession: true},
	"resources/unsubscribe": {handle: (*Server).subscribe, available: (*Server).hasResources, ownsSession: true},
})

// legacyRevision is a negotiated legacy revision; its methods are where the
// three differ.
type legacyRevision string

// batches: JSON-RPC batches are 2025-03-26 only (2025-06-18 removed them).
func (v legacyRevision) batches() bool { return v == ProtocolVersion20250326 }

// elicits: elicitation/create came in 2025-06-18.
func (v legacyRevision) elicits() bool { return v != ProtocolVersion20250326 }

// elicitsURL: URL-mode elicitation came in 2025-11-25.
func (v legacyRevision) elicitsURL() bool { return v == ProtocolVersion20251125 }

// polls: SSE polling (event ids, retry, resumption with Last-Event-ID of a
// stream the server ended) came in 2025-11-25.
func (v legacyRevision) polls() bool { return v == ProtocolVersion20251125 }

// structuredOutput: outputSchema and structuredContent came in 2025-06-18.
func (v legacyRevision) structuredOutput() bool { return v != ProtocolVersion20250326 }

// negotiateVersion returns the version a legacy initialize negotiates.
func negotiateVersion(requested string) string {
	if isLegacyVersion(requested) {
		return requested
	}
	return legacyVersions[0]
}

// open handles one legacy message: the handshake, then in the session the
// request carries (or none) a client's response, a notification or a
// request.
func (legacyEra) open(ctx context.Context, s *Server, hr *http.Request, x *exchange, m *rpcMessage) (context.Context, *Request, error) {
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
		return ctx, nil, NewError(CodeInvalidParams,
			"Unsupported protocol version: this server speaks "+strings.Join(modernVersions, ", ")+" only").
			WithData(map[string]any{"supported": modernVersions, "requested": requested}).
			WithHTTP(http.StatusBadRequest, nil)
	}
	if m.method == "initialize" && !m.isResponse {
		if m.isNotification() {
			x.accepted()
			return ctx, nil, nil
		}
		s.initialize(ctx, x, m)
		return ctx, nil, nil
	}
	sess, version, err := s.sessionFor(ctx, hr)
	if err != nil {
		return ctx, nil, err
	}
	if sess != nil {
		x.sessionID = sess.rec.ID
	}
	switch {
	case m.isResponse:
		s.deliverAnswer(ctx, sess, m)
		x.accepted()
		return ctx, nil, nil
	case m.isNotification():
		s.legacyNotification(ctx, sess, m)
		x.accepted()
		return ctx, nil, nil
	}
	return s.legacyRequest(ctx, hr, x, m, sess, version)
}

// legacyRequest builds the Request of a legacy request in session sess (nil
// for none) speaking version, and the context it runs in; its method is nil
// when the legacy revisions do not have it. In a session, a request is
// cancelled by notifications/cancelled, not by a disconnect (2025-11-25
// basic/utilities/cancellation): it is recorded, until Server.call
// releases it, so that the notification finds it on this instance.
func (s *Server) legacyRequest(ctx context.Context, hr *http.Request, x *exchange, m *rpcMessage, sess *Session, version string) (context.Context, *Request, error) {
	meta := &m.meta
	tok, err := meta.progress()
	if err != nil {
		return ctx, nil, err
	}
	spec := legacyMethods[m.method]
	if spec == nil {
		if x := s.ext.load().methods[m.method]; x != nil && !x.modernOnly {
			spec = x.spec // an extension's method served in legacy revisions
		}
	}
	if spec != nil && !spec.available(s, s.reg.Load()) {
		spec = nil
	}
	r := m.newRequest()
	*r = Request{
		Method:             m.method,
		ID:                 m.id,
		ProtocolVersion:    version,
		ClientCapabilities: emptyCaps,
		Meta:               meta.raw,
		Header:             hr.Header,
		hr:                 hr,
		Principal:          PrincipalFromContext(ctx),
		Session:            sess,
		srv:                s,
		era:                eraLegacy,
		spec:               spec,
		x:                  x,
		progressToken:      tok,
		logLevel:           -1,
	}
	if sess != nil {
		r.ClientCapabilities = sess.ClientCapabilities()
		r.ClientInfo = sess.d.ClientInfo
		if sess.d.LogLevel != "" {
			r.logLevel = int32(levelRank(sess.d.LogLevel))
		}
		f := newInflight(ctx, &s.local, sess, inflightKey{sess.rec.ID, string(m.id)})
		s.local.addInflight(f.key, f)
		ctx, r.flight = f, f
	}
	return ctx, r, nil
}

// initialize answers the legacy handshake and, unless sessions are off,
// creates a session.
func (s *Server) initialize(ctx context.Context, x *exchange, m *rpcMessage) {
	var p struct {
		ProtocolVersion *string             `json:"protocolVersion"`
		Capabilities    *ClientCapabilities `json:"capabilities"`
		ClientInfo      *Implementation     `json:"clientInfo"`
	}
	if m.params == nil || json.Unmarshal(m.params, &p) != nil || p.ProtocolVersion == nil {
		s.replyError(ctx, x, m.id, InvalidParamsError("Invalid params: initialize needs protocolVersion, capabilities and clientInfo"))
		return
	}
	version := negotiateVersion(*p.ProtocolVersion)
	caps := p.Capabilities
	if caps == nil {
		caps = &ClientCapabilities{}
	}
	if err := s.authorize(ctx, Operation{Method: "initialize", ProtocolVersion: version}); err != nil {
		s.replyError(ctx, x, m.id, err)
		return
	}
	owner := sessionOwner(PrincipalFromContext(ctx))
	if !owner && s.opts.Sessions == SessionsStateful {
		s.replyError(ctx, x, m.id, legacyError(http.StatusForbidden, CodeInvalidRequest,
			"Forbidden: the credentials name no client or subject to own a session"))
		return
	}
	if s.opts.Sessions != SessionsStateless && owner {
		sess, err := s.createSession(ctx, PrincipalFromContext(ctx), sessionData{Version: version, Caps: caps, ClientInfo: p.ClientInfo, Started: time.Now().UnixMilli()})
		if err != nil {
			s.replyError(ctx, x, m.id, storeFailure(err))
			return
		}
		x.sessionID = sess.rec.ID
	}
	res := struct {
		ProtocolVersion string              `json:"protocolVersion"`
		Capabilities    *ServerCapabilities `json:"capabilities"`
		ServerInfo      json.RawMessage     `json:"serverInfo"`
		Instructions    string              `json:"instructions,omitempty"`
	}{version, eraLegacy.capabilities(s, true), s.implRaw, s.opts.Instructions}
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
			f := s.local.findInflight(inflightKey{sess.rec.ID, string(p.RequestID)})
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

// ping answers ping: {} (and renews the session).
func (s *Server) ping(ctx context.Context, r *Request, _ []byte) ([]byte, error) {
	if r.Session != nil {
		if err := r.Session.touch(ctx); err != nil {
			return nil, storeFailure(err)
		}
	}
	return emptyObject, nil
}

// setLevel answers logging/setLevel: the level is kept in the session.
func (s *Server) setLevel(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	var p struct {
		Level LoggingLevel `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil || levelRank(p.Level) < 0 {
		return nil, InvalidParamsError("Invalid params: unknown log level")
	}
	if r.Session == nil {
		return emptyObject, nil
	}
	if err := r.Session.mutate(ctx, func(d *sessionData) error { d.LogLevel = p.Level; return nil }); err != nil {
		return nil, storeFailure(err)
	}
	return emptyObject, nil
}

// subscribe answers resources/subscribe and resources/unsubscribe: the
// subscriptions are kept in the session, whose GET stream carries the
// updates.
func (s *Server) subscribe(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil || p.URI == "" {
		return nil, InvalidParamsError("Invalid params: uri is required")
	}
	if r.Session == nil {
		return nil, &Error{Code: CodeInvalidRequest, Message: "Subscriptions need a session"}
	}
	sub := r.Method == "resources/subscribe"
	if err := r.Session.mutate(ctx, func(d *sessionData) error {
		if sub {
			d.Subs = addSorted(d.Subs, p.URI)
		} else {
			d.Subs = removeString(d.Subs, p.URI)
		}
		return nil
	}); err != nil {
		return nil, storeFailure(err)
	}
	return emptyObject, nil
}

// sessionFor resolves the session and protocol version of a legacy request.
func (s *Server) sessionFor(ctx context.Context, hr *http.Request) (*Session, string, error) {
	hv := headerGet(hr.Header, canonProtocolVersion)
	if id := headerGet(hr.Header, canonSessionID); id != "" {
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
		// 2025-06-18 basic/transports: without the header, assume 2025-03-26.
		return nil, ProtocolVersion20250326, nil
	}
	if !isLegacyVersion(hv) {
		return nil, "", NewError(CodeUnsupportedProtocolVersion, fmt.Sprintf("Unsupported protocol version %q", hv)).
			WithData(map[string]any{"supported": s.supportedVersions(), "requested": hv}).
			WithHTTP(http.StatusBadRequest, nil)
	}
	return nil, hv, nil
}

// serveBatch handles a JSON-RPC batch, which only 2025-03-26 allows: its
// elements run one after the other, each on the one path (Server.call),
// and the answers go out together.
func (s *Server) serveBatch(w http.ResponseWriter, hr *http.Request, body []byte) {
	ctx := hr.Context()
	x := newExchange(w, acceptance{json: true}, eraLegacy)
	if !s.servesLegacy() || s.opts.Mode == ModeModern {
		s.replyError(ctx, x, nil, invalidRequest("batches are not supported"))
		return
	}
	sess, version, err := s.sessionFor(ctx, hr)
	if err != nil {
		s.replyError(ctx, x, nil, err)
		return
	}
	if !legacyRevision(version).batches() {
		s.replyError(ctx, x, nil, invalidRequest("batches are only allowed in protocol version "+ProtocolVersion20250326))
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
		s.replyError(ctx, x, nil, invalidRequest("empty batch"))
		return
	}
	if sess != nil {
		x.sessionID = sess.rec.ID
	}
	if err := s.authorizeBatch(ctx, elems, version); err != nil {
		s.replyError(ctx, x, nil, err)
		return
	}
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
			// Each request of the batch takes the one path (Server.serve
			// after the door), on an exchange that collects its response:
			// no stream inside a batch, and none for a cancelled request.
			ex := &exchange{acc: acceptance{json: true}, era: eraLegacy, batch: &out}
			rctx, r, err := s.legacyRequest(ctx, hr, ex, m, sess, version)
			var res []byte
			if err == nil {
				res, err = s.call(rctx, r, m.params)
			}
			s.reply(rctx, ex, m.id, res, err)
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

func (legacyEra) errorStatus(code int) int { return httpStatusLegacy(code) }

func (legacyEra) appendResultHead(b []byte, _ *Server, _ string, _ *cacheWire) []byte { return b }

func (legacyEra) appendMeta(b []byte, _ *Server, user Meta) []byte {
	if len(user) == 0 {
		return b
	}
	m, err := json.Marshal(user)
	if err != nil {
		return b
	}
	b = append(b, `"_meta":`...)
	b = append(b, m...)
	return append(b, ',')
}

// capabilities: change notifications travel on the session's GET stream,
// whatever the response of the request.
func (legacyEra) capabilities(s *Server, _ bool) *ServerCapabilities {
	c := s.serverCapabilities(true)
	// The extensions of the legacy revisions (extension.go): those not of
	// 2026-07-28 only.
	c.Extensions = s.extensionCaps(s.reg.Load(), false)
	return c
}

// inputRequired hands the input requests to the bridge, which asks the
// client and runs the method again (Server.serveRound).
func (legacyEra) inputRequired(_ context.Context, _ *Server, _ *Request, ir *InputRequiredError, _ stateBinding) ([]byte, error) {
	return nil, askBridge(ir)
}

func (legacyEra) paramHeaders(http.Header) http.Header { return nil }

func (legacyEra) serves(*serverTool) bool { return true }

// callsUnlisted: a legacy call has no headers to check against a
// definition; CallToolHandler receives the name and decides.
func (legacyEra) callsUnlisted() bool { return true }

func (legacyEra) tools(reg *registry) []*serverTool { return reg.toolList }

func (legacyEra) toolEntry(st *serverTool, version string) json.RawMessage {
	if !legacyRevision(version).structuredOutput() {
		return st.legacy0326JSON
	}
	return st.legacyJSON
}

func (legacyEra) advancedTool(t *Tool) ([]byte, error) { return advancedToolJSON(t, true) }

// structuredContent: 2025-06-18 and 2025-11-25 carry structuredContent with
// an object root, beside its text form in content (2025-06-18 server/tools);
// other roots are text only. A typed tool's result carries it only when the
// legacy list entry advertises its outputSchema (an object root: not for a
// nullable pointer or a map, whose schema root is not "object"), so that
// what is sent is what is described. 2025-03-26 has no structured output.
func (legacyEra) structuredContent(version string, st *serverTool, sj []byte) bool {
	if !legacyRevision(version).structuredOutput() || (st != nil && st.typedOutput && !st.legacyOutput) {
		return false
	}
	return jsonwire.IsObject(sj[jsonwire.SkipSpace(sj, 0):])
}

func (legacyEra) resourceNotFoundCode() int { return CodeResourceNotFound }

func (legacyEra) strictForms() bool { return false }

func (legacyEra) name() string { return "legacy" }

func (legacyEra) renew(ctx context.Context, r *Request) error {
	if r.Session == nil || r.spec.ownsSession {
		return nil
	}
	if err := r.Session.touch(ctx); err != nil {
		return storeFailure(err)
	}
	return nil
}

func (legacyEra) firstRound(r *Request) int { return r.poll.asked() }

func (legacyEra) round(_ *Request, counted int) int { return counted }

func (legacyEra) cancelled(r *Request) bool { return r.flight.cancelledByClient() }

func (legacyEra) end(r *Request) { r.flight.release() }

func (legacyEra) handOff(ctx context.Context, s *Server, r *Request, params []byte, round int, err error) (roundEnd, error) {
	bn, ok := err.(*bridgeNeeded)
	if !ok {
		return roundFailed, err
	}
	return s.bridgeRound(ctx, r, bn, params, round)
}

func (legacyEra) augmentsTasks() bool { return false }
