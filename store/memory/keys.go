package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpfn/mcpfn/core"
)

// Keys is an in-memory core.KeyProvider whose key list can be rotated while
// the server runs: Put a new key first (it signs from then on; older keys
// still verify), Remove an old key once no state sealed with it is still
// valid. The zero value holds no keys, and sealing then fails: add one.
type Keys struct {
	mu   sync.RWMutex
	keys []core.Key
}

var _ core.KeyProvider = (*Keys)(nil)

// NewKeys returns a provider holding keys, the first of which signs. It
// returns an error for a key core.Key.Validate refuses (a secret shorter
// than core.MinKeyBytes, an id that is not 1 to 64 characters of A-Z, a-z,
// 0-9, '_' and '-').
func NewKeys(keys ...core.Key) (*Keys, error) {
	k := &Keys{}
	for i := len(keys) - 1; i >= 0; i-- {
		if err := k.Put(keys[i]); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Keys implements core.KeyProvider. The returned slice must not be modified.
func (k *Keys) Keys(context.Context) ([]core.Key, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys, nil
}

// Put makes key the signing key, replacing any key with the same id. It
// returns an error, and changes nothing, for a key core.Key.Validate
// refuses.
func (k *Keys) Put(key core.Key) error {
	if err := key.Validate(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	key.Secret = append([]byte(nil), key.Secret...)
	k.mu.Lock()
	defer k.mu.Unlock()
	next := make([]core.Key, 0, len(k.keys)+1)
	next = append(next, key)
	for _, old := range k.keys {
		if old.ID != key.ID {
			next = append(next, old)
		}
	}
	k.keys = next
	return nil
}

// Remove drops the key with the given id; state sealed with it no longer
// verifies.
func (k *Keys) Remove(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	next := make([]core.Key, 0, len(k.keys))
	for _, old := range k.keys {
		if old.ID != id {
			next = append(next, old)
		}
	}
	k.keys = next
}
