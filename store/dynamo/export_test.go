package dynamo

import "time"

// SetNow replaces the clock that decides expiry. The tests run against
// dynalite, a process reached over real sockets: they cannot run in a
// testing/synctest bubble, so the expiry boundary is stepped across with
// this clock. Call it before the Store is used.
func SetNow(s *Store, now func() time.Time) { s.now = now }

// SetTaskNow is SetNow for a TaskStore.
func SetTaskNow(t *TaskStore, now func() time.Time) { t.s.now = now }
