package core

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
)

// The methods of local hold l.mu only around map operations, each released
// by a deferred Unlock: a panic under l.mu would otherwise leave every later
// legacy request of the process waiting for it.

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
	local     *local
	key       string // session id + "\x00" + request id
	cancel    context.CancelFunc
	cancelled atomic.Bool // by notifications/cancelled: send no response
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
