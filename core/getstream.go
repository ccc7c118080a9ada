package core

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

type getStream struct {
	sub   *subscription
	ended chan struct{}
	once  sync.Once
}

func (g *getStream) end() { g.once.Do(func() { close(g.ended) }) }

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
		s.replyError(ctx, newExchange(w, acceptance{json: true}, eraLegacy), nil, err)
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
	x := newExchange(w, acceptance{sse: true}, eraLegacy)
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
