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
	// Charge is what the task counts against its principal's bound of
	// bytes (core.TaskRecord.Charge): fixed by Create.
	Charge  int64
	Data    []byte
	Version int64
	Expires time.Time
}

// TaskLimits has the fields of core.TaskLimits, in the same order.
type TaskLimits struct {
	Tasks int
	Bytes int64
}

// Reasons of a LimitError, the strings of core's TaskLimitError reasons.
const (
	LimitCount     = "too_many_tasks"
	LimitBytes     = "too_many_task_bytes"
	LimitStoreFull = "task_store_full"
)

// LimitError is Create's refusal by a bound: callers translate it into
// core.TaskLimitError, field for field.
type LimitError struct {
	Reason  string
	Limit   int64
	RetryAt time.Time
}

func (e *LimitError) Error() string { return "task limit: " + e.Reason }

// Errors of the task store, translated by callers into core's sentinels.
var (
	ErrTaskTooLarge = errors.New("task record too large")
)

// DefaultMaxTaskBytes is the size bound of an encoded task of the stores
// built on Tasks: DynamoDB's item limit, so that a task that fits in
// memory fits in the shared store too.
const DefaultMaxTaskBytes = 400 << 10

// fullSweepInterval spaces the sweeps of a full store: a refused Create
// sweeps the expired tasks to make room at most this often, so that a
// flood of refused creations costs a map look-up each, not a walk of the
// whole store.
const fullSweepInterval = time.Second

// Tasks keeps tasks in a map, with an index of each principal's tasks for
// the per-principal bounds. The zero value is ready to use; it is safe for
// concurrent use. Every method takes the current time.
type Tasks struct {
	// MaxBytes bounds len(Data) of one task; zero means no bound. Set it
	// before the first use.
	MaxBytes int
	// MaxTotalBytes bounds the sum of len(Data) over the stored tasks:
	// Create refuses a task that would pass it (LimitStoreFull). Updates
	// are never refused for it (they record outcomes, which must not be
	// lost): a task's record may still grow, up to MaxBytes. Zero means
	// no bound. Set it before the first use.
	MaxTotalBytes int64

	mu          sync.Mutex
	tasks       map[string]*Task
	byPrincipal map[string]*principalTasks
	total       int64 // sum of len(Data)
	creates     int
	lastFull    time.Time // the last sweep of a full store
}

// principalTasks are one principal's unexpired tasks.
type principalTasks struct {
	ids    map[string]struct{}
	charge int64 // sum of the tasks' Charge
}

func (s *Tasks) tooLarge(t *Task) bool { return s.MaxBytes > 0 && len(t.Data) > s.MaxBytes }

// drop removes t. Callers hold s.mu.
func (s *Tasks) drop(t *Task) {
	delete(s.tasks, t.ID)
	s.total -= int64(len(t.Data))
	if p := s.byPrincipal[t.Principal]; p != nil {
		delete(p.ids, t.ID)
		p.charge -= t.Charge
		if len(p.ids) == 0 {
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

// sweep drops every expired task and returns the earliest expiry of those
// left. Callers hold s.mu.
func (s *Tasks) sweep(now time.Time) time.Time {
	var first time.Time
	for _, t := range s.tasks {
		if !now.Before(t.Expires) {
			s.drop(t)
		} else if first.IsZero() || t.Expires.Before(first) {
			first = t.Expires
		}
	}
	return first
}

// sweepPrincipal drops the principal's expired tasks and returns the
// earliest expiry of those left. Callers hold s.mu.
func (s *Tasks) sweepPrincipal(principal string, now time.Time) time.Time {
	var first time.Time
	p := s.byPrincipal[principal]
	if p == nil {
		return first
	}
	for id := range p.ids {
		if t := s.live(id, now); t != nil && (first.IsZero() || t.Expires.Before(first)) {
			first = t.Expires
		}
	}
	return first
}

// Create stores t with Version 1, if its id is free (ErrConflict), it is
// within MaxBytes (ErrTaskTooLarge), its principal's unexpired tasks are
// fewer than limits.Tasks and, with t, charge at most limits.Bytes, and the
// store's bytes stay within MaxTotalBytes (a *LimitError otherwise; a
// bound of zero or less is no bound). It sets t.Version.
func (s *Tasks) Create(t *Task, limits TaskLimits, now time.Time) error {
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
		s.byPrincipal = map[string]*principalTasks{}
	}
	// Expired tasks go in bulk now and then, so that the map does not
	// keep the tasks of principals that never come back.
	if s.creates++; s.creates%256 == 0 {
		s.sweep(now)
	}
	if s.live(t.ID, now) != nil {
		return ErrConflict
	}
	over := func() (reason string, limit int64) {
		p := s.byPrincipal[t.Principal]
		switch {
		case p != nil && limits.Tasks > 0 && len(p.ids) >= limits.Tasks:
			return LimitCount, int64(limits.Tasks)
		case limits.Bytes > 0 && t.Charge > limits.Bytes,
			p != nil && limits.Bytes > 0 && p.charge+t.Charge > limits.Bytes:
			return LimitBytes, limits.Bytes
		}
		return "", 0
	}
	if reason, _ := over(); reason != "" {
		first := s.sweepPrincipal(t.Principal, now)
		if reason, limit := over(); reason != "" {
			return &LimitError{Reason: reason, Limit: limit, RetryAt: first}
		}
	}
	size := int64(len(t.Data))
	if s.MaxTotalBytes > 0 && s.total+size > s.MaxTotalBytes {
		var first time.Time
		if now.Sub(s.lastFull) >= fullSweepInterval {
			s.lastFull = now
			first = s.sweep(now)
		}
		if s.total+size > s.MaxTotalBytes {
			return &LimitError{Reason: LimitStoreFull, Limit: s.MaxTotalBytes, RetryAt: first}
		}
	}
	p := s.byPrincipal[t.Principal]
	if p == nil {
		p = &principalTasks{ids: map[string]struct{}{}}
		s.byPrincipal[t.Principal] = p
	}
	c := *t
	c.Data = append([]byte(nil), t.Data...)
	c.Version = 1
	s.tasks[c.ID] = &c
	p.ids[c.ID] = struct{}{}
	p.charge += c.Charge
	s.total += size
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
// expired), and increments t.Version. ID, Principal and Charge never
// change.
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
	s.total += int64(len(t.Data)) - int64(len(cur.Data))
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

// Bytes returns the sum of the encoded sizes of the unexpired tasks.
func (s *Tasks) Bytes(now time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	return s.total
}
