package core

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
)

// rotatingKeys is a KeyProvider whose list the test replaces.
type rotatingKeys struct {
	mu   sync.Mutex
	keys []Key
}

func (r *rotatingKeys) Keys(context.Context) ([]Key, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys, nil
}

func (r *rotatingKeys) set(keys ...Key) {
	r.mu.Lock()
	r.keys = keys
	r.mu.Unlock()
}

// hasMACPool reports whether s keeps a pool of HMAC states keyed with secret.
func hasMACPool(s *sealer, secret []byte) bool {
	pm := s.pools.Load()
	return pm != nil && (*pm)[string(secret)] != nil
}

// TestRotationDropsRetiredSecret checks that a key removed by a rotation
// leaves no HMAC state behind: the sealer pools states only for the current
// key list.
func TestRotationDropsRetiredSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := Key{ID: "a", Secret: bytes.Repeat([]byte{'a'}, 32)}
	b := Key{ID: "b", Secret: bytes.Repeat([]byte{'b'}, 32)}
	kp := &rotatingKeys{keys: []Key{a}}
	s := newSealer(kp, time.Minute, nil)
	old, err := s.seal(ctx, "st", nil, 0, fuzzBinding)
	if err != nil {
		t.Fatal(err)
	}
	if !hasMACPool(s, a.Secret) {
		t.Fatalf("no pool for the signing key")
	}
	kp.set(b, a) // rotate: b signs, a still verifies
	if _, err := s.seal(ctx, "st", nil, 0, fuzzBinding); err != nil {
		t.Fatal(err)
	}
	if _, err := s.open(ctx, old, fuzzBinding); err != nil {
		t.Fatalf("a state sealed with the retiring key: %v", err)
	}
	if !hasMACPool(s, a.Secret) || !hasMACPool(s, b.Secret) {
		t.Errorf("pools missing during the rotation")
	}
	kp.set(b) // a removed
	if _, err := s.seal(ctx, "st", nil, 0, fuzzBinding); err != nil {
		t.Fatal(err)
	}
	if hasMACPool(s, a.Secret) {
		t.Errorf("the removed key's secret is still pooled")
	}
	if !hasMACPool(s, b.Secret) {
		t.Errorf("no pool for the current key")
	}
	if _, err := s.open(ctx, old, fuzzBinding); err == nil {
		t.Errorf("a state sealed with the removed key opened")
	}
}
