package core

import (
	"context"
	"time"
)

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
