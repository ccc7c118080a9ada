package memstore

import (
	"errors"
	"sync"
	"time"
)

// Task is a stored task: the fields core.TaskStore interprets, and the
// record itself, encoded (Data). Callers encode and decode; the store keeps
// bytes, so that what a caller gets back never aliases what it stored and
// the size bound is the size of the encoding, as in a shared store.
type Task struct {
	ID        string
	Principal string
	Data      []byte
	Version   int64
	Expires   time.Time
}

// Errors of the task store, translated by callers into core's sentinels.
var (
	ErrTaskLimit    = errors.New("too many tasks")
	ErrTaskTooLarge = errors.New("task record too large")
)

// DefaultMaxTaskBytes is the size bound of an encoded task of the stores
// built on Tasks: DynamoDB's item limit, so that a task that fits in
// memory fits in the shared store too.
const DefaultMaxTaskBytes = 400 << 10

// Tasks keeps tasks in a map, with an index of each principal's tasks for
// the per-principal bound. The zero value is ready to use; it is safe for
// concurrent use. Every method takes the current time.
type Tasks struct {
	// MaxBytes bounds len(Data); zero means no bound. Set it before the
	// first use.
	MaxBytes int

	mu          sync.Mutex
	tasks       map[string]*Task
	byPrincipal map[string]map[string]struct{}
	creates     int
}

func (s *Tasks) tooLarge(t *Task) bool { return s.MaxBytes > 0 && len(t.Data) > s.MaxBytes }

// drop removes t. Callers hold s.mu.
func (s *Tasks) drop(t *Task) {
	delete(s.tasks, t.ID)
	if ids := s.byPrincipal[t.Principal]; ids != nil {
		delete(ids, t.ID)
		if len(ids) == 0 {
			delete(s.byPrincipal, t.Principal)
		}
	}
}

// live returns the unexpired task id, dropping an expired one. Callers
// hold s.mu.
func (s *Tasks) live(id string, now time.Time) *Task {
	t := s.tasks[id]
	if t != nil && !now.Before(t.Expires) {
		s.drop(t)
		return nil
	}
	return t
}

// sweep drops every expired task. Callers hold s.mu.
func (s *Tasks) sweep(now time.Time) {
	for _, t := range s.tasks {
		if !now.Before(t.Expires) {
			s.drop(t)
		}
	}
}

// Create stores t with Version 1, if its id is free (ErrConflict), it is
// within MaxBytes (ErrTaskTooLarge) and its principal has fewer than limit
// unexpired tasks (ErrTaskLimit; limit <= 0: no bound). It sets t.Version.
func (s *Tasks) Create(t *Task, limit int, now time.Time) error {
	if t.ID == "" {
		return ErrEmptyID
	}
	if s.tooLarge(t) {
		return ErrTaskTooLarge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks = map[string]*Task{}
		s.byPrincipal = map[string]map[string]struct{}{}
	}
	// Expired tasks go in bulk now and then, so that the map does not
	// keep the tasks of principals that never come back.
	if s.creates++; s.creates%256 == 0 {
		s.sweep(now)
	}
	if s.live(t.ID, now) != nil {
		return ErrConflict
	}
	ids := s.byPrincipal[t.Principal]
	if limit > 0 && len(ids) >= limit {
		for id := range ids {
			s.live(id, now)
		}
		if len(s.byPrincipal[t.Principal]) >= limit {
			return ErrTaskLimit
		}
		ids = s.byPrincipal[t.Principal]
	}
	if ids == nil {
		ids = map[string]struct{}{}
		s.byPrincipal[t.Principal] = ids
	}
	c := *t
	c.Data = append([]byte(nil), t.Data...)
	c.Version = 1
	s.tasks[c.ID] = &c
	ids[c.ID] = struct{}{}
	t.Version = 1
	return nil
}

// Get returns a copy of the unexpired task id, or ErrNotFound.
func (s *Tasks) Get(id string, now time.Time) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.live(id, now)
	if t == nil {
		return nil, ErrNotFound
	}
	c := *t
	c.Data = append([]byte(nil), t.Data...)
	return &c, nil
}

// Update replaces Data and Expires of the stored task if its Version equals
// t.Version (ErrConflict otherwise; ErrNotFound when it is gone or
// expired), and increments t.Version. ID and Principal never change.
func (s *Tasks) Update(t *Task, now time.Time) error {
	if s.tooLarge(t) {
		return ErrTaskTooLarge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.live(t.ID, now)
	if cur == nil {
		return ErrNotFound
	}
	if cur.Version != t.Version {
		return ErrConflict
	}
	cur.Data = append(cur.Data[:0:0], t.Data...)
	cur.Expires = t.Expires
	cur.Version++
	t.Version = cur.Version
	return nil
}

// Len returns the number of unexpired tasks.
func (s *Tasks) Len(now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	return len(s.tasks)
}
