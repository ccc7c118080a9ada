package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// MemorySessionStore is the in-memory SessionStore: the one a server uses
// when ServerOptions.SessionStore is nil, and the one to pass to share a
// store between the servers of a process or to count its sessions
// (store/memory.Store is this type). The zero value is ready to use; it is
// safe for concurrent use. Records go in and come out as copies, so no
// caller's slice aliases a stored one. Expiry reads time.Now, which in a
// testing/synctest bubble is the bubble's clock.
type MemorySessionStore struct {
	mu       sync.Mutex
	sessions map[string]*SessionRecord
}

var _ SessionStore = (*MemorySessionStore)(nil)

// memoryError names the operation in an error of an in-memory store.
func memoryError(op, kind string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("memory: %s %s: %w", op, kind, err)
}

var (
	errIDInUse = errors.New("id already in use")
	errEmptyID = errors.New("empty id")
)

// live returns the unexpired record with id, dropping an expired one.
// Callers hold s.mu.
func (s *MemorySessionStore) live(id string, now time.Time) *SessionRecord {
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

func cloneSessionRecord(r *SessionRecord) *SessionRecord {
	c := *r
	c.Data = append([]byte(nil), r.Data...)
	return &c
}

// Create implements SessionStore: it stores a copy of rec with Version 1,
// first evicting the least recently used sessions of rec's pool beyond its
// limit, whose ids it returns. An id in use is refused.
func (s *MemorySessionStore) Create(ctx context.Context, rec *SessionRecord, lim SessionLimits) ([]string, error) {
	if rec.ID == "" {
		return nil, memoryError("create", "session", errEmptyID)
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = map[string]*SessionRecord{}
	}
	if s.live(rec.ID, now) != nil {
		return nil, memoryError("create", "session", errIDInUse)
	}
	limit := lim.PerPrincipal
	if rec.Principal == "" {
		limit = lim.Anonymous
	}
	var evicted []string
	if limit > 0 {
		var pool []*SessionRecord
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
	c := cloneSessionRecord(rec)
	c.Version = 1
	s.sessions[c.ID] = c
	rec.Version = 1
	return evicted, nil
}

// Get implements SessionStore: a copy of the live record with id.
func (s *MemorySessionStore) Get(ctx context.Context, id string) (*SessionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(id, time.Now())
	if r == nil {
		return nil, memoryError("get", "session", ErrSessionNotFound)
	}
	return cloneSessionRecord(r), nil
}

// getInto copies the live record with id into dst without copying its
// Data: dst.Data aliases the stored bytes, which the store never writes
// (Update replaces them), so the caller must not either. It is Get for the
// server, which keeps the record inside its Session's own allocation.
func (s *MemorySessionStore) getInto(id string, now time.Time, dst *SessionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(id, now)
	if r == nil {
		return ErrSessionNotFound
	}
	*dst = *r
	return nil
}

// Update implements SessionStore: it replaces Data, LastUsed and Expires
// of the stored record if its Version equals rec.Version, then increments
// both.
func (s *MemorySessionStore) Update(ctx context.Context, rec *SessionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live(rec.ID, time.Now())
	if r == nil {
		return memoryError("update", "session", ErrSessionNotFound)
	}
	if r.Version != rec.Version {
		return memoryError("update", "session", ErrSessionConflict)
	}
	r.Data = append([]byte(nil), rec.Data...)
	r.LastUsed, r.Expires = rec.LastUsed, rec.Expires
	r.Version++
	rec.Version = r.Version
	return nil
}

// Delete implements SessionStore.
func (s *MemorySessionStore) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live(id, time.Now()) == nil {
		return memoryError("delete", "session", ErrSessionNotFound)
	}
	delete(s.sessions, id)
	return nil
}

// Len returns the number of live sessions.
func (s *MemorySessionStore) Len() int {
	now := time.Now()
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

// DefaultMaxTaskBytes is MemoryTaskStore's bound on an encoded task
// record: DynamoDB's item limit, so that a task that fits in memory fits
// in store/dynamo too.
const DefaultMaxTaskBytes = 400 << 10

// fullSweepInterval spaces the sweeps of a full MemoryTaskStore: a refused
// Create sweeps the expired tasks to make room at most this often, so that
// a flood of refused creations costs a map look-up each, not a walk of the
// whole store.
const fullSweepInterval = time.Second

// MemoryTaskStore is the in-memory TaskStore: the one a server uses when
// ServerOptions.TaskStore is nil (with MaxTotalBytes from
// ServerOptions.MaxLocalTaskStoreBytes), and the one to pass to share a
// store between the servers of a process or to count its tasks
// (store/memory.TaskStore is this type). The zero value is ready to use;
// it is safe for concurrent use. Each record is kept JSON-encoded, so that
// what a caller gets back never aliases what it stored and the size bound
// is the size of the encoding, as in a shared store. Expiry reads
// time.Now.
type MemoryTaskStore struct {
	// MaxBytes bounds a record's encoding (ErrTaskTooLarge past it). Zero
	// means DefaultMaxTaskBytes. Set it before the first use.
	MaxBytes int
	// MaxTotalBytes bounds the encoded records the store holds: a Create
	// that would pass it is refused (a *TaskLimitError with reason
	// TaskLimitStoreFull). Updates are never refused for it, since they
	// record outcomes: a record may still grow, up to MaxBytes. Zero means
	// no bound. Set it before the first use.
	MaxTotalBytes int64

	mu          sync.Mutex
	tasks       map[string]*memoryTask
	byPrincipal map[string]*principalTasks
	total       int64 // sum of len(data)
	creates     int
	lastFull    time.Time // the last sweep of a full store
}

var _ TaskStore = (*MemoryTaskStore)(nil)

// memoryTask is a stored task: the fields the store interprets, and the
// record, encoded.
type memoryTask struct {
	id, principal string
	charge        int64 // TaskRecord.Charge, fixed by Create
	data          []byte
	version       int64
	expires       time.Time
}

// principalTasks are one principal's unexpired tasks.
type principalTasks struct {
	ids    map[string]struct{}
	charge int64 // sum of the tasks' charge
}

// encode is rec as the store keeps it (its Version beside the data).
func (s *MemoryTaskStore) encode(op string, rec *TaskRecord) (*memoryTask, error) {
	c := *rec
	c.Version = 0
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("memory: encoding task: %w", err)
	}
	if len(b) > cmp.Or(s.MaxBytes, DefaultMaxTaskBytes) {
		return nil, memoryError(op, "task", ErrTaskTooLarge)
	}
	return &memoryTask{id: rec.ID, principal: rec.Principal, charge: rec.Charge, data: b, version: rec.Version, expires: rec.Expires}, nil
}

// drop removes t. Callers hold s.mu.
func (s *MemoryTaskStore) drop(t *memoryTask) {
	delete(s.tasks, t.id)
	s.total -= int64(len(t.data))
	if p := s.byPrincipal[t.principal]; p != nil {
		delete(p.ids, t.id)
		p.charge -= t.charge
		if len(p.ids) == 0 {
			delete(s.byPrincipal, t.principal)
		}
	}
}

// live returns the unexpired task id, dropping an expired one. Callers
// hold s.mu.
func (s *MemoryTaskStore) live(id string, now time.Time) *memoryTask {
	t := s.tasks[id]
	if t != nil && !now.Before(t.expires) {
		s.drop(t)
		return nil
	}
	return t
}

// sweep drops every expired task and returns the earliest expiry of those
// left. Callers hold s.mu.
func (s *MemoryTaskStore) sweep(now time.Time) time.Time {
	var first time.Time
	for _, t := range s.tasks {
		if !now.Before(t.expires) {
			s.drop(t)
		} else if first.IsZero() || t.expires.Before(first) {
			first = t.expires
		}
	}
	return first
}

// sweepPrincipal drops the principal's expired tasks and returns the
// earliest expiry of those left. Callers hold s.mu.
func (s *MemoryTaskStore) sweepPrincipal(principal string, now time.Time) time.Time {
	var first time.Time
	p := s.byPrincipal[principal]
	if p == nil {
		return first
	}
	for id := range p.ids {
		if t := s.live(id, now); t != nil && (first.IsZero() || t.expires.Before(first)) {
			first = t.expires
		}
	}
	return first
}

// Create implements TaskStore: it stores rec with Version 1 if its id is
// free (ErrTaskConflict), its encoding is within MaxBytes
// (ErrTaskTooLarge), its principal's unexpired tasks are fewer than
// limits.Tasks and, with rec, charge at most limits.Bytes, and the store's
// bytes stay within MaxTotalBytes (a *TaskLimitError otherwise).
func (s *MemoryTaskStore) Create(ctx context.Context, rec *TaskRecord, limits TaskLimits) error {
	if rec.ID == "" {
		return memoryError("create", "task", errEmptyID)
	}
	t, err := s.encode("create", rec)
	if err != nil {
		return err
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks = map[string]*memoryTask{}
		s.byPrincipal = map[string]*principalTasks{}
	}
	// Expired tasks go in bulk now and then, so that the map does not
	// keep the tasks of principals that never come back.
	if s.creates++; s.creates%256 == 0 {
		s.sweep(now)
	}
	if s.live(t.id, now) != nil {
		return memoryError("create", "task", ErrTaskConflict)
	}
	over := func() (reason string, limit int64) {
		p := s.byPrincipal[t.principal]
		switch {
		case p != nil && limits.Tasks > 0 && len(p.ids) >= limits.Tasks:
			return TaskLimitCount, int64(limits.Tasks)
		case limits.Bytes > 0 && t.charge > limits.Bytes,
			p != nil && limits.Bytes > 0 && p.charge+t.charge > limits.Bytes:
			return TaskLimitBytes, limits.Bytes
		}
		return "", 0
	}
	if reason, _ := over(); reason != "" {
		first := s.sweepPrincipal(t.principal, now)
		if reason, limit := over(); reason != "" {
			return memoryError("create", "task", &TaskLimitError{Reason: reason, Limit: limit, RetryAt: first})
		}
	}
	size := int64(len(t.data))
	if s.MaxTotalBytes > 0 && s.total+size > s.MaxTotalBytes {
		var first time.Time
		if now.Sub(s.lastFull) >= fullSweepInterval {
			s.lastFull = now
			first = s.sweep(now)
		}
		if s.total+size > s.MaxTotalBytes {
			return memoryError("create", "task", &TaskLimitError{Reason: TaskLimitStoreFull, Limit: s.MaxTotalBytes, RetryAt: first})
		}
	}
	p := s.byPrincipal[t.principal]
	if p == nil {
		p = &principalTasks{ids: map[string]struct{}{}}
		s.byPrincipal[t.principal] = p
	}
	t.version = 1
	s.tasks[t.id] = t
	p.ids[t.id] = struct{}{}
	p.charge += t.charge
	s.total += size
	rec.Version = 1
	return nil
}

// Get implements TaskStore: a copy of the unexpired task id.
func (s *MemoryTaskStore) Get(ctx context.Context, id string) (*TaskRecord, error) {
	s.mu.Lock()
	t := s.live(id, time.Now())
	var data []byte
	var version int64
	if t != nil {
		data, version = t.data, t.version // never written: Update replaces it
	}
	s.mu.Unlock()
	if t == nil {
		return nil, memoryError("get", "task", ErrTaskNotFound)
	}
	rec := &TaskRecord{}
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("memory: decoding task: %w", err)
	}
	rec.Version = version
	return rec, nil
}

// Update implements TaskStore: it replaces the stored record if its
// Version equals rec.Version (ErrTaskConflict otherwise; ErrTaskNotFound
// when it is gone or expired), and increments rec.Version. ID, Principal
// and Charge never change.
func (s *MemoryTaskStore) Update(ctx context.Context, rec *TaskRecord) error {
	t, err := s.encode("update", rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.live(t.id, time.Now())
	if cur == nil {
		return memoryError("update", "task", ErrTaskNotFound)
	}
	if cur.version != t.version {
		return memoryError("update", "task", ErrTaskConflict)
	}
	s.total += int64(len(t.data)) - int64(len(cur.data))
	cur.data = t.data
	cur.expires = t.expires
	cur.version++
	rec.Version = cur.version
	return nil
}

// Len returns the number of unexpired tasks.
func (s *MemoryTaskStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	return len(s.tasks)
}

// Bytes returns the sum of the encoded sizes of the unexpired tasks.
func (s *MemoryTaskStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	return s.total
}
