package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// countingBus is a MemoryChangeBus that counts its calls.
type countingBus struct {
	core.MemoryChangeBus
	reads, publishes atomic.Int64
}

func (b *countingBus) Publish(ctx context.Context, c core.Change) error {
	b.publishes.Add(1)
	return b.MemoryChangeBus.Publish(ctx, c)
}

func (b *countingBus) Read(ctx context.Context, after int64) (*core.ChangeBatch, error) {
	b.reads.Add(1)
	return b.MemoryChangeBus.Read(ctx, after)
}

// busServer is one instance of a server sharing bus.
func busServer(t *testing.T, bus core.ChangeBus, interval time.Duration) *core.Server {
	t.Helper()
	srv := core.NewServer(core.Implementation{Name: "bus", Version: "1"}, &core.ServerOptions{
		ChangeBus: bus, ChangePollInterval: interval, StreamKeepAlive: -1,
		Logger: slog.New(slog.DiscardHandler),
	})
	t.Cleanup(func() { srv.Close() })
	core.AddTool(srv, &core.Tool{Name: "add"}, add)
	srv.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{}, nil
	})
	return srv
}

// A change made on one instance reaches the listen streams of another
// through the ChangeBus within one poll interval, once; the listening
// instance reads the bus once per interval however many streams it holds,
// skips its own changes (its streams heard of them at once), and stops
// reading when its last stream closes. Registrations before an instance
// serves are its initial state and are not published.
func TestChangeBusAcrossInstances(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		bus := &countingBus{}
		a, b := busServer(t, bus, interval), busServer(t, bus, interval)
		if n := bus.publishes.Load(); n != 0 {
			t.Fatalf("registrations before serving published %d changes, want 0", n)
		}
		ha := handlerClient(a)
		// b serves a request: from now on its changes are news.
		if res := mreq(1, "server/discover", nil).do(t, b).result(t); res == nil {
			t.Fatal("server/discover answered nothing")
		}

		var streams []*sseStream
		for i := range 5 {
			s := openStreamVia(t, ha, streamURL, mreq(i, "subscriptions/listen", map[string]any{"notifications": map[string]any{
				"toolsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": []string{"test://r"},
			}}))
			if ack := s.next(time.Second); ack["method"] != "notifications/subscriptions/acknowledged" {
				t.Fatalf("stream %d: first event %v", i, ack)
			}
			streams = append(streams, s)
		}
		synctest.Wait()
		for tick := range 3 {
			base := bus.reads.Load()
			time.Sleep(interval)
			synctest.Wait()
			if n := bus.reads.Load() - base; n != 1 {
				t.Fatalf("interval %d: %d bus reads for 5 streams, want 1", tick+1, n)
			}
		}

		expect := func(what string, uri string, methods ...string) {
			t.Helper()
			for i, s := range streams {
				for _, method := range methods {
					n := s.next(2 * interval)
					if n["method"] != method || (uri != "" && str(at(n, "params", "uri")) != uri) {
						t.Fatalf("%s: stream %d got %v, want %s %s", what, i, n, method, uri)
					}
				}
			}
			// Nothing more, however many intervals pass.
			time.Sleep(3 * interval)
			synctest.Wait()
			for i, s := range streams {
				quiet(t, s, fmt.Sprintf("%s: stream %d", what, i))
			}
		}
		core.AddTool(b, &core.Tool{Name: "new"}, add)
		expect("AddTool on the other instance", "", "notifications/tools/list_changed")
		b.NotifyResourceUpdated("test://r")
		expect("resource update on the other instance", "test://r", "notifications/resources/updated")
		b.NotifyResourceUpdated("test://other")
		time.Sleep(2 * interval)
		synctest.Wait()
		for i, s := range streams {
			quiet(t, s, fmt.Sprintf("an unsubscribed resource: stream %d", i))
		}
		a.NotifyResourceUpdated("test://r")
		expect("resource update on the listening instance", "test://r", "notifications/resources/updated")

		// More changes than the bus keeps between two reads: the streams
		// hear that every list they watch changed.
		for range core.MemoryChangeBusSize + 1 {
			bus.Publish(context.Background(), core.Change{Kind: core.ChangeResourceUpdated, URI: "test://x", Origin: "elsewhere"})
		}
		expect("a missed stretch of the log", "", "notifications/tools/list_changed", "notifications/resources/list_changed")

		for _, s := range streams {
			s.close()
		}
		synctest.Wait()
		time.Sleep(2 * interval)
		synctest.Wait()
		base := bus.reads.Load()
		time.Sleep(5 * interval)
		synctest.Wait()
		if n := bus.reads.Load() - base; n != 0 {
			t.Errorf("%d bus reads with no stream open, want 0", n)
		}
	})
}

// MemoryChangeBus's log: positions, the bounded window, and a reader ahead
// of the log (a reset bus).
func TestMemoryChangeBus(t *testing.T) {
	ctx := context.Background()
	var m core.MemoryChangeBus
	head, _ := m.Read(ctx, -1)
	if head.Next != 0 || len(head.Changes) != 0 || head.Missed {
		t.Fatalf("empty bus: %+v", head)
	}
	for i := range 3 {
		m.Publish(ctx, core.Change{Kind: core.ChangeResourceUpdated, URI: fmt.Sprint(i), Origin: "o"})
	}
	got, _ := m.Read(ctx, 1)
	if got.Next != 3 || len(got.Changes) != 2 || got.Changes[0].URI != "1" || got.Changes[0].Pos != 2 || got.Missed {
		t.Fatalf("Read(1) = %+v", got)
	}
	if got, _ := m.Read(ctx, 7); !got.Missed || got.Next != 3 {
		t.Fatalf("a reader ahead of the log: %+v, want Missed and Next 3", got)
	}
	for range core.MemoryChangeBusSize {
		m.Publish(ctx, core.Change{Kind: core.ChangeTools, Origin: "o"})
	}
	if got, _ := m.Read(ctx, 1); !got.Missed || len(got.Changes) != core.MemoryChangeBusSize {
		t.Fatalf("past the window: Missed %v, %d changes", got.Missed, len(got.Changes))
	}
}
