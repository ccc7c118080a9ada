package memory

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// Store is an in-memory core.SessionStore. The zero value is ready to use.
type Store struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	sessions map[string]*core.SessionRecord
}

var _ core.SessionStore = (*Store)(nil)

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// live returns the unexpired record with id. Callers hold s.mu.
func (s *Store) live(id string, now time.Time) *core.SessionRecord {
	r := s.sessions[id]
	if r == nil {
		return nil
	}
	if !now.Before(r.Expires) {
		delete(s.sessions, id)
		return nil
	}
	return r
}

func clone(r *core.SessionRecord) *core.SessionRecord {
	c := *r
	c.Data = append([]byte(nil), r.Data...)
	return &c
}

// Create implements core.SessionStore.
func (s *Store) Create(ctx context.Context, rec *core.SessionRecord, lim core.SessionLimits) ([]string, error) {
	if rec.ID == "" {
		return nil, fmt.Errorf("memory: create session: empty id")
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = map[string]*core.SessionRecord{}
	}
	if s.live(rec.ID, now) != nil {
		return nil, fmt.Errorf("memory: create session: id already in use")
	}
	limit := lim.PerPrincipal
	if rec.Principal == "" {
		limit = lim.Anonymous
	}
	var evicted []string
	if limit > 0 {
		var pool []*core.SessionRecord
		for id := range s.sessions {
			if r := s.live(id, now); r != nil && r.Principal == rec.Principal {
				pool = append(pool, r)
			}
		}
		if over := len(pool) + 1 - limit; over > 0 {
			sort.Slice(pool, func(i, j int) bool {
				if !pool[i].LastUsed.Equal(pool[j].LastUsed) {
					return pool[i].LastUsed.Before(pool[j].LastUsed)
				}
				return pool[i].ID < pool[j].ID
			})
			for _, r := range pool[:over] {
				delete(s.sessions, r.ID)
				evicted = append(evicted, r.ID)
			}
		}
	}
	c := clone(rec)
	c.Version = 1
	s.sessions[c.ID] = c
	rec.Version = 1
	return evicted, nil
}

// Get implements core.SessionStore.
func (s *Store) Get(ctx context.Context, id string) (*core.SessionRecord, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(id, now)
	if r == nil {
		return nil, fmt.Errorf("memory: get session: %w", core.ErrSessionNotFound)
	}
	return clone(r), nil
}

// Update implements core.SessionStore.
func (s *Store) Update(ctx context.Context, rec *core.SessionRecord) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(rec.ID, now)
	if r == nil {
		return fmt.Errorf("memory: update session: %w", core.ErrSessionNotFound)
	}
	if r.Version != rec.Version {
		return fmt.Errorf("memory: update session: %w", core.ErrSessionConflict)
	}
	r.Data = append([]byte(nil), rec.Data...)
	r.LastUsed, r.Expires = rec.LastUsed, rec.Expires
	r.Version++
	rec.Version = r.Version
	return nil
}

// Delete implements core.SessionStore.
func (s *Store) Delete(ctx context.Context, id string) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live(id, now) == nil {
		return fmt.Errorf("memory: delete session: %w", core.ErrSessionNotFound)
	}
	delete(s.sessions, id)
	return nil
}

// Len returns the number of live sessions.
func (s *Store) Len() int {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id := range s.sessions {
		if s.live(id, now) != nil {
			n++
		}
	}
	return n
}
