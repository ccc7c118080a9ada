package auth

import (
	"crypto"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// DPoP defaults (DPoPOptions).
const (
	// DefaultDPoPMaxAge is how far in the past a proof's iat may be: one
	// minute, time for a request to cross a slow network, short enough
	// that the replay cache holds every proof still accepted (RFC 9449
	// §11.1). SEP-1932 allows stateless servers up to five minutes either
	// way; a server nonce (DPoPOptions.NonceKey) takes the place of iat for
	// freshness when clients' clocks cannot be trusted.
	DefaultDPoPMaxAge = time.Minute
	// DefaultDPoPMaxFuture is how far in the future a proof's iat may be:
	// the clock skew tolerated from clients that run ahead.
	DefaultDPoPMaxFuture = 5 * time.Second
	// DefaultDPoPReplayCacheSize bounds the proofs (jti) remembered by one
	// instance to refuse their replay: about 140 bytes each when full
	// (BenchmarkDPoPReplayCache), so some 7 MB at most.
	DefaultDPoPReplayCacheSize = 50000
	// DefaultDPoPNonceWindow is the lifetime step of server nonces: a
	// nonce is accepted in the window it was made in and the next one.
	DefaultDPoPNonceWindow = 5 * time.Minute
	// MaxDPoPProofBytes bounds a DPoP header: a longer one is refused
	// before it is decoded.
	MaxDPoPProofBytes = 8 << 10
)

// DefaultDPoPAlgorithms are the JWS algorithms accepted in DPoP proofs by
// default: the asymmetric ones (RFC 9449 §4.2 forbids none and MACs).
var DefaultDPoPAlgorithms = []string{"ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512", "EdDSA"}

// DPoPOptions makes the protected resource accept DPoP-bound access tokens
// (RFC 9449; MCP SEP-1932), Options.DPoP. A request with
// "Authorization: DPoP <token>" must carry one DPoP header: a proof JWT
// (typ dpop+jwt, an accepted alg, a public jwk) signed by the key the
// token is bound to (its cnf.jkt, RFC 7638 thumbprint), for the request's
// method (htm) and the resource URI (htu: Options.Resource, the URL
// clients use, whatever proxies in front rewrite), fresh (iat), seen for
// the first time (jti), and for this token (ath); with NonceKey, also with
// a nonce of this server (§9).
//
// With or without DPoPOptions, a DPoP-bound token (one with cnf.jkt) sent
// with the Bearer scheme is refused (RFC 9449 §7.2): its binding would
// otherwise be worthless.
type DPoPOptions struct {
	// Required refuses Bearer tokens: every request needs a DPoP-bound
	// token and its proof, and challenges name only the DPoP scheme.
	// The metadata says dpop_bound_access_tokens_required (RFC 9728 §2).
	Required bool
	// Algorithms are the JWS algorithms accepted in proofs, also listed in
	// challenges (algs) and in the metadata
	// (dpop_signing_alg_values_supported). Nil means
	// DefaultDPoPAlgorithms; none, HS* and unknown names are refused by
	// New.
	Algorithms []string
	// MaxAge is how old (iat) a proof may be; zero means
	// DefaultDPoPMaxAge. MaxFuture is how far ahead; zero means
	// DefaultDPoPMaxFuture.
	MaxAge, MaxFuture time.Duration
	// ReplayCacheSize bounds the proofs one instance remembers, by jti and
	// key, until they are too old to be accepted anyway. When more proofs
	// arrive within MaxAge+MaxFuture the oldest are forgotten, so the
	// memory stays bounded under a flood (only proofs that passed every
	// other check, with a valid token, are remembered). Replicas do not
	// share it: a proof replayed to another replica within the window is
	// caught only by nonces. Zero means DefaultDPoPReplayCacheSize;
	// negative disables it.
	ReplayCacheSize int
	// NonceKey, when set (at least 32 bytes), makes the resource demand
	// nonces (RFC 9449 §9): a proof without a current nonce is answered
	// 401 with `WWW-Authenticate: DPoP error="use_dpop_nonce"` and a
	// DPoP-Nonce header, which the client puts in its next proof. Nonces
	// are stateless, an HMAC-SHA256 under NonceKey of a time window, so
	// every replica with the same key accepts those of the others.
	NonceKey []byte
	// NonceWindow is the step of nonces: a nonce is accepted during its
	// window and the next. Zero means DefaultDPoPNonceWindow.
	NonceWindow time.Duration
}

// dpopConfig is DPoPOptions checked, with the replay cache.
type dpopConfig struct {
	required    bool
	algs        map[string]bool
	algsList    string // space-separated, for challenges
	algsSlice   []string
	maxAge      time.Duration
	maxFuture   time.Duration
	replay      *replayCache
	nonceKey    []byte
	nonceWindow time.Duration
}

func newDPoPConfig(o *DPoPOptions) (*dpopConfig, error) {
	d := &dpopConfig{required: o.Required, maxAge: o.MaxAge, maxFuture: o.MaxFuture, nonceWindow: o.NonceWindow, algs: map[string]bool{}}
	algs := o.Algorithms
	if algs == nil {
		algs = DefaultDPoPAlgorithms
	}
	if len(algs) == 0 {
		return nil, errors.New("auth: DPoP.Algorithms is empty")
	}
	for _, a := range algs {
		if !slices.Contains(DefaultDPoPAlgorithms, a) {
			return nil, fmt.Errorf("auth: DPoP.Algorithms: %q is not an asymmetric JWS algorithm", a)
		}
		if !d.algs[a] {
			d.algs[a] = true
			d.algsSlice = append(d.algsSlice, a)
		}
	}
	d.algsList = strings.Join(d.algsSlice, " ")
	if d.maxAge < 0 || d.maxFuture < 0 || d.nonceWindow < 0 {
		return nil, errors.New("auth: negative DPoP duration")
	}
	if d.maxAge == 0 {
		d.maxAge = DefaultDPoPMaxAge
	}
	if d.maxFuture == 0 {
		d.maxFuture = DefaultDPoPMaxFuture
	}
	if d.nonceWindow == 0 {
		d.nonceWindow = DefaultDPoPNonceWindow
	}
	if o.NonceKey != nil {
		if len(o.NonceKey) < 32 {
			return nil, errors.New("auth: DPoP.NonceKey needs at least 32 bytes")
		}
		d.nonceKey = append([]byte(nil), o.NonceKey...)
	}
	size := o.ReplayCacheSize
	if size == 0 {
		size = DefaultDPoPReplayCacheSize
	}
	if size > 0 {
		d.replay = newReplayCache(size)
	}
	return d, nil
}

// Errors of DPoP proof checks (the cause of 401 invalid_dpop_proof).
var (
	// ErrInvalidDPoPProof: the DPoP proof is missing, malformed, or does
	// not fit the request or the token (RFC 9449 §4.3, §7.1).
	ErrInvalidDPoPProof = errors.New("auth: invalid DPoP proof")
	// ErrDPoPNonce: the proof lacks a current nonce of this server
	// (RFC 9449 §9).
	ErrDPoPNonce = errors.New("auth: DPoP nonce required")
)

// dpopProof is a DPoP proof that passed the checks of CheckDPoPProof that
// need no request: its key's thumbprint and its claims.
type dpopProof struct {
	jkt   string
	jti   string
	htm   string
	htu   string
	iat   time.Time
	ath   string
	nonce string
}

// proofHeader is the protected header of a proof.
type proofHeader struct {
	Typ  string          `json:"typ"`
	Alg  string          `json:"alg"`
	JWK  json.RawMessage `json:"jwk"`
	Crit []string        `json:"crit"`
}

// proofClaims are the claims of a proof (RFC 9449 §4.2).
type proofClaims struct {
	JTI   *string      `json:"jti"`
	HTM   *string      `json:"htm"`
	HTU   *string      `json:"htu"`
	IAT   *json.Number `json:"iat"`
	ATH   *string      `json:"ath"`
	Nonce *string      `json:"nonce"`
}

// privateMembers are the JWK members of private or symmetric keys
// (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

const maxJTIBytes = 256

// parseDPoPProof checks the form and signature of a proof (RFC 9449 §4.3,
// checks 2-7): one compact JWS of bounded size, typ dpop+jwt, an accepted
// asymmetric alg, a public jwk whose signature verifies, and the claims
// jti, htm, htu and iat of the right types. It never panics and bounds its
// work by the size of the proof.
func parseDPoPProof(proof string, algs map[string]bool) (*dpopProof, error) {
	bad := func(why string) (*dpopProof, error) {
		return nil, fmt.Errorf("%w: %s", ErrInvalidDPoPProof, why)
	}
	if proof == "" {
		return bad("no DPoP header")
	}
	if len(proof) > MaxDPoPProofBytes {
		return bad("too large")
	}
	parts := strings.Split(proof, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return bad("not a compact JWS")
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return bad("header encoding")
	}
	var h proofHeader
	if err := json.Unmarshal(hb, &h); err != nil {
		return bad("header")
	}
	if h.Typ != "dpop+jwt" {
		return bad("typ is not dpop+jwt")
	}
	if !algs[h.Alg] {
		return bad("alg not accepted")
	}
	if len(h.Crit) > 0 {
		return bad("unsupported crit")
	}
	if len(h.JWK) == 0 {
		return bad("no jwk")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(h.JWK, &members); err != nil {
		return bad("jwk")
	}
	for _, m := range privateMembers {
		if _, ok := members[m]; ok {
			return bad("jwk is not a public key")
		}
	}
	key, err := jwk.ParseKey(h.JWK)
	if err != nil {
		return bad("jwk")
	}
	switch key.KeyType() {
	case "EC", "RSA", "OKP":
	default:
		return bad("jwk is not an asymmetric key")
	}
	payload, err := jws.Verify([]byte(proof), jws.WithKey(jwa.SignatureAlgorithm(h.Alg), key))
	if err != nil {
		return bad("signature")
	}
	var c proofClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return bad("claims")
	}
	if c.JTI == nil || *c.JTI == "" || len(*c.JTI) > maxJTIBytes {
		return bad("jti")
	}
	if c.HTM == nil || *c.HTM == "" || c.HTU == nil || *c.HTU == "" || c.IAT == nil {
		return bad("htm, htu or iat missing")
	}
	iat, err := strconv.ParseInt(c.IAT.String(), 10, 64)
	if err != nil {
		return bad("iat is not an integer")
	}
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return bad("jwk thumbprint")
	}
	p := &dpopProof{jkt: base64.RawURLEncoding.EncodeToString(tp), jti: *c.JTI, htm: *c.HTM, htu: *c.HTU, iat: time.Unix(iat, 0)}
	if c.ATH != nil {
		p.ath = *c.ATH
	}
	if c.Nonce != nil {
		p.nonce = *c.Nonce
	}
	return p, nil
}

// normalURL is the form of an htu or a resource URI that RFC 9449 §4.3
// (check 9) compares: without query and fragment, scheme and host in lower
// case, without the scheme's default port, an empty path as "/"
// (RFC 3986 §6.2.2, §6.2.3).
func normalURL(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" || u.User != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return scheme + "://" + host + p, true
}

// checkDPoP applies the checks of a proof that involve the request and
// the token (RFC 9449 §4.3 checks 8-12, §7.1): htm, htu, iat, nonce,
// ath, jkt, then jti replay. htu is the resource URI in normalURL's form.
// It returns ErrDPoPNonce when only the nonce is missing or stale, so the
// client can retry.
func (d *dpopConfig) check(p *dpopProof, method, htu, tok, jkt string, now time.Time) error {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalidDPoPProof, why) }
	if p.htm != method {
		return bad("htm is not the request method")
	}
	if got, ok := normalURL(p.htu); !ok || got != htu {
		return bad("htu is not the resource URI")
	}
	if p.iat.Before(now.Add(-d.maxAge)) || p.iat.After(now.Add(d.maxFuture)) {
		return bad("iat outside the accepted window")
	}
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare([]byte(p.ath), []byte(base64.RawURLEncoding.EncodeToString(sum[:]))) != 1 {
		return bad("ath is not the access token's hash")
	}
	if subtle.ConstantTimeCompare([]byte(p.jkt), []byte(jkt)) != 1 {
		return bad("the proof's key is not the one the token is bound to")
	}
	if d.nonceKey != nil && !d.validNonce(p.nonce, now) {
		return ErrDPoPNonce
	}
	if d.replay != nil && !d.replay.add(p.jkt, p.jti, p.iat.Add(d.maxAge+time.Second), now) {
		return bad("replayed (jti seen before)")
	}
	return nil
}

// nonce returns the current server nonce: base64url of the window number
// and HMAC-SHA256(NonceKey, "dpop-nonce" || window).
func (d *dpopConfig) nonce(now time.Time) string {
	return d.nonceAt(now.UnixNano() / int64(d.nonceWindow))
}

func (d *dpopConfig) nonceAt(w int64) string {
	var b [8 + sha256.Size]byte
	binary.BigEndian.PutUint64(b[:8], uint64(w))
	m := hmac.New(sha256.New, d.nonceKey)
	m.Write([]byte("dpop-nonce"))
	m.Write(b[:8])
	copy(b[8:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validNonce accepts a nonce of the current window or the one before.
func (d *dpopConfig) validNonce(n string, now time.Time) bool {
	if len(n) != base64.RawURLEncoding.EncodedLen(8+sha256.Size) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil {
		return false
	}
	w := int64(binary.BigEndian.Uint64(b[:8]))
	cur := now.UnixNano() / int64(d.nonceWindow)
	if w != cur && w != cur-1 {
		return false
	}
	return hmac.Equal([]byte(n), []byte(d.nonceAt(w)))
}

// replayCache remembers the proofs (by key thumbprint and jti) seen
// within their acceptance window, at most max of them: a ring of entries
// in arrival order, the oldest overwritten when it is full, and a map
// for lookups. Memory is bounded by max whatever arrives.
type replayCache struct {
	mu   sync.Mutex
	max  int
	ring []replayEntry
	next int
	seen map[[16]byte]time.Time // key → expiry
}

type replayEntry struct {
	key [16]byte
	exp time.Time
	set bool
}

func newReplayCache(max int) *replayCache {
	return &replayCache{max: max, ring: make([]replayEntry, max), seen: make(map[[16]byte]time.Time, min(max, 1024))}
}

// add records the proof unless it is there, unexpired; it reports whether
// the proof is new.
func (c *replayCache) add(jkt, jti string, expires, now time.Time) bool {
	h := sha256.New()
	h.Write([]byte(jkt))
	h.Write([]byte{0})
	h.Write([]byte(jti))
	var k [16]byte
	copy(k[:], h.Sum(nil))
	c.mu.Lock()
	defer c.mu.Unlock()
	if exp, ok := c.seen[k]; ok && now.Before(exp) {
		return false
	}
	if old := c.ring[c.next]; old.set && c.seen[old.key].Equal(old.exp) {
		// The map's entry is this slot's, not a later proof's of the
		// same key and jti (added again once this one expired).
		delete(c.seen, old.key)
	}
	c.ring[c.next] = replayEntry{key: k, exp: expires, set: true}
	c.next = (c.next + 1) % c.max
	c.seen[k] = expires
	return true
}

// len is the number of proofs remembered (tests).
func (c *replayCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// tokenJKT is the cnf.jkt of a token's claims (RFC 9449 §6), "" when it
// has none; ok is false when cnf is there but malformed.
func tokenJKT(claims map[string]json.RawMessage) (string, bool) {
	raw, ok := claims["cnf"]
	if !ok {
		return "", true
	}
	var cnf map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cnf); err != nil {
		return "", false
	}
	j, ok := cnf["jkt"]
	if !ok {
		return "", true // bound otherwise (x5t#S256, RFC 8705): not DPoP's
	}
	var s string
	if err := json.Unmarshal(j, &s); err != nil || s == "" {
		return "", false
	}
	return s, true
}
