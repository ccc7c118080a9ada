package main

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
	"github.com/mcpfn/mcpfn/test/replicas/storeproxy"
)

// Change notifications cross replicas through the change bus in the
// session table (store/dynamo.ChangeBus, wired by deploy/lambdaenv from
// MCPFN_DYNAMODB_TABLE): listen streams on replica A hear of the updates
// that replicas B and C publish (SIGUSR1 makes examples/everything publish
// one), each exactly once, within the poll bound; A reads the bus once per
// poll interval however many streams it holds; killing B right after it
// began publishing loses nothing that landed and duplicates nothing.

const (
	watchedURI = "test://watched-resource"
	// changePoll is the replicas' ChangePollInterval: the default.
	changePoll = core.DefaultChangePollInterval
	// changeBound is how long a change may take to reach a stream on
	// another replica: one poll interval, plus the publish and the read,
	// with room for a loaded machine.
	changeBound = changePoll + 4*time.Second
)

func TestChangesAcrossReplicas(t *testing.T) {
	t.Parallel()
	c := newClusterWith(t, Config{Replicas: 3, StoreProxy: true, ReplicaArgs: []string{"-watch-every", "0"}})
	var busReads atomic.Int64
	c.Store.Observe(func(r storeproxy.Request) {
		if r.Op == "GetItem" && !r.Refused && bytes.Contains(r.Body, []byte(`"`+dynamo.ChangeKeyPrefix+`default"`)) {
			busReads.Add(1)
		}
	})
	bus, err := dynamo.NewChangeBus(dynalite.Client(c.Endpoint), &dynamo.Options{TableName: c.Table})
	if err != nil {
		t.Fatal(err)
	}
	landed := func() int64 {
		t.Helper()
		b, err := bus.Read(t.Context(), -1)
		if err != nil {
			t.Fatal(err)
		}
		return b.Next
	}

	a := c.Replica(0).URL
	var streams []*listenStream
	for i := range 5 {
		s := listen(t, a, i, map[string]any{"resourceSubscriptions": []string{watchedURI}})
		if got := s.ack.Params; len(got.Notifications.TaskIDs) != 0 {
			t.Fatalf("stream %d acknowledged %+v", i, got)
		}
		streams = append(streams, s)
	}

	// Five streams, no change: about one bus read per poll interval.
	before, start := busReads.Load(), time.Now()
	select {
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	case <-time.After(5 * changePoll):
	}
	reads, intervals := busReads.Load()-before, int(time.Since(start)/changePoll)+2
	t.Logf("5 streams on one replica, poll interval %v: %d bus reads in %v", changePoll, reads, time.Since(start).Round(time.Millisecond))
	if reads == 0 || reads > int64(intervals) {
		t.Errorf("%d bus reads in %d poll intervals with 5 streams open, want one per interval", reads, intervals)
	}

	received := 0 // updates each stream has received
	arrive := func(what string) {
		t.Helper()
		start := time.Now()
		for i, s := range streams {
			m := s.next(t, 2*changeBound)
			if m.Method != "notifications/resources/updated" || m.Params.URI != watchedURI {
				t.Fatalf("%s: stream %d got %+v, want the update of %s", what, i, m, watchedURI)
			}
		}
		received++
		took := time.Since(start)
		t.Logf("%s: on all 5 streams of A after %v", what, took.Round(time.Millisecond))
		if took > changeBound {
			t.Errorf("%s: took %v, over the bound %v", what, took, changeBound)
		}
	}
	touch := func(slot int) {
		t.Helper()
		if err := c.Signal(slot, syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
	}
	quiet := func(what string) {
		t.Helper()
		deadline := time.Now().Add(3 * changePoll)
		for i, s := range streams {
			ctx, cancel := context.WithDeadline(t.Context(), deadline)
			ev, err := s.ev.Next(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: stream %d: %v %s, want nothing more", what, i, err, ev.Data)
			}
		}
	}

	touch(1)
	arrive("an update on B")
	touch(2)
	arrive("an update on C")
	touch(1)
	arrive("another update on B")
	quiet("after three updates")
	if n := landed(); n != int64(received) {
		t.Fatalf("the bus holds %d changes, the streams received %d each", n, received)
	}

	// B is killed right after it was told to publish: the change landed or
	// not, and the streams hear of it exactly as many times as it landed.
	touch(1)
	if err := c.StopReplica(t.Context(), 1, false); err != nil {
		t.Fatal(err)
	}
	got := make([]bool, len(streams))
	deadline := time.Now().Add(3*changePoll + changeBound)
	for i, s := range streams {
		ctx, cancel := context.WithDeadline(t.Context(), deadline)
		ev, err := s.ev.Next(ctx)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
		case err != nil || !bytes.Contains([]byte(ev.Data), []byte(watchedURI)):
			t.Fatalf("after B was killed: stream %d: %v %s", i, err, ev.Data)
		default:
			got[i] = true
		}
	}
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("after B was killed, the streams disagree on its last change: %v", got)
		}
	}
	if got[0] {
		received++
	}
	t.Logf("B was killed right after SIGUSR1: its change landed: %v", got[0])
	if n := landed(); n != int64(received) {
		t.Fatalf("after killing B mid-publish: the bus holds %d changes, the streams received %d each", n, received)
	}
	touch(2)
	arrive("an update on C after B was killed")
	quiet("at the end")
	if n := landed(); n != int64(received) {
		t.Fatalf("at the end: the bus holds %d changes, the streams received %d each", n, received)
	}
}
