package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/memstore"
)

// Store is an in-memory core.SessionStore. The zero value is ready to use.
// It is the same implementation a server uses when
// core.ServerOptions.SessionStore is nil; use Store to share one store
// between servers of a process or count its sessions. Time-based
// behaviour (expiry) is tested in a testing/synctest bubble, where
// time.Now is the bubble's clock.
type Store struct {
	m memstore.Store
}

var _ core.SessionStore = (*Store)(nil)

func (s *Store) now() time.Time { return time.Now() }

// wrap names the operation in err and translates memstore's sentinels into
// core's.
func wrap(op string, err error) error {
	switch err {
	case nil:
		return nil
	case memstore.ErrNotFound:
		err = core.ErrSessionNotFound
	case memstore.ErrConflict:
		err = core.ErrSessionConflict
	}
	return fmt.Errorf("memory: %s session: %w", op, err)
}

// Create implements core.SessionStore. It refuses an id in use.
func (s *Store) Create(ctx context.Context, rec *core.SessionRecord, lim core.SessionLimits) ([]string, error) {
	ev, err := s.m.Create((*memstore.Record)(rec), memstore.Limits(lim), s.now())
	return ev, wrap("create", err)
}

// Get implements core.SessionStore.
func (s *Store) Get(ctx context.Context, id string) (*core.SessionRecord, error) {
	r, err := s.m.Get(id, s.now())
	if err != nil {
		return nil, wrap("get", err)
	}
	return (*core.SessionRecord)(r), nil
}

// Update implements core.SessionStore.
func (s *Store) Update(ctx context.Context, rec *core.SessionRecord) error {
	return wrap("update", s.m.Update((*memstore.Record)(rec), s.now()))
}

// Delete implements core.SessionStore.
func (s *Store) Delete(ctx context.Context, id string) error {
	return wrap("delete", s.m.Delete(id, s.now()))
}

// Len returns the number of live sessions.
func (s *Store) Len() int { return s.m.Len(s.now()) }
