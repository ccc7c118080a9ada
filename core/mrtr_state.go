package core

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// DefaultStateTTL is how long a sealed requestState stays valid.
const DefaultStateTTL = 600 * time.Second

// MinKeyBytes is the minimum length of a signing key.
const MinKeyBytes = 32

// Key is an HMAC-SHA256 key that seals requestState. ID travels in every
// sealed state so that verification picks the right key; it must be 1 to 64
// characters of A-Z, a-z, 0-9, '_' and '-'. Secret must hold at least
// MinKeyBytes bytes.
type Key struct {
	ID     string
	Secret []byte
}

// LogValue redacts the secret.
func (k Key) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", k.ID), slog.String("secret", "REDACTED"))
}

// Validate reports whether k can seal requestState: an ID of 1 to 64
// characters of A-Z, a-z, 0-9, '_' and '-', and a Secret of at least
// MinKeyBytes bytes. The error names the key id, never the secret.
func (k Key) Validate() error {
	if k.ID == "" || len(k.ID) > 64 {
		return fmt.Errorf("key id %q: must have 1 to 64 characters", k.ID)
	}
	for i := 0; i < len(k.ID); i++ {
		c := k.ID[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("key id %q: only A-Z, a-z, 0-9, '_' and '-' are allowed", k.ID)
		}
	}
	if len(k.Secret) < MinKeyBytes {
		return fmt.Errorf("key %q: %d bytes, at least %d required", k.ID, len(k.Secret), MinKeyBytes)
	}
	return nil
}

// KeyProvider supplies the keys that seal requestState: an ordered list whose
// first key signs and all of which verify. Rotate by putting a new key first
// and removing the old one after the state TTL has passed. Keys is called on
// every sealing and verification; implementations cache and must be safe for
// concurrent use. Every key must pass Key.Validate: a list with an invalid
// key (or none) fails each request that needs it with a generic -32603, and
// the reason is logged. Keys known when the server is built (StaticKeys)
// are checked then instead.
type KeyProvider interface {
	Keys(ctx context.Context) ([]Key, error)
}

// KeyRefresher is implemented by a KeyProvider that can reload its keys at
// once. The server calls RefreshKeys when a sealed state names a key id it
// does not know, which happens on an instance that has not yet seen a
// rotation another instance already signs with. Implementations rate-limit
// it, since clients can send any key id.
type KeyRefresher interface {
	RefreshKeys(ctx context.Context) ([]Key, error)
}

// StaticKeys is a KeyProvider with a fixed list of keys, known when the
// server is built: ServerOptions.Validate (and so NewServer) refuses an empty
// list, a key Key.Validate refuses, and an id listed twice.
type StaticKeys []Key

// Keys implements KeyProvider.
func (k StaticKeys) Keys(context.Context) ([]Key, error) { return k, nil }

// validate checks a key list that is configuration: every key valid, at
// least one, each id once (a second key of an id would never verify).
func (k StaticKeys) validate() error {
	if len(k) == 0 {
		return errors.New("no key")
	}
	for i, key := range k {
		if err := key.Validate(); err != nil {
			return err
		}
		for _, other := range k[:i] {
			if other.ID == key.ID {
				return fmt.Errorf("key id %q is listed twice", key.ID)
			}
		}
	}
	return nil
}

// NewRandomKey returns a key with a fresh random 32-byte secret.
func NewRandomKey(id string) Key {
	b := make([]byte, 32)
	rand.Read(b)
	return Key{ID: id, Secret: b}
}

// sealer seals and opens requestState.
type sealer struct {
	keys KeyProvider
	ttl  time.Duration
	log  *slog.Logger
	// perProcess is set when no KeyProvider was configured: the keys are
	// the process's own (randomKey).
	perProcess bool
	// lastUnknown is when (unix nanoseconds) a state naming an unknown key
	// id was last logged at level Warn; see warnUnknownKey.
	lastUnknown atomic.Int64
	// checked caches the last validated key list (by identity of its first
	// element and length) to skip re-validation on every call.
	mu      sync.Mutex
	checked []Key
	// pools holds reusable keyed HMAC states per secret of the current key
	// list, rebuilt when the list changes: a key removed by a rotation
	// leaves with its pool.
	pools atomic.Pointer[map[string]*sync.Pool]
}

func newSealer(kp KeyProvider, ttl time.Duration, log *slog.Logger) *sealer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &sealer{keys: kp, ttl: ttl, log: log}
	if kp == nil {
		// The platform adapters, which know that many instances are the
		// norm there, turn this into a warning (Server.PerProcessKeys).
		s.keys, s.perProcess = &randomKey{}, true
		log.Debug("no signing keys configured: a random per-process key will seal requestState; it does not survive a restart or reach other instances")
	}
	return s
}

// randomKey is the provider of a server without configured keys: one random
// key, made on first use (a cold start that never seals pays nothing). Its
// id is random too, so that a state sealed by another such process names a
// key id this one does not have, and is reported as such (warnUnknownKey)
// rather than as a bad signature.
type randomKey struct {
	once sync.Once
	keys StaticKeys
}

func (r *randomKey) Keys(context.Context) ([]Key, error) {
	r.once.Do(func() {
		var id [6]byte
		rand.Read(id[:])
		r.keys = StaticKeys{NewRandomKey(fmt.Sprintf("process-%x", id))}
	})
	return r.keys, nil
}

// unknownKeyWarnInterval bounds the warnings about states naming unknown
// key ids: any client can send such a state, so at most one per interval is
// logged at level Warn, the others at level Debug.
const unknownKeyWarnInterval = time.Minute

// warnUnknownKey logs a state that names key id, which this instance does
// not have, with its likely cause; the answer on the wire stays the one
// invalid-state error.
func (s *sealer) warnUnknownKey(ctx context.Context, id string) {
	if len(id) > 64 { // longer than any key id: not one, and the client's
		id = id[:64] + "..."
	}
	level := slog.LevelDebug
	now := time.Now().UnixNano()
	if last := s.lastUnknown.Load(); (last == 0 || now-last >= int64(unknownKeyWarnInterval)) && s.lastUnknown.CompareAndSwap(last, now) {
		level = slog.LevelWarn
	}
	if s.perProcess {
		s.log.Log(ctx, level, "rejected a requestState sealed with a key this instance does not have: "+
			"it was likely sealed by another instance, and several instances without shared keys each seal with their own random key; "+
			"configure shared keys (MCPFN_KEYS_SECRET_ID or MCPFN_STATE_KEY with the deploy kits, or ServerOptions.Keys: core.StaticKeys or a core.KeyProvider)",
			"key_id", id)
		return
	}
	s.log.Log(ctx, level, "rejected a requestState sealed with a key this instance does not have: "+
		"it was likely sealed by an instance with other keys (a rotation this instance has not seen, a key retired too early, or instances configured with different keys)",
		"key_id", id)
}

func (s *sealer) loadKeys(ctx context.Context) ([]Key, error) {
	keys, err := s.keys.Keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading signing keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("the KeyProvider returned no signing keys")
	}
	s.mu.Lock()
	same := len(s.checked) == len(keys) && &s.checked[0] == &keys[0]
	s.mu.Unlock()
	if !same {
		// Keys a provider loads at run time are checked here, on every
		// request until they are valid: the request fails (-32603, the
		// reason logged, no key detail sent) and the server keeps serving.
		for _, k := range keys {
			if err := k.Validate(); err != nil {
				return nil, fmt.Errorf("invalid signing key from the KeyProvider: %w", err)
			}
		}
		s.mu.Lock()
		s.checked = keys
		s.rebuildPools(keys)
		s.mu.Unlock()
	}
	return keys, nil
}

// stateBinding identifies the call a state belongs to.
type stateBinding struct {
	method    string
	target    string // tool name, prompt name or resource URI
	args      []byte // raw arguments (canonicalized before hashing)
	principal *Principal
}

func (b stateBinding) digest() (string, error) {
	canon, err := jsonwire.Canonical(b.args)
	if err != nil {
		return "", err
	}
	pk := b.principal.key()
	buf := make([]byte, 0, len(b.method)+len(b.target)+len(canon)+len(pk)+32)
	for _, s := range [...]string{b.method, b.target} {
		buf = strconv.AppendInt(buf, int64(len(s)), 10)
		buf = append(append(buf, ':'), s...)
	}
	buf = strconv.AppendInt(buf, int64(len(canon)), 10)
	buf = append(append(buf, ':'), canon...)
	buf = strconv.AppendInt(buf, int64(len(pk)), 10)
	buf = append(append(buf, ':'), pk...)
	sum := sha256.Sum256(buf)
	return base64.RawURLEncoding.EncodeToString(sum[:18]), nil
}

// statePayload is the signed content of a sealed state.
type statePayload struct {
	State   string   `json:"s,omitempty"`
	Keys    []string `json:"k,omitempty"` // input request keys asked in that round
	Binding string   `json:"b"`
	Expires int64    `json:"e"`           // unix milliseconds
	Round   int      `json:"r,omitempty"` // input_required results of the call so far
}

const sealVersion = "v1"

// seal signs a handler's state (and the keys of the input requests it
// asked, and the number of times the call has asked for input, round) for
// the call identified by b.
func (s *sealer) seal(ctx context.Context, state string, inputKeys []string, round int, b stateBinding) (string, error) {
	keys, err := s.loadKeys(ctx)
	if err != nil {
		return "", err
	}
	d, err := b.digest()
	if err != nil {
		return "", err
	}
	sort.Strings(inputKeys)
	pj := make([]byte, 0, 96+len(state)+len(d))
	pj = append(pj, '{')
	if state != "" {
		pj = append(jsonwire.AppendString(append(pj, `"s":`...), state), ',')
	}
	if len(inputKeys) > 0 {
		pj = append(pj, `"k":[`...)
		for i, k := range inputKeys {
			if i > 0 {
				pj = append(pj, ',')
			}
			pj = jsonwire.AppendString(pj, k)
		}
		pj = append(pj, "],"...)
	}
	if round > 0 {
		pj = append(strconv.AppendInt(append(pj, `"r":`...), int64(round), 10), ',')
	}
	pj = append(jsonwire.AppendString(append(pj, `"b":`...), d), ',')
	pj = strconv.AppendInt(append(pj, `"e":`...), time.Now().Add(s.ttl).UnixMilli(), 10)
	pj = append(pj, '}')
	k := keys[0]
	tok := make([]byte, 0, len(sealVersion)+len(k.ID)+base64.RawURLEncoding.EncodedLen(len(pj))+48)
	tok = append(append(append(append(tok, sealVersion...), '.'), k.ID...), '.')
	tok = base64.RawURLEncoding.AppendEncode(tok, pj)
	sig := s.mac(k.Secret, tok)
	tok = base64.RawURLEncoding.AppendEncode(append(tok, '.'), sig[:])
	return string(tok), nil
}

// rebuildPools replaces the HMAC state pools by pools for exactly the
// secrets in keys, keeping the pools of secrets that stay. Computing the key
// schedule and allocating two digests on every seal and verification is most
// of their cost. Called with s.mu held.
func (s *sealer) rebuildPools(keys []Key) {
	var old map[string]*sync.Pool
	if pm := s.pools.Load(); pm != nil {
		old = *pm
	}
	m := make(map[string]*sync.Pool, len(keys))
	for _, k := range keys {
		if p := old[string(k.Secret)]; p != nil {
			m[string(k.Secret)] = p
			continue
		}
		sec := append([]byte(nil), k.Secret...)
		m[string(sec)] = &sync.Pool{New: func() any { return hmac.New(sha256.New, sec) }}
	}
	s.pools.Store(&m)
}

// mac computes HMAC-SHA256 of msg under secret, with a pooled state when
// secret belongs to the current key list.
func (s *sealer) mac(secret, msg []byte) [sha256.Size]byte {
	var m hash.Hash
	var pool *sync.Pool
	if pm := s.pools.Load(); pm != nil {
		pool = (*pm)[string(secret)]
	}
	if pool != nil {
		m = pool.Get().(hash.Hash)
		m.Reset()
	} else {
		m = hmac.New(sha256.New, secret)
	}
	m.Write(msg)
	var out [sha256.Size]byte
	m.Sum(out[:0])
	if pool != nil {
		pool.Put(m)
	}
	return out
}

func findKey(keys []Key, id string) *Key {
	for i := range keys {
		if keys[i].ID == id {
			return &keys[i]
		}
	}
	return nil
}

// open verifies a sealed state for the call identified by b and returns the
// handler's plain state and the input keys of the previous round. Every
// failure is the same -32602; the precise reason is in the error's Cause.
func (s *sealer) open(ctx context.Context, token string, b stateBinding) (*statePayload, error) {
	var parts [4]string
	rest := token
	for i := 0; i < 3; i++ {
		j := strings.IndexByte(rest, '.')
		if j < 0 {
			return nil, errInvalidState(errors.New("malformed token"))
		}
		parts[i], rest = rest[:j], rest[j+1:]
	}
	parts[3] = rest
	if parts[0] != sealVersion || strings.IndexByte(rest, '.') >= 0 {
		return nil, errInvalidState(errors.New("malformed token"))
	}
	keys, err := s.loadKeys(ctx)
	if err != nil {
		return nil, err
	}
	key := findKey(keys, parts[1])
	if r, ok := s.keys.(KeyRefresher); ok && key == nil {
		if fresh, err := r.RefreshKeys(ctx); err == nil {
			if k := findKey(fresh, parts[1]); k != nil && k.Validate() == nil {
				key = k
			}
		}
	}
	if key == nil {
		s.warnUnknownKey(ctx, parts[1])
		return nil, errInvalidState(fmt.Errorf("unknown key id %q: %w", parts[1], ErrKeyNotFound))
	}
	if base64.RawURLEncoding.DecodedLen(len(parts[3])) != sha256.Size {
		return nil, errInvalidState(errors.New("malformed signature"))
	}
	var sig [sha256.Size]byte
	n, err := base64.RawURLEncoding.Strict().Decode(sig[:], []byte(parts[3]))
	if err != nil || n != sha256.Size {
		return nil, errInvalidState(errors.New("malformed signature"))
	}
	head := token[:len(token)-len(parts[3])-1]
	want := s.mac(key.Secret, []byte(head))
	if subtle.ConstantTimeCompare(sig[:n], want[:]) != 1 {
		return nil, errInvalidState(errors.New("bad signature"))
	}
	pj, err := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err != nil {
		return nil, errInvalidState(errors.New("malformed payload"))
	}
	// The payload is authenticated: it is what seal wrote.
	var p statePayload
	if jsonwire.EachMember(pj, func(k, v []byte) bool {
		switch string(k) {
		case "s":
			p.State, _ = jsonwire.RawString(v)
		case "b":
			p.Binding, _ = jsonwire.RawString(v)
		case "e":
			p.Expires, _ = strconv.ParseInt(string(v), 10, 64)
		case "r":
			p.Round, _ = strconv.Atoi(string(v))
		case "k":
			for i := jsonwire.SkipSpace(v, 1); i < len(v) && v[i] == '"'; {
				end := jsonwire.SkipString(v, i)
				if k, ok := jsonwire.RawString(v[i:end]); ok {
					p.Keys = append(p.Keys, k)
				}
				i = jsonwire.SkipSpace(v, end)
				if i < len(v) && v[i] == ',' {
					i = jsonwire.SkipSpace(v, i+1)
				}
			}
		}
		return true
	}) != nil {
		return nil, errInvalidState(errors.New("malformed payload"))
	}
	if time.Now().UnixMilli() >= p.Expires {
		return nil, errInvalidState(errors.New("expired"))
	}
	d, err := b.digest()
	if err != nil {
		return nil, errInvalidState(err)
	}
	if subtle.ConstantTimeCompare([]byte(d), []byte(p.Binding)) != 1 {
		return nil, errInvalidState(errors.New("issued for another call or caller"))
	}
	return &p, nil
}
