package durable

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpfn/mcpfn/core"
)

// DefaultChangeLogSize is the number of changes Changes keeps when its
// Size is zero.
const DefaultChangeLogSize = 256

// MaxChangeLogSize bounds Changes.Size.
const MaxChangeLogSize = 1000

// Changes is a core.ChangeBus in one Durable Object (named "c:" and Log):
// Publish and Read are one call to it each, and the object's
// one-event-at-a-time order gives every change a position of its own.
type Changes struct {
	// Call reaches the objects.
	Call Caller
	// Binding is the McpfnState namespace's binding; empty means
	// DefaultBinding.
	Binding string
	// Prefix starts the name of every object the bus uses, so that several
	// servers (or tests) share a namespace without sharing objects. At
	// most MaxPrefixBytes.
	Prefix string
	// Log names the log; empty means "default".
	Log string
	// Size is the number of changes the log keeps: an instance that falls
	// further behind between two reads tells its streams that every list
	// changed. Zero means DefaultChangeLogSize; at most MaxChangeLogSize.
	// The object keeps fewer when they would take more than 120 KiB of
	// JSON (long URIs: about 58 of core.MaxChangeURIBytes), under the
	// 128 KiB value limit of key-value backed objects and of workerd's
	// in-memory storage.
	Size int
}

var _ core.ChangeBus = (*Changes)(nil)

func (c *Changes) object() string {
	if c.Log == "" {
		return "c:default"
	}
	return "c:" + c.Log
}

// Publish implements core.ChangeBus.
func (c *Changes) Publish(ctx context.Context, ch core.Change) error {
	size := c.Size
	if size == 0 {
		size = DefaultChangeLogSize
	}
	if size < 1 || size > MaxChangeLogSize {
		return fmt.Errorf("durable: Changes.Size %d: must be 0 (the default) to %d", size, MaxChangeLogSize)
	}
	if len(ch.URI) > core.MaxChangeURIBytes {
		return fmt.Errorf("durable: publish change: a URI of %d bytes, at most %d", len(ch.URI), core.MaxChangeURIBytes)
	}
	r, err := store{c.Call, c.Binding, c.Prefix}.op(ctx, c.object(), map[string]any{"op": "changePublish",
		"size": size, "k": string(ch.Kind), "u": ch.URI, "o": ch.Origin})
	if err != nil {
		return fmt.Errorf("durable: publish change: %w", err)
	}
	if !r.OK {
		return fmt.Errorf("durable: publish change: %s", r.Error)
	}
	return nil
}

// Read implements core.ChangeBus.
func (c *Changes) Read(ctx context.Context, after int64) (*core.ChangeBatch, error) {
	out, err := callRaw(ctx, store{c.Call, c.Binding, c.Prefix}, c.object(), map[string]any{"op": "changeRead"})
	if err != nil {
		return nil, fmt.Errorf("durable: read changes: %w", err)
	}
	var r struct {
		OK  bool          `json:"ok"`
		Pos int64         `json:"pos"`
		Log []core.Change `json:"log"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.OK {
		return nil, fmt.Errorf("durable: read changes: malformed reply %.200q", out)
	}
	b := &core.ChangeBatch{Next: r.Pos}
	switch {
	case after < 0:
		return b, nil
	case after > r.Pos:
		b.Missed = true
		return b, nil
	case after < r.Pos && (len(r.Log) == 0 || r.Log[0].Pos > after+1):
		b.Missed = true
	}
	for _, ch := range r.Log {
		if ch.Pos > after {
			b.Changes = append(b.Changes, ch)
		}
	}
	return b, nil
}
