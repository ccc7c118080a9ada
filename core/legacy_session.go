package core

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// SessionMode selects how legacy (2025-*) clients get sessions.
type SessionMode int

const (
	// SessionsAuto (the default) issues a session to every initialize and
	// also serves legacy requests that come without one, each on its own.
	SessionsAuto SessionMode = iota
	// SessionsStateful issues sessions and requires Mcp-Session-Id on every
	// request after initialize (400 without it).
	SessionsStateful
	// SessionsStateless never issues a session: every legacy request stands
	// alone. Tools cannot ask legacy clients for input then.
	SessionsStateless
)

// Session defaults (ServerOptions).
const (
	DefaultSessionIdleTimeout      = 1800 * time.Second
	DefaultMaxSessionsPerPrincipal = 100
	DefaultMaxAnonymousSessions    = 10000
)

// Session is a legacy session: the negotiated protocol version and client
// capabilities, plus values tools keep between calls. A Session is valid
// during the request that carries it; its methods are safe for concurrent
// use. Values are stored as JSON in every store, so they round-trip the same
// in memory and in DynamoDB.
type Session struct {
	srv *Server
	mu  sync.Mutex
	rec *SessionRecord
	d   *sessionData // shared with the decoded cache: never modified in place
	// flight, when set, is the allocation the request that loaded the
	// session registers itself in (see newInflight).
	flight *inflight
	// loaded is when the default store's record was read (Unix ns), for
	// the first stale check only; 0 after it.
	loaded int64
}

// ID returns the session id (the Mcp-Session-Id header).
func (s *Session) ID() string { return s.rec.ID }

// ProtocolVersion returns the negotiated protocol revision.
func (s *Session) ProtocolVersion() string { return s.d.Version }

// ClientCapabilities returns the capabilities declared at initialize.
func (s *Session) ClientCapabilities() *ClientCapabilities {
	if s.d.Caps == nil {
		return emptyCaps
	}
	return s.d.Caps
}

// Get decodes the value stored under key into v. It reports false when
// there is none.
func (s *Session) Get(key string, v any) (bool, error) {
	raw, ok := s.value(key)
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("session value %q: %w", key, err)
	}
	return true, nil
}

// value returns the raw value stored under key.
func (s *Session) value(key string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.d.Values[key]
	return raw, ok
}

// Set stores v (encoded as JSON) under key. It writes through to the store.
func (s *Session) Set(ctx context.Context, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("session value %q: %w", key, err)
	}
	return s.mutate(ctx, func(d *sessionData) error {
		if d.Values == nil {
			d.Values = map[string]json.RawMessage{}
		}
		d.Values[key] = raw
		return nil
	})
}

// Delete removes the value stored under key.
func (s *Session) Delete(ctx context.Context, key string) error {
	return s.mutate(ctx, func(d *sessionData) error {
		delete(d.Values, key)
		return nil
	})
}

// Update replaces the value under key with fn's result, atomically: fn gets
// the current stored value (nil when there is none) and runs again if
// another request changed the session meanwhile, so no update is lost across
// concurrent requests or instances.
func (s *Session) Update(ctx context.Context, key string, fn func(current json.RawMessage) (any, error)) error {
	return s.mutate(ctx, func(d *sessionData) error {
		v, err := fn(d.Values[key])
		if err != nil {
			return err
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("session value %q: %w", key, err)
		}
		if d.Values == nil {
			d.Values = map[string]json.RawMessage{}
		}
		d.Values[key] = raw
		return nil
	})
}

// UpdateSessionValue is Session.Update with a type parameter: fn gets the
// current value (the zero value when there is none) and returns the new one,
// which UpdateSessionValue also returns.
func UpdateSessionValue[T any](ctx context.Context, s *Session, key string, fn func(T) (T, error)) (T, error) {
	var out T
	err := s.Update(ctx, key, func(cur json.RawMessage) (any, error) {
		var v T
		if cur != nil {
			if err := json.Unmarshal(cur, &v); err != nil {
				return nil, fmt.Errorf("session value %q: %w", key, err)
			}
		}
		nv, err := fn(v)
		out = nv
		return nv, err
	})
	return out, err
}

// SessionValue is Session.Get with a type parameter.
func SessionValue[T any](s *Session, key string) (T, bool, error) {
	var v T
	ok, err := s.Get(key, &v)
	return v, ok, err
}

// SessionRecord is the stored form of a legacy session. Stores index ID,
// Principal, LastUsed and Expires, and keep Data (JSON owned by the server)
// opaque. A record never holds secrets beyond what the session itself holds.
type SessionRecord struct {
	// ID is the Mcp-Session-Id: unguessable, visible ASCII.
	ID string
	// Principal identifies the owner (a hash of issuer, client and subject);
	// "" for an anonymous session.
	Principal string
	// Data is the session's state as JSON.
	Data []byte
	// Version is the optimistic-concurrency counter, managed by the store:
	// 1 after Create, incremented by every successful Update.
	Version int64
	// LastUsed orders sessions for least-recently-used eviction.
	LastUsed time.Time
	// Expires is when the session ends unless updated again (LastUsed plus
	// the idle timeout). A record whose Expires has passed is absent for
	// every operation, whether or not the store has deleted it yet.
	Expires time.Time
}

// SessionLimits bounds the sessions a store keeps.
type SessionLimits struct {
	// PerPrincipal is the maximum number of live sessions of one principal.
	PerPrincipal int
	// Anonymous is the maximum number of live anonymous sessions together.
	Anonymous int
}

// SessionStore keeps legacy sessions. It is designed so that each ordinary
// legacy request costs at most one read (Get) and one conditional write
// (Update). Implementations must be safe for concurrent use, across
// goroutines and, for shared stores, across processes. They return the
// sentinels ErrSessionNotFound and ErrSessionConflict (wrapped with %w).
// The package store/storetest holds the tests every store must pass.
type SessionStore interface {
	// Create stores a new record (its Version becomes 1). When the owner's
	// pool (rec.Principal's sessions, or all anonymous sessions) would then
	// exceed its limit, Create deletes the least recently used sessions of
	// that pool and returns their ids. A limit of zero or less means none.
	Create(ctx context.Context, rec *SessionRecord, lim SessionLimits) (evicted []string, err error)
	// Get returns the record with the given id, or ErrSessionNotFound when
	// it does not exist or has expired.
	Get(ctx context.Context, id string) (*SessionRecord, error)
	// Update replaces Data, LastUsed and Expires of the stored record if its
	// Version still equals rec.Version, and then increments rec.Version. It
	// returns ErrSessionConflict when another writer got there first (the
	// caller re-reads and retries) and ErrSessionNotFound when the record is
	// gone or expired. A failed Update changes nothing.
	Update(ctx context.Context, rec *SessionRecord) error
	// Delete removes the record. It returns ErrSessionNotFound when there
	// was none.
	Delete(ctx context.Context, id string) error
}

// sessionData is the server-owned JSON of a SessionRecord.
type sessionData struct {
	Version     string                     `json:"v"`
	Caps        *ClientCapabilities        `json:"c,omitempty"`
	ClientInfo  *Implementation            `json:"i,omitempty"`
	Initialized bool                       `json:"ok,omitempty"`
	LogLevel    LoggingLevel               `json:"l,omitempty"`
	Subs        []string                   `json:"s,omitempty"`
	Values      map[string]json.RawMessage `json:"d,omitempty"`
	// Answers holds client responses to server-to-client requests that
	// reached an instance other than the one waiting for them.
	Answers map[string]json.RawMessage `json:"a,omitempty"`
	// Parked holds legacy calls waiting for the client's answers on a
	// buffered platform (SSE polling), by stream id.
	Parked map[string]*parkedCall `json:"pc,omitempty"`
	// Cancelled holds ids of requests the client cancelled through another
	// instance than the one running them (most recent last, bounded).
	Cancelled []string `json:"x,omitempty"`
	// Started is when initialize created the session, in Unix
	// milliseconds (zero for a session created without it).
	Started int64 `json:"t,omitempty"`
}

// SessionEnd describes a legacy session that ended (ServerOptions.OnSessionEnd).
type SessionEnd struct {
	// ID is the session id (the Mcp-Session-Id header): a bearer
	// credential of the session, so record a digest of it, not the id.
	ID string
	// ProtocolVersion is the session's negotiated revision.
	ProtocolVersion string
	// Started is when initialize created the session; zero when the
	// session's data does not say (a session created by an older server
	// sharing the store).
	Started time.Time
	// Ended is when the session ended.
	Ended time.Time
	// Reason is how it ended: SessionEndDeleted.
	Reason string
}

// SessionEndDeleted is the SessionEnd.Reason of a session the client
// ended with DELETE.
const SessionEndDeleted = "deleted"

// newSessionID returns 32 random bytes, base64url: unguessable and visible
// ASCII.
func newSessionID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) sessionLimits() SessionLimits {
	return SessionLimits{PerPrincipal: s.opts.MaxSessionsPerPrincipal, Anonymous: s.opts.MaxAnonymousSessions}
}

// createSession stores a new session for an initialize request.
func (s *Server) createSession(ctx context.Context, p *Principal, d sessionData) (*Session, error) {
	now := time.Now()
	raw, err := json.Marshal(&d)
	if err != nil {
		return nil, err
	}
	rec := &SessionRecord{ID: newSessionID(), Principal: p.key(), Data: raw, LastUsed: now, Expires: now.Add(s.opts.SessionIdleTimeout)}
	evicted, err := s.store.Create(ctx, rec, s.sessionLimits())
	if err != nil {
		return nil, fmt.Errorf("creating session: %w", err)
	}
	for _, id := range evicted {
		s.log.InfoContext(ctx, "evicted least recently used session", "session", sessionDigest(id))
		s.endLocalSession(id)
	}
	return &Session{srv: s, rec: rec, d: &d}, nil
}

// ownedSession is a Session, the record it was loaded with and the
// in-flight record of the request that loaded it, in one allocation.
type ownedSession struct {
	Session
	rec    SessionRecord
	flight inflight
}

// errSessionForeign means the session belongs to another principal.
var errSessionForeign = errors.New("session belongs to another principal")

// loadSession reads a session for a request by principal p.
func (s *Server) loadSession(ctx context.Context, id string, p *Principal) (*Session, error) {
	var sess *Session
	if ms, ok := s.store.(*MemorySessionStore); ok {
		// The in-memory store copies the record into the Session's own
		// allocation and shares its Data, which neither side writes.
		o := &ownedSession{}
		now := time.Now()
		if err := ms.getInto(id, now, &o.rec); err != nil {
			return nil, err
		}
		o.Session.srv, o.Session.rec, o.Session.flight = s, &o.rec, &o.flight
		o.Session.loaded = now.UnixNano()
		sess = &o.Session
	} else {
		rec, err := s.store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		sess = &Session{srv: s, rec: rec}
	}
	rec := sess.rec
	if rec.Principal != p.key() {
		return nil, errSessionForeign
	}
	if d, ok := s.decoded.get(id, rec.Version); ok {
		sess.d = d
		return sess, nil
	}
	d := new(sessionData)
	if err := json.Unmarshal(rec.Data, d); err != nil {
		return nil, fmt.Errorf("session %s: corrupt data: %w", id, err)
	}
	s.decoded.put(id, rec.Version, d)
	sess.d = d
	return sess, nil
}

// decodedSessions caches the decoded data of recently used sessions by
// record version, so that a request whose session has not changed since the
// last one skips decoding it. Cached values are never modified: mutate copies
// before it changes anything.
type decodedSessions struct {
	mu sync.Mutex
	m  map[string]decodedSession
}

type decodedSession struct {
	version int64
	d       *sessionData
}

const maxDecodedSessions = 4096

func (c *decodedSessions) get(id string, version int64) (*sessionData, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || e.version != version {
		return nil, false
	}
	return e.d, true
}

func (c *decodedSessions) put(id string, version int64, d *sessionData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxDecodedSessions {
		c.m = make(map[string]decodedSession)
	}
	c.m[id] = decodedSession{version, d}
}

// mutate applies fn to the session's data and writes it with a conditional
// update, re-reading and re-applying on conflicts. It also renews the
// session's idle expiry.
func (sess *Session) mutate(ctx context.Context, fn func(*sessionData) error) error {
	s := sess.srv
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for attempt := 0; ; attempt++ {
		d := *sess.d
		d.Values = cloneRawMap(sess.d.Values)
		d.Answers = cloneRawMap(sess.d.Answers)
		if sess.d.Parked != nil {
			d.Parked = make(map[string]*parkedCall, len(sess.d.Parked))
			for k, v := range sess.d.Parked {
				d.Parked[k] = v
			}
		}
		d.Subs = append([]string(nil), sess.d.Subs...)
		d.Cancelled = append([]string(nil), sess.d.Cancelled...)
		if err := fn(&d); err != nil {
			return err
		}
		raw, err := json.Marshal(&d)
		if err != nil {
			return err
		}
		rec := *sess.rec
		now := time.Now()
		rec.Data, rec.LastUsed, rec.Expires = raw, now, now.Add(s.opts.SessionIdleTimeout)
		err = s.store.Update(ctx, &rec)
		if err == nil {
			sess.rec, sess.d = &rec, &d
			s.decoded.put(rec.ID, rec.Version, &d)
			return nil
		}
		if !errors.Is(err, ErrSessionConflict) {
			return fmt.Errorf("updating session: %w", err)
		}
		if attempt >= maxMutateAttempts {
			// Nothing was written: the client may safely retry.
			e := NewError(CodeInternalError, "The session is busy: retry the request").WithHTTP(http.StatusServiceUnavailable, nil)
			e.Cause = fmt.Errorf("updating session: %w", err)
			return e
		}
		// Back off with jitter, so that writers racing on one session
		// (several instances, several requests) spread out.
		backoff := time.Duration(1<<min(attempt, 6)) * time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff/2 + time.Duration(mrand.Int64N(int64(backoff)))):
		}
		fresh, err := s.store.Get(ctx, sess.rec.ID)
		if err != nil {
			return fmt.Errorf("updating session: %w", err)
		}
		var fd sessionData
		if err := json.Unmarshal(fresh.Data, &fd); err != nil {
			return fmt.Errorf("session %s: corrupt data: %w", fresh.ID, err)
		}
		sess.rec, sess.d = fresh, &fd
	}
}

// maxMutateAttempts bounds the conditional writes of one session update.
const maxMutateAttempts = 12

// touch renews the session's idle expiry when a tenth of the idle timeout has
// passed since the last write, so that most requests cost no write.
func (sess *Session) touch(ctx context.Context) error {
	if !sess.stale() {
		return nil
	}
	return sess.mutate(ctx, func(*sessionData) error { return nil })
}

// stale reports whether a tenth of the idle timeout has passed since the
// session was last written.
func (sess *Session) stale() bool {
	s := sess.srv
	sess.mu.Lock()
	defer sess.mu.Unlock()
	var now time.Time
	if sess.loaded != 0 {
		// The first question of the request that loaded the session,
		// which asks it at once: the load's own clock reading will do.
		now, sess.loaded = time.Unix(0, sess.loaded), 0
	} else {
		now = time.Now()
	}
	return now.Sub(sess.rec.LastUsed) > s.opts.SessionIdleTimeout/10
}

// reset replaces the session's record and data with ones just read.
func (sess *Session) reset(rec *SessionRecord, d sessionData) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.rec, sess.d = rec, &d
}

func cloneRawMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	c := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func addSorted(list []string, v string) []string {
	i := sort.SearchStrings(list, v)
	if i < len(list) && list[i] == v {
		return list
	}
	return append(list[:i], append([]string{v}, list[i:]...)...)
}

func removeString(list []string, v string) []string {
	out := list[:0]
	for _, x := range list {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func sessionHeader(id string) func(http.Header) {
	return func(h http.Header) { h.Set(HeaderSessionID, id) }
}

// serveLegacyDelete ends a session.
func (s *Server) serveLegacyDelete(w http.ResponseWriter, hr *http.Request) {
	ctx := hr.Context()
	id := hr.Header.Get(HeaderSessionID)
	if s.opts.Sessions == SessionsStateless {
		s.methodNotAllowed(w)
		return
	}
	x := newExchange(w, acceptance{json: true}, eraLegacy)
	if id == "" {
		s.replyError(ctx, x, nil, legacyError(http.StatusBadRequest, CodeInvalidRequest, "Bad Request: "+HeaderSessionID+" header is required"))
		return
	}
	sess, _, err := s.sessionFor(ctx, hr)
	if err != nil {
		s.replyError(ctx, x, nil, err)
		return
	}
	err = s.store.Delete(ctx, id)
	if err != nil && !errors.Is(err, ErrSessionNotFound) {
		s.replyError(ctx, x, nil, storeFailure(err))
		return
	}
	s.endLocalSession(id)
	if err == nil && s.opts.OnSessionEnd != nil {
		// ErrSessionNotFound: a concurrent DELETE ended it and reports it.
		s.sessionEnded(ctx, sess)
	}
	w.WriteHeader(http.StatusNoContent)
}

// sessionEnded calls ServerOptions.OnSessionEnd for sess, which the client
// deleted.
func (s *Server) sessionEnded(ctx context.Context, sess *Session) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "OnSessionEnd panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	e := SessionEnd{ID: sess.rec.ID, ProtocolVersion: sess.d.Version, Ended: time.Now(), Reason: SessionEndDeleted}
	if sess.d.Started != 0 {
		e.Started = time.UnixMilli(sess.d.Started)
	}
	s.opts.OnSessionEnd(ctx, e)
}
