package memstore

import (
	"errors"
	"sort"
	"sync"
	"time"
)

// Record has the fields of core.SessionRecord, in the same order.
type Record struct {
	ID        string
	Principal string
	Data      []byte
	Version   int64
	LastUsed  time.Time
	Expires   time.Time
}

// Limits has the fields of core.SessionLimits, in the same order.
type Limits struct {
	PerPrincipal int
	Anonymous    int
}

// Errors the store returns; callers translate the first two into core's
// sentinels.
var (
	ErrNotFound = errors.New("session not found")
	ErrConflict = errors.New("session changed meanwhile")
	ErrIDInUse  = errors.New("session id already in use")
	ErrEmptyID  = errors.New("empty session id")
)

// Store keeps records in a map. The zero value is ready to use; it is safe
// for concurrent use. Every method takes the current time, so the caller
// owns the clock. Records go in and come out as copies: no caller's slice
// aliases a stored one.
type Store struct {
	mu       sync.Mutex
	sessions map[string]*Record
}

// live returns the unexpired record with id, dropping an expired one.
// Callers hold s.mu.
func (s *Store) live(id string, now time.Time) *Record {
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

func clone(r *Record) *Record {
	c := *r
	c.Data = append([]byte(nil), r.Data...)
	return &c
}

// Create stores a copy of rec with Version 1 (and sets rec.Version to 1),
// first evicting the least recently used sessions of rec's pool beyond its
// limit; it returns their ids. An id in use is refused.
func (s *Store) Create(rec *Record, lim Limits, now time.Time) ([]string, error) {
	if rec.ID == "" {
		return nil, ErrEmptyID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = map[string]*Record{}
	}
	if s.live(rec.ID, now) != nil {
		return nil, ErrIDInUse
	}
	limit := lim.PerPrincipal
	if rec.Principal == "" {
		limit = lim.Anonymous
	}
	var evicted []string
	if limit > 0 {
		var pool []*Record
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

// Get returns a copy of the live record with id.
func (s *Store) Get(id string, now time.Time) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(id, now)
	if r == nil {
		return nil, ErrNotFound
	}
	return clone(r), nil
}

// GetInto copies the live record with id into dst without copying its
// Data: dst.Data aliases the stored bytes, which the store never writes
// (Update replaces them), so the caller must not modify them either. It is
// Get for a caller that keeps the record inside a value of its own.
func (s *Store) GetInto(id string, now time.Time, dst *Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(id, now)
	if r == nil {
		return ErrNotFound
	}
	*dst = *r
	return nil
}

// Update replaces Data, LastUsed and Expires of the stored record if its
// Version equals rec.Version, then increments both.
func (s *Store) Update(rec *Record, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(rec.ID, now)
	if r == nil {
		return ErrNotFound
	}
	if r.Version != rec.Version {
		return ErrConflict
	}
	r.Data = append([]byte(nil), rec.Data...)
	r.LastUsed, r.Expires = rec.LastUsed, rec.Expires
	r.Version++
	rec.Version = r.Version
	return nil
}

// Delete removes the live record with id.
func (s *Store) Delete(id string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live(id, now) == nil {
		return ErrNotFound
	}
	delete(s.sessions, id)
	return nil
}

// Len returns the number of live records.
func (s *Store) Len(now time.Time) int {
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
