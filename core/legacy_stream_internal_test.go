package core

import (
	"context"
	"errors"
	"testing"
	"time"
)

type flightKey struct{}

// TestInflightContext checks the context of a legacy session request: the
// HTTP request's values without its cancellation or deadline, done on
// cancel, and contexts derived from it (context.WithCancel, WithTimeout,
// AfterFunc) following it.
func TestInflightContext(t *testing.T) {
	t.Parallel()
	parent, stopParent := context.WithTimeout(context.WithValue(context.Background(), flightKey{}, "v"), time.Hour)
	var l local
	f := newInflight(parent, &l, &Session{}, inflightKey{"s", "1"})
	l.addInflight(f.key, f)
	var ctx context.Context = f

	if got := ctx.Value(flightKey{}); got != "v" {
		t.Fatalf("Value = %v, want the parent's", got)
	}
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("Deadline: the parent's deadline leaked through")
	}
	stopParent()
	if ctx.Err() != nil || context.Cause(ctx) != nil {
		t.Fatalf("cancelling the HTTP request's context cancelled the session request: %v, %v", ctx.Err(), context.Cause(ctx))
	}
	select {
	case <-ctx.Done():
		t.Fatal("Done closed before cancel")
	default:
	}

	child, stopChild := context.WithCancel(ctx)
	defer stopChild()
	timed, stopTimed := context.WithTimeout(ctx, time.Hour)
	defer stopTimed()
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ran) })
	stopped := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(stopped) })
	if !stop() {
		t.Fatal("stop of a pending AfterFunc reported false")
	}

	f.release()
	f.release() // a second release does nothing
	<-ctx.Done()
	<-child.Done()
	<-timed.Done()
	<-ran
	select {
	case <-stopped:
		t.Fatal("a stopped AfterFunc ran")
	default:
	}
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(context.Cause(ctx), context.Canceled) || !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("after release: Err %v, Cause %v, child %v", ctx.Err(), context.Cause(ctx), child.Err())
	}
	if l.findInflight(inflightKey{"s", "1"}) != nil {
		t.Fatal("release left the request recorded")
	}

	// Registered after the end: runs at once; Done made after the end is closed.
	late := make(chan struct{})
	if context.AfterFunc(ctx, func() { close(late) })() {
		t.Fatal("stop after the end reported true")
	}
	<-late
	g := newInflight(context.Background(), &l, &Session{}, inflightKey{"s", "2"})
	g.cancel()
	<-g.Done()
}
