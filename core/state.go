package core

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
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

func (k Key) check() error {
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
// concurrent use.
type KeyProvider interface {
	Keys(ctx context.Context) ([]Key, error)
}

// StaticKeys is a KeyProvider with a fixed list of keys.
type StaticKeys []Key

// Keys implements KeyProvider.
func (k StaticKeys) Keys(context.Context) ([]Key, error) { return k, nil }

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
	now  func() time.Time
	log  *slog.Logger
	// checked caches the last validated key list (by identity of its first
	// element and length) to skip re-validation on every call.
	mu      sync.Mutex
	checked []Key
}

func newSealer(kp KeyProvider, ttl time.Duration, now func() time.Time, log *slog.Logger) *sealer {
	if kp == nil {
		kp = StaticKeys{NewRandomKey("local")}
		log.Warn("no signing keys configured: generated a random key; requestState will not survive a restart or reach other replicas")
	}
	return &sealer{keys: kp, ttl: ttl, now: now, log: log}
}

func (s *sealer) loadKeys(ctx context.Context) ([]Key, error) {
	keys, err := s.keys.Keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading signing keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("no signing keys")
	}
	s.mu.Lock()
	same := len(s.checked) == len(keys) && &s.checked[0] == &keys[0]
	s.mu.Unlock()
	if !same {
		for _, k := range keys {
			if err := k.check(); err != nil {
				return nil, err
			}
		}
		s.mu.Lock()
		s.checked = keys
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
	h := sha256.New()
	write := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	write(b.method)
	write(b.target)
	canon, err := canonicalJSON(b.args)
	if err != nil {
		return "", err
	}
	write(string(canon))
	write(b.principal.key())
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18]), nil
}

// statePayload is the signed content of a sealed state.
type statePayload struct {
	State   string   `json:"s,omitempty"`
	Keys    []string `json:"k,omitempty"` // input request keys asked in that round
	Binding string   `json:"b"`
	Expires int64    `json:"e"` // unix milliseconds
	Nonce   string   `json:"n"`
}

const sealVersion = "v1"

// seal signs a handler's state (and the keys of the input requests it
// asked) for the call identified by b.
func (s *sealer) seal(ctx context.Context, state string, inputKeys []string, b stateBinding) (string, error) {
	keys, err := s.loadKeys(ctx)
	if err != nil {
		return "", err
	}
	d, err := b.digest()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, 6)
	rand.Read(nonce)
	sort.Strings(inputKeys)
	p := statePayload{State: state, Keys: inputKeys, Binding: d,
		Expires: s.now().Add(s.ttl).UnixMilli(), Nonce: base64.RawURLEncoding.EncodeToString(nonce)}
	pj, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	k := keys[0]
	head := sealVersion + "." + k.ID + "." + base64.RawURLEncoding.EncodeToString(pj)
	return head + "." + base64.RawURLEncoding.EncodeToString(mac(k.Secret, head)), nil
}

func mac(secret []byte, msg string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// errInvalidState is the one answer to a state that fails verification.
func errInvalidState(cause error) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid or expired requestState",
		Data: map[string]any{"reason": "invalid_request_state"}, Cause: cause}
}

// open verifies a sealed state for the call identified by b and returns the
// handler's plain state and the input keys of the previous round. Every
// failure is the same -32602; the precise reason is in the error's Cause.
func (s *sealer) open(ctx context.Context, token string, b stateBinding) (*statePayload, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 4 || parts[0] != sealVersion {
		return nil, errInvalidState(errors.New("malformed token"))
	}
	keys, err := s.loadKeys(ctx)
	if err != nil {
		return nil, err
	}
	var key *Key
	for i := range keys {
		if keys[i].ID == parts[1] {
			key = &keys[i]
			break
		}
	}
	if key == nil {
		return nil, errInvalidState(fmt.Errorf("unknown key id %q: %w", parts[1], ErrKeyNotFound))
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(parts[3])
	if err != nil {
		return nil, errInvalidState(errors.New("malformed signature"))
	}
	head := token[:len(token)-len(parts[3])-1]
	if subtle.ConstantTimeCompare(sig, mac(key.Secret, head)) != 1 {
		return nil, errInvalidState(errors.New("bad signature"))
	}
	pj, err := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err != nil {
		return nil, errInvalidState(errors.New("malformed payload"))
	}
	var p statePayload
	if err := json.Unmarshal(pj, &p); err != nil {
		return nil, errInvalidState(errors.New("malformed payload"))
	}
	if s.now().UnixMilli() >= p.Expires {
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

// canonicalJSON re-encodes a JSON value with sorted object keys and numbers
// in a canonical form, so that equal arguments hash equally whatever their key
// order or number spelling. Absent or null arguments canonicalize to {}.
func canonicalJSON(raw []byte) ([]byte, error) {
	if len(raw) == 0 || isNull(raw) {
		return []byte("{}"), nil
	}
	v, err := decodeNumbers(raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(canonicalValue(v))
}

func canonicalValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = canonicalValue(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = canonicalValue(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return json.Number(strconv.FormatInt(i, 10))
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) {
			if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
		return x
	}
	return v
}
