package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// ChangeBus carries a server's change notifications between its instances.
//
// Without one (ServerOptions.ChangeBus nil), a subscriptions/listen stream
// (2026-07-28) or a legacy GET stream hears only of the changes made on the
// instance that holds it: behind a load balancer or on serverless platforms
// a NotifyResourceUpdated, AddTool or RemoveTools on another instance never
// reaches it. With one, every instance publishes its changes to the bus,
// and an instance that holds at least one stream reads the bus once per
// ServerOptions.ChangePollInterval, whatever the number of its streams, and
// hands each change another instance published to its streams as if made
// here. store/dynamo and adapters/workers/durable ship implementations;
// MemoryChangeBus is the in-process one (several Servers in one process,
// and tests).
//
// A bus is a bounded, ordered log: Publish appends a change and gives it the
// next position; Read returns the changes after a position. Implementations
// must be safe for concurrent use by many goroutines and processes.
type ChangeBus interface {
	// Publish appends c to the log.
	Publish(ctx context.Context, c Change) error
	// Read returns, in the order published, the changes after position
	// after (at most a bounded number of them) and the position of the
	// last one returned (or after, when there are none). A negative after
	// asks for no changes, only the current position. When the log no
	// longer holds every change after after (it is bounded, or it was
	// reset), Read sets Missed and returns what it holds.
	Read(ctx context.Context, after int64) (*ChangeBatch, error)
}

// ChangeKind names what a Change changed.
type ChangeKind string

// The kinds of change, and the notification each one becomes
// (2026-07-28 server/utilities/subscriptions; 2025-11-25 server/tools,
// server/prompts, server/resources).
const (
	// ChangeTools: the tool list changed (notifications/tools/list_changed).
	ChangeTools ChangeKind = "tools"
	// ChangePrompts: the prompt list changed
	// (notifications/prompts/list_changed).
	ChangePrompts ChangeKind = "prompts"
	// ChangeResources: the resource list changed
	// (notifications/resources/list_changed).
	ChangeResources ChangeKind = "resources"
	// ChangeResourceUpdated: the resource at Change.URI changed
	// (notifications/resources/updated).
	ChangeResourceUpdated ChangeKind = "resource"
)

// MaxChangeURIBytes bounds Change.URI: a longer resource URI is not
// published to the bus (its update still reaches this instance's streams).
const MaxChangeURIBytes = 2048

// Change is one change notification on a ChangeBus.
type Change struct {
	Kind ChangeKind `json:"k"`
	// URI is the updated resource of a ChangeResourceUpdated.
	URI string `json:"u,omitempty"`
	// Origin identifies the instance that published the change: it skips
	// its own changes when it reads the bus, as its streams already heard
	// of them.
	Origin string `json:"o"`
	// Pos is the change's position in the log, set by the bus.
	Pos int64 `json:"p"`
}

// ChangeBatch is what ChangeBus.Read returns.
type ChangeBatch struct {
	Changes []Change
	// Next is the position to read after next time.
	Next int64
	// Missed reports that changes after the position read are no longer in
	// the log: the reader tells its streams that every list changed.
	Missed bool
}

// DefaultChangePollInterval is how often an instance with listening
// streams reads its ChangeBus when ServerOptions.ChangePollInterval is
// zero.
const DefaultChangePollInterval = time.Second

// ChangePublishTimeout bounds one ChangeBus.Publish.
const ChangePublishTimeout = 5 * time.Second

func (k ChangeKind) bits() changeKind {
	switch k {
	case ChangeTools:
		return changeTools
	case ChangePrompts:
		return changePrompts
	case ChangeResources:
		return changeResources
	case ChangeResourceUpdated:
		return changeResourceUpdated
	}
	return 0
}

func (k changeKind) public() ChangeKind {
	switch k {
	case changeTools:
		return ChangeTools
	case changePrompts:
		return ChangePrompts
	case changeResources:
		return ChangeResources
	}
	return ChangeResourceUpdated
}

// busLink is a server's connection to its ChangeBus: the instance's
// identity and the one read loop, which runs only while the hub has
// subscriptions.
type busLink struct {
	bus      ChangeBus
	interval time.Duration
	s        *Server

	// origin identifies this instance's changes: random, drawn when first
	// needed (a publish or the read loop, both while serving), not in
	// NewServer, which may run where random bytes may not be read (a
	// Worker's global scope).
	originOnce sync.Once
	origin     string

	mu      sync.Mutex
	running bool
}

func newBusLink(s *Server, bus ChangeBus, interval time.Duration) *busLink {
	if interval <= 0 {
		interval = DefaultChangePollInterval
	}
	return &busLink{bus: bus, interval: interval, s: s}
}

// id returns the instance's origin.
func (b *busLink) id() string {
	b.originOnce.Do(func() {
		var r [12]byte
		rand.Read(r[:])
		b.origin = hex.EncodeToString(r[:])
	})
	return b.origin
}

// changed tells this instance's streams of a change and, once the server
// serves, every other instance through the bus. Changes made before the
// first request (the registrations of an instance's start) are its initial
// state, the same on every instance, not news.
func (s *Server) changed(kind changeKind, uri string) {
	s.hub.publish(kind, uri)
	b := s.hub.bus
	if b == nil || !s.serving.Load() || len(uri) > MaxChangeURIBytes {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ChangePublishTimeout)
	defer cancel()
	if err := b.bus.Publish(ctx, Change{Kind: kind.public(), URI: uri, Origin: b.id()}); err != nil {
		s.log.Warn("change bus: publishing a change", "kind", string(kind.public()), "error", err.Error())
	}
}

// wake starts the read loop if it is not running; the hub calls it when a
// stream subscribes.
func (b *busLink) wake() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running {
		return
	}
	b.running = true
	go b.loop()
}

// loop reads the bus once per interval while the hub has subscriptions,
// and offers the changes other instances published to them.
func (b *busLink) loop() {
	h := &b.s.hub
	self := b.id()
	t := time.NewTicker(b.interval)
	defer t.Stop()
	pos, failing := int64(-1), false
	for {
		ctx, cancel := context.WithTimeout(context.Background(), b.interval+ChangePublishTimeout)
		batch, err := b.bus.Read(ctx, pos)
		cancel()
		switch {
		case err != nil:
			if !failing {
				b.s.log.Warn("change bus: reading changes", "error", err.Error())
			}
			failing = true
		default:
			if failing {
				b.s.log.Info("change bus: reading changes again")
			}
			failing = false
			if pos >= 0 && batch.Missed {
				h.publish(changeTools|changePrompts|changeResources, "")
			}
			for _, c := range batch.Changes {
				if c.Origin != self && pos >= 0 {
					if k := c.Kind.bits(); k != 0 {
						h.publish(k, c.URI)
					}
				}
			}
			pos = batch.Next
		}
		select {
		case <-t.C:
		case <-b.s.closed:
			b.stop()
			return
		}
		if b.idle() {
			return
		}
	}
}

// idle stops the loop when no stream is subscribed, and reports it.
func (b *busLink) idle() bool {
	h := &b.s.hub
	h.mu.Lock()
	n := len(h.subs)
	h.mu.Unlock()
	if n > 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// A stream that subscribes from here on calls wake, which starts a
	// new loop.
	h.mu.Lock()
	n = len(h.subs)
	h.mu.Unlock()
	if n > 0 {
		return false
	}
	b.running = false
	return true
}

func (b *busLink) stop() {
	b.mu.Lock()
	b.running = false
	b.mu.Unlock()
}

// MemoryChangeBus is an in-process ChangeBus: a log of the last
// MemoryChangeBusSize changes, for several Servers in one process and for
// tests. The zero value is ready to use.
type MemoryChangeBus struct {
	mu   sync.Mutex
	log  []Change
	next int64 // the position of the next change
}

// MemoryChangeBusSize is the number of changes a MemoryChangeBus keeps.
const MemoryChangeBusSize = 256

// Publish implements ChangeBus.
func (m *MemoryChangeBus) Publish(ctx context.Context, c Change) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	c.Pos = m.next
	if len(m.log) == MemoryChangeBusSize {
		m.log = append(m.log[:0], m.log[1:]...)
	}
	m.log = append(m.log, c)
	return nil
}

// Read implements ChangeBus.
func (m *MemoryChangeBus) Read(ctx context.Context, after int64) (*ChangeBatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &ChangeBatch{Next: m.next}
	if after < 0 {
		return out, nil
	}
	if after > m.next {
		out.Missed = true
		return out, nil
	}
	if len(m.log) > 0 && m.log[0].Pos > after+1 {
		out.Missed = true
	}
	for _, c := range m.log {
		if c.Pos > after {
			out.Changes = append(out.Changes, c)
		}
	}
	return out, nil
}
