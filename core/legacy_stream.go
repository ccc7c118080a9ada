package core

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

type getStream struct {
	ended chan struct{}
	once  sync.Once
	// slot is the stream's place among the long-lived streams
	// (ServerOptions.MaxStreamsPerPrincipal); guarded by local.mu. A
	// stream that replaces its session's GET stream takes it over.
	slot *streamSlot
}

func (g *getStream) end() { g.once.Do(func() { close(g.ended) }) }

// serveLegacyGet serves the GET stream of a legacy session: server
// notifications unrelated to a request (list changes, resource updates).
// It counts among the caller's long-lived streams: beyond its bound the GET
// is answered 429 with Retry-After and a -31429 error, which a 2025-11-25
// client takes as "not now" (405 would tell it the server offers no GET
// stream at all; docs/design.md, "Bounds, and why").
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
	g := &getStream{ended: make(chan struct{})}
	err = s.local.addStream(id, g, func() (*streamSlot, error) { return s.acquireStream(PrincipalFromContext(ctx)) })
	if err != nil {
		s.replyError(ctx, newExchange(w, acceptance{json: true}, eraLegacy), nil, err)
		return
	}
	defer func() { s.releaseStream(s.local.dropStream(id, g)) }()
	sub := &subscription{kinds: changeTools | changePrompts | changeResources, wake: make(chan struct{}, 1), allURIs: true}
	s.hub.add(sub)
	defer s.hub.unsubscribe(sub)
	x := newExchange(w, acceptance{sse: true}, eraLegacy)
	x.header = sessionHeader(id)
	x.open()
	var tick <-chan time.Time
	if s.opts.StreamKeepAlive > 0 {
		t := time.NewTicker(s.opts.StreamKeepAlive)
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
		case <-sub.wake:
			kinds, uris := sub.take()
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

// local is per-process state of legacy sessions: GET streams, the waiters of
// server-to-client requests, and in-flight requests that can be cancelled.
//
// Its methods hold l.mu only around map operations, each released by a
// deferred Unlock: a panic under l.mu would otherwise leave every later
// legacy request of the process waiting for it.
type local struct {
	mu       sync.Mutex
	streams  map[string]*getStream     // session id -> its GET stream
	waiters  map[string]chan idAnswer  // server request id -> its call's answers
	inflight map[inflightKey]*inflight // (session id, request id) -> the request
}

// inflightKey names a legacy request of a session: its session id and its
// raw JSON-RPC id.
type inflightKey struct{ session, id string }

// inflight is a legacy request being answered in this process, and the
// context it runs in. In a session a request is cancelled by
// notifications/cancelled, not by a dropped connection (2025-11-25
// basic/utilities/cancellation), so the context keeps the values of the
// HTTP request's context but neither its deadline nor its cancellation: it
// is done when the request is released or cancelled by the client.
//
// It is its own context.Context (one allocation per request instead of the
// four of context.WithCancel over context.WithoutCancel) and implements
// AfterFunc, so that contexts a handler derives from it are cancelled
// without a goroutine each (see context.AfterFunc).
type inflight struct {
	values    context.Context // context.WithoutCancel of the HTTP request's
	local     *local
	key       inflightKey
	cancelled atomic.Bool // by notifications/cancelled: send no response

	mu     sync.Mutex
	done   chan struct{} // made by the first Done, closed by cancel
	err    error         // context.Canceled once cancelled
	afters []*afterFunc  // run by cancel
}

// afterFunc is a function registered with inflight.AfterFunc.
type afterFunc struct{ f func() }

// newInflight returns the in-flight record of the request key of sess,
// running in ctx: in the allocation sess was loaded with when it has one.
func newInflight(ctx context.Context, l *local, sess *Session, key inflightKey) *inflight {
	f := sess.flight
	sess.flight = nil
	if f == nil {
		f = new(inflight)
	}
	f.values, f.local, f.key = context.WithoutCancel(ctx), l, key
	return f
}

// Deadline reports no deadline: a session's request has none of its own.
func (f *inflight) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done returns a channel closed when the request is released or cancelled.
func (f *inflight) Done() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done == nil {
		f.done = make(chan struct{})
		if f.err != nil {
			close(f.done)
		}
	}
	return f.done
}

// Err returns context.Canceled once the request is released or cancelled,
// nil before.
func (f *inflight) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Value returns the HTTP request context's value for key.
func (f *inflight) Value(key any) any { return f.values.Value(key) }

// AfterFunc arranges for fn to run in its own goroutine once the request is
// done, as context.AfterFunc does; stop reports whether it kept fn from
// running.
func (f *inflight) AfterFunc(fn func()) (stop func() bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		go fn()
		return func() bool { return false }
	}
	a := &afterFunc{f: fn}
	f.afters = append(f.afters, a)
	return func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, x := range f.afters {
			if x == a {
				f.afters = append(f.afters[:i], f.afters[i+1:]...)
				return true
			}
		}
		return false
	}
}

func (f *inflight) String() string { return "mcpfn legacy request context" }

// cancel ends the request's context; later calls do nothing.
func (f *inflight) cancel() {
	f.mu.Lock()
	if f.err != nil {
		f.mu.Unlock()
		return
	}
	f.err = context.Canceled
	if f.done != nil {
		close(f.done)
	}
	afters := f.afters
	f.afters = nil
	f.mu.Unlock()
	for _, a := range afters {
		go a.f()
	}
}

// release forgets the request and ends its context; nil does nothing.
func (f *inflight) release() {
	if f != nil {
		f.local.dropInflight(f.key)
		f.cancel()
	}
}

// cancelledByClient reports whether notifications/cancelled cancelled the
// request; false for nil.
func (f *inflight) cancelledByClient() bool { return f != nil && f.cancelled.Load() }

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

// endLocalSession closes the GET stream of a session that ended.
func (s *Server) endLocalSession(id string) {
	if g := s.local.takeStream(id); g != nil {
		g.end()
	}
}

// addStream makes g the GET stream of session id, ending the one it replaces:
// one GET stream per session, so a message goes to one stream. g takes
// over the place of the stream it replaces among the long-lived streams;
// otherwise acquire gives it one, or the error that refuses g.
func (l *local) addStream(id string, g *getStream, acquire func() (*streamSlot, error)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.streams[id]; old != nil {
		old.end()
		g.slot, old.slot = old.slot, nil
	} else {
		sl, err := acquire()
		if err != nil {
			return err
		}
		g.slot = sl
	}
	if l.streams == nil {
		l.streams = map[string]*getStream{}
	}
	l.streams[id] = g
	return nil
}

// dropStream forgets g as the GET stream of session id, unless another
// stream replaced it meanwhile, and returns the place g still holds (nil
// when its replacement took it over).
func (l *local) dropStream(id string, g *getStream) *streamSlot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[id] == g {
		delete(l.streams, id)
	}
	sl := g.slot
	g.slot = nil
	return sl
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
func (l *local) addInflight(key inflightKey, f *inflight) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight == nil {
		l.inflight = map[inflightKey]*inflight{}
	}
	l.inflight[key] = f
}

// dropInflight forgets the request recorded under key.
func (l *local) dropInflight(key inflightKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inflight, key)
}

// findInflight returns the request recorded under key, or nil.
func (l *local) findInflight(key inflightKey) *inflight {
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
