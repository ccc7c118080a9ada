package core_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
)

// failingStore is a memory store whose operations fail on demand, the way a
// throttled or missing DynamoDB table does.
type failingStore struct {
	memory.Store
	fail atomic.Bool
}

var errThrottled = errors.New("dynamo: get session: ProvisionedThroughputExceededException")

func (f *failingStore) Get(ctx context.Context, id string) (*core.SessionRecord, error) {
	if f.fail.Load() {
		return nil, errThrottled
	}
	return f.Store.Get(ctx, id)
}

func (f *failingStore) Create(ctx context.Context, rec *core.SessionRecord, lim core.SessionLimits) ([]string, error) {
	if f.fail.Load() {
		return nil, errThrottled
	}
	return f.Store.Create(ctx, rec, lim)
}

func (f *failingStore) Update(ctx context.Context, rec *core.SessionRecord) error {
	if f.fail.Load() {
		return errThrottled
	}
	return f.Store.Update(ctx, rec)
}

// A failing session store is a 503 with a logged reason, never a panic,
// never internal text on the wire; the session is intact when the store
// recovers, and 2026-07-28 requests never touch the store.
func TestStoreFailure(t *testing.T) {
	var logs bytes.Buffer
	store := &failingStore{}
	srv := core.NewServer(core.Implementation{Name: "s", Version: "1"}, &core.ServerOptions{
		SessionStore: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	core.AddTool(srv, &core.Tool{Name: "hi", Description: "Says hi."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "hi", nil })
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
		t.Fatal(err)
	}
	store.fail.Store(true)
	r, err := c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "hi", "arguments": map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusServiceUnavailable || r.Error == nil || r.Error.Code != core.CodeInternalError {
		t.Fatalf("legacy call with the store down: HTTP %d %s, want 503 and -32603", r.Status, r.Messages)
	}
	if strings.Contains(string(r.Messages[0]), "Throughput") {
		t.Fatalf("store detail leaked to the client: %s", r.Messages[0])
	}
	if !strings.Contains(logs.String(), "ProvisionedThroughputExceededException") || !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("no error log naming the store failure: %s", logs.String())
	}
	// initialize with the store down: 503 too.
	c2 := &mcptest.Client{URL: ts.URL}
	ir, err := c2.Initialize(context.Background(), core.ProtocolVersion20251125, nil)
	if err == nil || ir == nil || ir.Status != http.StatusServiceUnavailable {
		t.Fatalf("initialize with the store down: %v %+v", err, ir)
	}
	// Modern requests do not use the store.
	mr, err := (&mcptest.Client{URL: ts.URL}).Call(context.Background(), "tools/call", map[string]any{"name": "hi", "arguments": map[string]any{}}, nil)
	if err != nil || mr.Error != nil || !bytes.Contains(mr.Result, []byte(`"hi"`)) {
		t.Fatalf("modern call with the store down: %v %s", err, mr.Messages)
	}
	// The store recovers: the session is still there and serves.
	store.fail.Store(false)
	r, err = c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "hi", "arguments": map[string]any{}}, nil)
	if err != nil || r.Status != http.StatusOK || r.Error != nil {
		t.Fatalf("after recovery: %v %s", err, r.Messages)
	}
}
