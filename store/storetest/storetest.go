package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// Run runs the suite against stores made by newStore, each case in
// parallel with its own store: newStore must return a store that shares no
// sessions with the others (a new table, a new in-memory store).
func Run(t *testing.T, newStore func(t *testing.T) core.SessionStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, core.SessionStore)
	}{
		{"CreateGet", testCreateGet},
		{"GetUnknown", testGetUnknown},
		{"UpdateVersions", testUpdateVersions},
		{"UpdateMissing", testUpdateMissing},
		{"Delete", testDelete},
		{"Expiry", testExpiry},
		{"UpdateExtendsLife", testUpdateExtendsLife},
		{"EvictPerPrincipal", testEvictPerPrincipal},
		{"EvictAnonymous", testEvictAnonymous},
		{"EvictLRUOrderFollowsUpdates", testEvictOrderFollowsUpdates},
		{"NoLimits", testNoLimits},
		{"ConcurrentWritersLoseNothing", testConcurrentWriters},
		{"ConcurrentCreatesRespectLimit", testConcurrentCreates},
		{"IsolatedRecords", testIsolation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

// NewID returns a random session id for tests.
func NewID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func record(principal string, lastUsed time.Time, data string) *core.SessionRecord {
	return &core.SessionRecord{ID: NewID(), Principal: principal, Data: []byte(data),
		LastUsed: lastUsed, Expires: time.Now().Add(time.Hour)}
}

func mustCreate(t *testing.T, s core.SessionStore, r *core.SessionRecord, lim core.SessionLimits) []string {
	t.Helper()
	ev, err := s.Create(context.Background(), r, lim)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if r.Version != 1 {
		t.Fatalf("Create: Version = %d, want 1", r.Version)
	}
	return ev
}

func exists(t *testing.T, s core.SessionStore, id string) bool {
	t.Helper()
	_, err := s.Get(context.Background(), id)
	if err == nil {
		return true
	}
	if !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Get(%s): %v, want nil or ErrSessionNotFound", id, err)
	}
	return false
}

func testCreateGet(t *testing.T, s core.SessionStore) {
	now := time.Now().Truncate(time.Millisecond)
	r := record("p1", now, `{"a":1}`)
	mustCreate(t, s, r, core.SessionLimits{})
	got, err := s.Get(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != r.ID || got.Principal != "p1" || string(got.Data) != `{"a":1}` || got.Version != 1 {
		t.Fatalf("Get = %+v", got)
	}
	if !got.LastUsed.Equal(now) || got.Expires.Sub(now) < 59*time.Minute {
		t.Fatalf("times: LastUsed %v Expires %v, want %v and about an hour later", got.LastUsed, got.Expires, now)
	}
	if _, err := s.Create(context.Background(), &core.SessionRecord{ID: r.ID, Data: []byte(`{}`), LastUsed: now, Expires: now.Add(time.Hour)}, core.SessionLimits{}); err == nil {
		t.Fatal("Create with an id in use succeeded")
	}
}

func testGetUnknown(t *testing.T, s core.SessionStore) {
	if _, err := s.Get(context.Background(), NewID()); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Get(unknown) = %v, want ErrSessionNotFound", err)
	}
}

func testUpdateVersions(t *testing.T, s core.SessionStore) {
	ctx := context.Background()
	now := time.Now()
	r := record("", now, `{"n":0}`)
	mustCreate(t, s, r, core.SessionLimits{})
	stale := *r
	r.Data = []byte(`{"n":1}`)
	if err := s.Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.Version != 2 {
		t.Fatalf("Version after Update = %d, want 2", r.Version)
	}
	stale.Data = []byte(`{"n":99}`)
	if err := s.Update(ctx, &stale); !errors.Is(err, core.ErrSessionConflict) {
		t.Fatalf("stale Update = %v, want ErrSessionConflict", err)
	}
	got, _ := s.Get(ctx, r.ID)
	if string(got.Data) != `{"n":1}` || got.Version != 2 {
		t.Fatalf("after conflict: %s v%d, want {\"n\":1} v2 (a failed Update must change nothing)", got.Data, got.Version)
	}
}

func testUpdateMissing(t *testing.T, s core.SessionStore) {
	now := time.Now()
	r := record("", now, `{}`)
	r.Version = 1
	if err := s.Update(context.Background(), r); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Update(unknown) = %v, want ErrSessionNotFound", err)
	}
	if exists(t, s, r.ID) {
		t.Fatal("Update of an unknown record created it")
	}
}

func testDelete(t *testing.T, s core.SessionStore) {
	ctx := context.Background()
	r := record("p", time.Now(), `{}`)
	mustCreate(t, s, r, core.SessionLimits{})
	if err := s.Delete(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if exists(t, s, r.ID) {
		t.Fatal("deleted session still exists")
	}
	if err := s.Delete(ctx, r.ID); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("second Delete = %v, want ErrSessionNotFound", err)
	}
	r.Version = 1
	if err := s.Update(ctx, r); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Update after Delete = %v, want ErrSessionNotFound", err)
	}
}

func testExpiry(t *testing.T, s core.SessionStore) {
	ctx := context.Background()
	past := time.Now().Add(-2 * time.Hour)
	r := &core.SessionRecord{ID: NewID(), Data: []byte(`{}`), LastUsed: past, Expires: past.Add(time.Hour)}
	mustCreate(t, s, r, core.SessionLimits{})
	if exists(t, s, r.ID) {
		t.Fatal("an expired session is visible")
	}
	r.Expires = time.Now().Add(time.Hour)
	if err := s.Update(ctx, r); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Update of an expired session = %v, want ErrSessionNotFound", err)
	}
	if err := s.Delete(ctx, r.ID); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("Delete of an expired session = %v, want ErrSessionNotFound", err)
	}
}

func testUpdateExtendsLife(t *testing.T, s core.SessionStore) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	r := &core.SessionRecord{ID: NewID(), Data: []byte(`{}`), LastUsed: now, Expires: now.Add(2 * time.Second)}
	mustCreate(t, s, r, core.SessionLimits{})
	r.LastUsed, r.Expires = now.Add(time.Second), now.Add(time.Hour)
	if err := s.Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Expires.Equal(r.Expires) || !got.LastUsed.Equal(r.LastUsed) {
		t.Fatalf("Update did not store the new times: %v %v", got.LastUsed, got.Expires)
	}
}

func testEvictPerPrincipal(t *testing.T, s core.SessionStore) {
	lim := core.SessionLimits{PerPrincipal: 3, Anonymous: 100}
	base := time.Now().Add(-time.Minute)
	var ids []string
	for i := 0; i < 3; i++ {
		r := record("alice", base.Add(time.Duration(i)*time.Second), `{}`)
		if ev := mustCreate(t, s, r, lim); len(ev) != 0 {
			t.Fatalf("evicted %v below the limit", ev)
		}
		ids = append(ids, r.ID)
	}
	other := record("bob", base.Add(-time.Hour), `{}`) // older, but another pool
	mustCreate(t, s, other, lim)
	anon := record("", base.Add(-time.Hour), `{}`)
	mustCreate(t, s, anon, lim)
	r := record("alice", base.Add(10*time.Second), `{}`)
	ev := mustCreate(t, s, r, lim)
	if len(ev) != 1 || ev[0] != ids[0] {
		t.Fatalf("evicted %v, want [%s] (alice's least recently used)", ev, ids[0])
	}
	if exists(t, s, ids[0]) {
		t.Fatal("the evicted session still exists")
	}
	for _, id := range append(ids[1:], other.ID, anon.ID, r.ID) {
		if !exists(t, s, id) {
			t.Fatalf("session %s was wrongly evicted", id)
		}
	}
}

func testEvictAnonymous(t *testing.T, s core.SessionStore) {
	lim := core.SessionLimits{PerPrincipal: 1, Anonymous: 2}
	base := time.Now().Add(-time.Minute)
	a := record("", base, `{}`)
	b := record("", base.Add(time.Second), `{}`)
	p := record("carol", base.Add(-time.Hour), `{}`)
	mustCreate(t, s, a, lim)
	mustCreate(t, s, b, lim)
	mustCreate(t, s, p, lim)
	c := record("", base.Add(2*time.Second), `{}`)
	ev := mustCreate(t, s, c, lim)
	if len(ev) != 1 || ev[0] != a.ID {
		t.Fatalf("evicted %v, want [%s]", ev, a.ID)
	}
	if !exists(t, s, p.ID) || !exists(t, s, b.ID) || !exists(t, s, c.ID) {
		t.Fatal("a session outside the evicted one disappeared")
	}
}

func testEvictOrderFollowsUpdates(t *testing.T, s core.SessionStore) {
	ctx := context.Background()
	lim := core.SessionLimits{PerPrincipal: 2}
	base := time.Now().Add(-time.Minute)
	a := record("dave", base, `{}`)
	b := record("dave", base.Add(time.Second), `{}`)
	mustCreate(t, s, a, lim)
	mustCreate(t, s, b, lim)
	a.LastUsed = base.Add(5 * time.Second) // a is now the most recently used
	if err := s.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	c := record("dave", base.Add(6*time.Second), `{}`)
	ev := mustCreate(t, s, c, lim)
	if len(ev) != 1 || ev[0] != b.ID {
		t.Fatalf("evicted %v, want [%s]: Update must refresh the LRU order", ev, b.ID)
	}
}

func testNoLimits(t *testing.T, s core.SessionStore) {
	now := time.Now()
	for i := 0; i < 20; i++ {
		if ev := mustCreate(t, s, record("erin", now, `{}`), core.SessionLimits{}); len(ev) != 0 {
			t.Fatalf("evicted %v without limits", ev)
		}
	}
}

// testConcurrentWriters runs read-modify-write loops on one session from
// many goroutines: with correct conditional writes, no increment is lost.
func testConcurrentWriters(t *testing.T, s core.SessionStore) {
	ctx := context.Background()
	r := record("frank", time.Now(), `{"n":0}`)
	mustCreate(t, s, r, core.SessionLimits{})
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for attempt := 0; ; attempt++ {
					if attempt > 1000 {
						errs <- errors.New("too many conflicts")
						return
					}
					cur, err := s.Get(ctx, r.ID)
					if err != nil {
						errs <- err
						return
					}
					var v struct{ N int }
					json.Unmarshal(cur.Data, &v)
					v.N++
					cur.Data, _ = json.Marshal(map[string]int{"n": v.N})
					cur.LastUsed = time.Now()
					err = s.Update(ctx, cur)
					if err == nil {
						break
					}
					if !errors.Is(err, core.ErrSessionConflict) {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ N int }
	json.Unmarshal(got.Data, &v)
	if v.N != workers*each {
		t.Fatalf("counter = %d, want %d: updates were lost", v.N, workers*each)
	}
	if got.Version != int64(1+workers*each) {
		t.Fatalf("Version = %d, want %d", got.Version, 1+workers*each)
	}
}

// testConcurrentCreates initialises many sessions of one principal at once:
// when it settles, no more than the limit survive and the newest do.
func testConcurrentCreates(t *testing.T, s core.SessionStore) {
	lim := core.SessionLimits{PerPrincipal: 3, Anonymous: 3}
	const n = 12
	base := time.Now().Add(-time.Minute)
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		r := record("grace", base.Add(time.Duration(i)*time.Millisecond), `{}`)
		ids[i] = r.ID
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Create(context.Background(), r, lim); err != nil {
				errs <- fmt.Errorf("Create: %w", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// One more create, sequential, settles the pool to the limit.
	last := record("grace", base.Add(time.Second), `{}`)
	mustCreate(t, s, last, lim)
	live := 0
	for _, id := range append(ids, last.ID) {
		if exists(t, s, id) {
			live++
		}
	}
	if live > lim.PerPrincipal {
		t.Fatalf("%d live sessions of one principal, limit %d", live, lim.PerPrincipal)
	}
	if !exists(t, s, last.ID) {
		t.Fatal("the newest session was evicted")
	}
}

func testIsolation(t *testing.T, s core.SessionStore) {
	ctx := context.Background()
	r := record("heidi", time.Now(), `{"x":"original"}`)
	mustCreate(t, s, r, core.SessionLimits{})
	r.Data[6] = 'X' // the caller's buffer must not alias the stored record
	got, _ := s.Get(ctx, r.ID)
	if string(got.Data) != `{"x":"original"}` {
		t.Fatalf("stored data changed through the caller's slice: %s", got.Data)
	}
	got.Data[6] = 'Y'
	again, _ := s.Get(ctx, r.ID)
	if string(again.Data) != `{"x":"original"}` {
		t.Fatalf("stored data changed through a returned slice: %s", again.Data)
	}
}
