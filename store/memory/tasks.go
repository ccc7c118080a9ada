package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/memstore"
)

// TaskStore is an in-memory core.TaskStore. The zero value is ready to
// use; it is safe for concurrent use. It is the same implementation a
// server uses when core.ServerOptions.TaskStore is nil; use TaskStore to
// share one store between servers of a process (instances of a test) or
// count its tasks. Each record is kept JSON-encoded, bounded by MaxBytes,
// so that a task that fits here fits in store/dynamo too.
type TaskStore struct {
	// MaxBytes bounds a record's encoding (core.ErrTaskTooLarge past
	// it). Zero means 400 KiB, DynamoDB's item limit. Set it before the
	// first use.
	MaxBytes int
	// MaxTotalBytes bounds the encoded records the store holds: a Create
	// that would pass it is refused (a *core.TaskLimitError with reason
	// core.TaskLimitStoreFull). Updates are never refused for it, since
	// they record outcomes. Zero means no bound. Set it before the first
	// use.
	MaxTotalBytes int64

	once sync.Once
	m    memstore.Tasks
}

var _ core.TaskStore = (*TaskStore)(nil)

func (s *TaskStore) tasks() *memstore.Tasks {
	s.once.Do(func() { s.m.MaxTotalBytes = s.MaxTotalBytes })
	return &s.m
}

// fits reports whether t is within MaxBytes.
func (s *TaskStore) fits(t *memstore.Task) bool {
	return len(t.Data) <= cmp.Or(s.MaxBytes, memstore.DefaultMaxTaskBytes)
}

// taskError names the operation in err and translates memstore's
// sentinels into core's.
func taskError(op string, err error) error {
	var le *memstore.LimitError
	switch {
	case err == nil:
		return nil
	case err == memstore.ErrNotFound:
		err = core.ErrTaskNotFound
	case err == memstore.ErrConflict:
		err = core.ErrTaskConflict
	case errors.As(err, &le):
		err = &core.TaskLimitError{Reason: le.Reason, Limit: le.Limit, RetryAt: le.RetryAt}
	case err == memstore.ErrTaskTooLarge:
		err = core.ErrTaskTooLarge
	}
	return fmt.Errorf("memory: %s task: %w", op, err)
}

func encodeTask(rec *core.TaskRecord) (*memstore.Task, error) {
	c := *rec
	c.Version = 0 // kept by the store, beside Data
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("memory: encoding task: %w", err)
	}
	return &memstore.Task{ID: rec.ID, Principal: rec.Principal, Charge: rec.Charge, Data: b, Version: rec.Version, Expires: rec.Expires}, nil
}

// Create implements core.TaskStore.
func (s *TaskStore) Create(ctx context.Context, rec *core.TaskRecord, limits core.TaskLimits) error {
	t, err := encodeTask(rec)
	if err != nil {
		return err
	}
	if !s.fits(t) {
		return taskError("create", memstore.ErrTaskTooLarge)
	}
	if err := s.tasks().Create(t, memstore.TaskLimits(limits), time.Now()); err != nil {
		return taskError("create", err)
	}
	rec.Version = t.Version
	return nil
}

// Get implements core.TaskStore.
func (s *TaskStore) Get(ctx context.Context, id string) (*core.TaskRecord, error) {
	t, err := s.tasks().Get(id, time.Now())
	if err != nil {
		return nil, taskError("get", err)
	}
	rec := &core.TaskRecord{}
	if err := json.Unmarshal(t.Data, rec); err != nil {
		return nil, fmt.Errorf("memory: decoding task: %w", err)
	}
	rec.Version = t.Version
	return rec, nil
}

// Update implements core.TaskStore.
func (s *TaskStore) Update(ctx context.Context, rec *core.TaskRecord) error {
	t, err := encodeTask(rec)
	if err != nil {
		return err
	}
	if !s.fits(t) {
		return taskError("update", memstore.ErrTaskTooLarge)
	}
	if err := s.tasks().Update(t, time.Now()); err != nil {
		return taskError("update", err)
	}
	rec.Version = t.Version
	return nil
}

// Len returns the number of unexpired tasks.
func (s *TaskStore) Len() int { return s.tasks().Len(time.Now()) }

// Bytes returns the sum of the encoded sizes of the unexpired tasks.
func (s *TaskStore) Bytes() int64 { return s.tasks().Bytes(time.Now()) }
