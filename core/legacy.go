package core

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// This file serves the initialize-based revisions (2025-11-25, 2025-06-18,
// 2025-03-26) on the same endpoint as 2026-07-28: the handshake, legacy
// POSTs and notifications. Sessions and DELETE are in session.go, the GET
// stream in getstream.go, 2025-03-26 batches in batch.go, per-process state
// in local.go, and the bridge that lets a tool written in the multi
// round-trip style ask a legacy client for input in bridge.go and poll.go.

// negotiateVersion returns the version a legacy initialize negotiates.
func negotiateVersion(requested string) string {
	if isLegacyVersion(requested) {
		return requested
	}
	return legacyVersions[0]
}

// legacyError is an error with an explicit HTTP status.
func legacyError(status, code int, msg string) *Error {
	return NewError(code, msg).WithHTTP(status, nil)
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
		s.replyError(ctx, x, m.id, NewError(CodeInvalidParams,
			"Unsupported protocol version: this server speaks "+strings.Join(modernVersions, ", ")+" only").
			WithData(map[string]any{"supported": modernVersions, "requested": requested}).
			WithHTTP(http.StatusBadRequest, nil), eraLegacy)
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
		s.replyError(ctx, x, m.id, err, eraLegacy)
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
			s.replyError(ctx, x, m.id, err, eraLegacy)
			return
		}
		x.finish(http.StatusOK, jsonwire.AppendResult(make([]byte, 0, len(res)+48), m.id, res))
	}
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
		s.replyError(ctx, x, m.id, InvalidParamsError("Invalid params: initialize needs protocolVersion, capabilities and clientInfo"), eraLegacy)
		return
	}
	version := negotiateVersion(*p.ProtocolVersion)
	caps := p.Capabilities
	if caps == nil {
		caps = &ClientCapabilities{}
	}
	if err := s.authorize(ctx, &Request{ProtocolVersion: version, era: eraLegacy}, Operation{Method: "initialize"}); err != nil {
		s.replyError(ctx, x, m.id, err, eraLegacy)
		return
	}
	owner := sessionOwner(PrincipalFromContext(ctx))
	if !owner && s.opts.Sessions == SessionsStateful {
		s.replyError(ctx, x, m.id, legacyError(http.StatusForbidden, CodeInvalidRequest,
			"Forbidden: the credentials name no client or subject to own a session"), eraLegacy)
		return
	}
	if s.opts.Sessions != SessionsStateless && owner {
		sess, err := s.createSession(ctx, PrincipalFromContext(ctx), sessionData{Version: version, Caps: caps, ClientInfo: p.ClientInfo})
		if err != nil {
			s.replyError(ctx, x, m.id, storeFailure(err), eraLegacy)
			return
		}
		x.header = sessionHeader(sess.rec.ID)
	}
	res := struct {
		ProtocolVersion string              `json:"protocolVersion"`
		Capabilities    *ServerCapabilities `json:"capabilities"`
		ServerInfo      json.RawMessage     `json:"serverInfo"`
		Instructions    string              `json:"instructions,omitempty"`
	}{version, s.capabilities(eraLegacy, true), s.implRaw, s.opts.Instructions}
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
		era:                eraLegacy,
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
			r.logLevel = int32(levelRank(sess.d.LogLevel))
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
		if json.Unmarshal(m.params, &p) != nil || levelRank(p.Level) < 0 {
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
	spec := methodTable[m.method]
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
