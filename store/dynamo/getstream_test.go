package dynamo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// Two instances share a DynamoDB table: a client's GET stream is held by A
// and its session is deleted through B. A's stream ends and A keeps serving
// legacy sessions (it once left a lock held: every later legacy request of
// the process hung).
func TestGetStreamSessionDeletedThroughAnotherInstance(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	table := newTable(t, client)
	keys := core.StaticKeys{core.NewRandomKey("shared")}
	instance := func() string {
		srv := core.NewServer(core.Implementation{Name: "inst", Version: "1"}, &core.ServerOptions{
			SessionStore: newStore(t, client, table, nil), Keys: keys, StreamKeepAlive: 20 * time.Millisecond})
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		return ts.URL
	}
	ua, ub := instance(), instance()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := &mcptest.Client{URL: ua}
	if _, err := a.Initialize(ctx, core.ProtocolVersion20251125, nil); err != nil {
		t.Fatal(err)
	}
	g, err := a.OpenGetStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b := &mcptest.Client{URL: ub, SessionID: a.SessionID, Version: a.Version}
	if status, err := b.Delete(ctx); err != nil || status != http.StatusNoContent {
		t.Fatalf("DELETE through B: %v HTTP %d", err, status)
	}
	if err := g.WaitEnd(ctx); err != nil {
		t.Fatalf("A's GET stream outlived its session: %v", err)
	}
	check, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := mcptest.ServesLegacy(check, ua, core.ProtocolVersion20251125); err != nil {
		t.Fatalf("A no longer serves legacy sessions: %v", err)
	}
}
