package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// RunChangeBus runs the suite every core.ChangeBus must pass against buses
// made by newBus, each case in parallel with its own bus (one that shares
// no log with the others). size is the number of changes the bus keeps;
// it must be at least 20.
func RunChangeBus(t *testing.T, newBus func(t *testing.T) core.ChangeBus, size int) {
	if size < 20 {
		t.Fatalf("storetest: RunChangeBus needs a bus that keeps at least 20 changes, not %d", size)
	}
	tests := []struct {
		name string
		fn   func(*testing.T, core.ChangeBus, int)
	}{
		{"ReadAfterPublish", testBusReadAfterPublish},
		{"Order", testBusOrder},
		{"ConcurrentPublishersLoseNothing", testBusConcurrent},
		{"Window", testBusWindow},
		{"ReaderAhead", testBusReaderAhead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newBus(t), size)
		})
	}
}

func head(t *testing.T, b core.ChangeBus) int64 {
	t.Helper()
	got, err := b.Read(context.Background(), -1)
	if err != nil {
		t.Fatalf("Read(-1): %v", err)
	}
	if len(got.Changes) != 0 || got.Missed {
		t.Fatalf("Read(-1) = %+v, want only the position", got)
	}
	return got.Next
}

func publish(t *testing.T, b core.ChangeBus, c core.Change) {
	t.Helper()
	if err := b.Publish(context.Background(), c); err != nil {
		t.Fatalf("Publish(%+v): %v", c, err)
	}
}

func read(t *testing.T, b core.ChangeBus, after int64) *core.ChangeBatch {
	t.Helper()
	got, err := b.Read(context.Background(), after)
	if err != nil {
		t.Fatalf("Read(%d): %v", after, err)
	}
	return got
}

func testBusReadAfterPublish(t *testing.T, b core.ChangeBus, _ int) {
	h := head(t, b)
	if got := read(t, b, h); len(got.Changes) != 0 || got.Missed || got.Next != h {
		t.Fatalf("Read(head) before any change = %+v", got)
	}
	want := []core.Change{
		{Kind: core.ChangeResourceUpdated, URI: "test://a/é?x=1", Origin: "i1"},
		{Kind: core.ChangeTools, Origin: "i2"},
	}
	for _, c := range want {
		publish(t, b, c)
	}
	got := read(t, b, h)
	if got.Missed || len(got.Changes) != 2 {
		t.Fatalf("Read(%d) = %+v, want the 2 changes", h, got)
	}
	for i, c := range got.Changes {
		w := want[i]
		w.Pos = h + int64(i) + 1
		if c != w {
			t.Errorf("change %d = %+v, want %+v", i, c, w)
		}
	}
	if got.Next != h+2 {
		t.Errorf("Next = %d, want %d", got.Next, h+2)
	}
	if again := read(t, b, got.Next); len(again.Changes) != 0 || again.Missed || again.Next != got.Next {
		t.Errorf("Read(Next) = %+v, want nothing new", again)
	}
	if h2 := head(t, b); h2 != got.Next {
		t.Errorf("Read(-1).Next = %d, want %d", h2, got.Next)
	}
}

func testBusOrder(t *testing.T, b core.ChangeBus, _ int) {
	h := head(t, b)
	for i := range 5 {
		publish(t, b, core.Change{Kind: core.ChangeResourceUpdated, URI: fmt.Sprint("test://", i), Origin: "o"})
	}
	mid := read(t, b, h+2)
	if len(mid.Changes) != 3 || mid.Changes[0].URI != "test://2" || mid.Missed {
		t.Fatalf("Read(head+2) = %+v, want changes 2..4", mid)
	}
	for i, c := range mid.Changes {
		if c.Pos != h+3+int64(i) || c.URI != fmt.Sprint("test://", i+2) {
			t.Errorf("change %d = %+v", i, c)
		}
	}
}

func testBusConcurrent(t *testing.T, b core.ChangeBus, _ int) {
	h := head(t, b)
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := b.Publish(context.Background(), core.Change{Kind: core.ChangeResourceUpdated, URI: fmt.Sprintf("test://%d/%d", w, i), Origin: "o"}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Publish: %v", err)
	}
	got := read(t, b, h)
	if got.Missed || len(got.Changes) != writers*each {
		t.Fatalf("Read after %d concurrent publishes: %d changes (missed %v)", writers*each, len(got.Changes), got.Missed)
	}
	seen := map[string]bool{}
	for i, c := range got.Changes {
		if c.Pos != h+int64(i)+1 {
			t.Errorf("change %d at position %d, want %d", i, c.Pos, h+int64(i)+1)
		}
		if seen[c.URI] {
			t.Errorf("change %s twice", c.URI)
		}
		seen[c.URI] = true
	}
}

func testBusWindow(t *testing.T, b core.ChangeBus, size int) {
	h := head(t, b)
	for i := range size + 1 {
		publish(t, b, core.Change{Kind: core.ChangePrompts, Origin: fmt.Sprint(i)})
	}
	got := read(t, b, h)
	if !got.Missed {
		t.Errorf("Read after %d changes on a log of %d: not Missed", size+1, size)
	}
	if len(got.Changes) != size || got.Changes[0].Pos != h+2 || got.Next != h+int64(size)+1 {
		t.Errorf("Read after the window: %d changes from %d, Next %d; want %d from %d, Next %d",
			len(got.Changes), got.Changes[0].Pos, got.Next, size, h+2, h+int64(size)+1)
	}
	if tail := read(t, b, h+1); tail.Missed || len(tail.Changes) != size {
		t.Errorf("Read from the oldest kept change: %d changes, missed %v", len(tail.Changes), tail.Missed)
	}
}

func testBusReaderAhead(t *testing.T, b core.ChangeBus, _ int) {
	publish(t, b, core.Change{Kind: core.ChangeTools, Origin: "o"})
	h := head(t, b)
	got := read(t, b, h+10)
	if !got.Missed || len(got.Changes) != 0 || got.Next != h {
		t.Errorf("Read past the log's position = %+v, want Missed and Next %d", got, h)
	}
}
