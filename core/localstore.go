package core

import (
	"context"
	"time"

	"github.com/mcpfn/mcpfn/internal/memstore"
)

// localStore is the in-process SessionStore a server uses when
// ServerOptions.SessionStore is nil: the one in-memory store of the project
// (internal/memstore), which package store/memory exports and store/storetest
// checks.
type localStore struct {
	now func() time.Time
	m   memstore.Store
}

// memstoreError translates memstore's sentinels into core's.
func memstoreError(err error) error {
	switch err {
	case memstore.ErrNotFound:
		return ErrSessionNotFound
	case memstore.ErrConflict:
		return ErrSessionConflict
	}
	return err
}

func (l *localStore) Create(ctx context.Context, rec *SessionRecord, lim SessionLimits) ([]string, error) {
	ev, err := l.m.Create((*memstore.Record)(rec), memstore.Limits(lim), l.now())
	return ev, memstoreError(err)
}

func (l *localStore) Get(ctx context.Context, id string) (*SessionRecord, error) {
	r, err := l.m.Get(id, l.now())
	if err != nil {
		return nil, memstoreError(err)
	}
	return (*SessionRecord)(r), nil
}

func (l *localStore) Update(ctx context.Context, rec *SessionRecord) error {
	return memstoreError(l.m.Update((*memstore.Record)(rec), l.now()))
}

func (l *localStore) Delete(ctx context.Context, id string) error {
	return memstoreError(l.m.Delete(id, l.now()))
}
