package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpfn/mcpfn/internal/memstore"
)

// localTaskStore is the in-process TaskStore a server uses when
// ServerOptions.TaskStore is nil: internal/memstore's, which package
// store/memory exports (memory.TaskStore) and store/storetest checks. It
// keeps each record JSON-encoded, so that the size bound is the size of
// the encoding, as in a shared store.
type localTaskStore struct {
	m memstore.Tasks
}

// taskStoreError translates internal/memstore's task errors into core's
// sentinels, naming op.
func taskStoreError(op string, err error) error {
	var le *memstore.LimitError
	switch {
	case err == nil:
		return nil
	case err == memstore.ErrNotFound:
		err = ErrTaskNotFound
	case err == memstore.ErrConflict:
		err = ErrTaskConflict
	case errors.As(err, &le):
		err = &TaskLimitError{Reason: le.Reason, Limit: le.Limit, RetryAt: le.RetryAt}
	case err == memstore.ErrTaskTooLarge:
		err = ErrTaskTooLarge
	}
	return fmt.Errorf("memory: %s task: %w", op, err)
}

// encodeTask is rec as memstore keeps it.
func encodeTask(rec *TaskRecord) (*memstore.Task, error) {
	v := rec.Version
	rec.Version = 0 // kept by the store, not in Data
	b, err := json.Marshal(rec)
	rec.Version = v
	if err != nil {
		return nil, err
	}
	return &memstore.Task{ID: rec.ID, Principal: rec.Principal, Charge: rec.Charge, Data: b, Version: rec.Version, Expires: rec.Expires}, nil
}

func decodeTask(t *memstore.Task) (*TaskRecord, error) {
	rec := &TaskRecord{}
	if err := json.Unmarshal(t.Data, rec); err != nil {
		return nil, err
	}
	rec.Version = t.Version
	return rec, nil
}

func (l *localTaskStore) Create(ctx context.Context, rec *TaskRecord, limits TaskLimits) error {
	t, err := encodeTask(rec)
	if err != nil {
		return err
	}
	if err := l.m.Create(t, memstore.TaskLimits(limits), time.Now()); err != nil {
		return taskStoreError("create", err)
	}
	rec.Version = t.Version
	return nil
}

func (l *localTaskStore) Get(ctx context.Context, id string) (*TaskRecord, error) {
	t, err := l.m.Get(id, time.Now())
	if err != nil {
		return nil, taskStoreError("get", err)
	}
	return decodeTask(t)
}

func (l *localTaskStore) Update(ctx context.Context, rec *TaskRecord) error {
	t, err := encodeTask(rec)
	if err != nil {
		return err
	}
	if err := l.m.Update(t, time.Now()); err != nil {
		return taskStoreError("update", err)
	}
	rec.Version = t.Version
	return nil
}
