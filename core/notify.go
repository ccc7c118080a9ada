package core

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// changeKind is a set of change notification types.
type changeKind uint8

const (
	changeTools changeKind = 1 << iota
	changePrompts
	changeResources
	changeResourceUpdated
)

// hub fans change notifications out to listening streams (2026-07-28
// subscriptions/listen and legacy GET streams). Publishing never blocks:
// each subscription coalesces what it has not delivered yet.
type hub struct {
	mu   sync.Mutex
	subs map[*subscription]struct{}

	// streams counts the long-lived streams of this process.
	streams streamSlots
	// tasks reads the tasks listen streams watch, for all of them.
	tasks taskPoller
	// bus reads the other instances' changes while there are
	// subscriptions; nil without ServerOptions.ChangeBus.
	bus *busLink
}

// streamSlots counts the long-lived streams of this process
// (subscriptions/listen and legacy GET streams together), by caller, for
// ServerOptions.MaxStreamsPerPrincipal, MaxAnonymousStreams and
// MaxStreams. Its map holds only callers with an open stream: at most one
// entry per open stream.
type streamSlots struct {
	mu    sync.Mutex
	byKey map[string]int // principal key ("" for anonymous callers) -> streams
	total int
}

// streamSlot is one open stream's place in streamSlots.
type streamSlot struct{ key string }

// acquireStream takes a place for a long-lived stream of p, or returns
// the -31429 error of the bound it would pass.
func (s *Server) acquireStream(p *Principal) (*streamSlot, error) {
	key := p.key()
	mine := cmp.Or(s.opts.MaxStreamsPerPrincipal, DefaultMaxStreamsPerPrincipal)
	if p == nil {
		mine = cmp.Or(s.opts.MaxAnonymousStreams, DefaultMaxAnonymousStreams)
	}
	all := cmp.Or(s.opts.MaxStreams, DefaultMaxStreams)
	retry := s.opts.StreamKeepAlive
	if retry <= 0 {
		retry = DefaultStreamKeepAlive
	}
	c := &s.hub.streams
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case mine >= 0 && c.byKey[key] >= mine:
		return nil, LimitExceededError("too_many_streams", int64(mine), retry,
			"Too many streams: this caller already holds %d long-lived streams (subscriptions/listen, GET) on this server instance, its limit; close one, or retry later", mine)
	case all >= 0 && c.total >= all:
		return nil, LimitExceededError("instance_streams_full", int64(all), retry,
			"Too many streams: this server instance holds its limit of %d long-lived streams (subscriptions/listen, GET); retry later", all)
	}
	if c.byKey == nil {
		c.byKey = map[string]int{}
	}
	c.byKey[key]++
	c.total++
	return &streamSlot{key: key}, nil
}

// releaseStream gives back the place of a stream that ended; nil does
// nothing.
func (s *Server) releaseStream(sl *streamSlot) {
	if sl == nil {
		return
	}
	c := &s.hub.streams
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.byKey[sl.key]--; c.byKey[sl.key] <= 0 {
		delete(c.byKey, sl.key)
	}
}

// subscription is one listener's pending changes.
type subscription struct {
	kinds changeKind // the list-changed kinds wanted
	wake  chan struct{}
	// allURIs: every resource update is offered; the listener filters (a
	// legacy GET stream, whose session's subscriptions may change on
	// another instance).
	allURIs bool

	mu      sync.Mutex
	uris    map[string]bool // resource subscriptions
	pending changeKind
	updated []string // resource URIs updated, in order, deduplicated
}

func (h *hub) subscribe(kinds changeKind, uris []string) *subscription {
	sub := &subscription{kinds: kinds, wake: make(chan struct{}, 1), uris: map[string]bool{}}
	for _, u := range uris {
		sub.uris[u] = true
	}
	h.add(sub)
	return sub
}

func (h *hub) add(sub *subscription) {
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*subscription]struct{}{}
	}
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	if h.bus != nil {
		h.bus.wake()
	}
}

func (h *hub) unsubscribe(sub *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
}

func (h *hub) publish(kind changeKind, uri string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		sub.offer(kind, uri)
	}
}

func (sub *subscription) offer(kind changeKind, uri string) {
	if !sub.record(kind, uri) {
		return
	}
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// record adds a change to what is pending and reports whether it is new.
func (sub *subscription) record(kind changeKind, uri string) bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if kind == changeResourceUpdated {
		if !sub.watches(uri) || slices.Contains(sub.updated, uri) {
			return false
		}
		sub.updated = append(sub.updated, uri)
	} else if kind &= sub.kinds; kind == 0 {
		return false
	}
	sub.pending |= kind
	return true
}

// watches reports whether uri or a resource it is part of is subscribed.
// Callers hold sub.mu.
func (sub *subscription) watches(uri string) bool {
	if sub.allURIs || sub.uris[uri] {
		return true
	}
	return underAny(uri, sub.uris)
}

// underAny reports whether uri is, or is a sub-resource of, one of subs.
func underAny(uri string, subs map[string]bool) bool {
	if subs[uri] {
		return true
	}
	for u := range subs {
		if strings.HasPrefix(uri, strings.TrimSuffix(u, "/")+"/") {
			return true
		}
	}
	return false
}

// take returns and clears what is pending.
func (sub *subscription) take() (changeKind, []string) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	k, u := sub.pending, sub.updated
	sub.pending, sub.updated = 0, nil
	return k, u
}

// changeMessages returns the notifications for pending changes, each with
// params built by paramsFor (nil params when it returns nil).
func changeMessages(kinds changeKind, uris []string, paramsFor func(uri string) []byte) [][]byte {
	var out [][]byte
	add := func(method, uri string) {
		out = append(out, jsonwire.AppendNotification(nil, method, paramsFor(uri)))
	}
	if kinds&changeTools != 0 {
		add("notifications/tools/list_changed", "")
	}
	if kinds&changePrompts != 0 {
		add("notifications/prompts/list_changed", "")
	}
	if kinds&changeResources != 0 {
		add("notifications/resources/list_changed", "")
	}
	for _, u := range uris {
		add("notifications/resources/updated", u)
	}
	return out
}

// listen answers subscriptions/listen: an SSE stream that starts with the
// acknowledgement, then carries the requested change notifications, each
// tagged with the subscription id (the request's id), until the client closes
// it, the server closes, or the request's deadline nears (then it ends with
// the listen result, gracefully). It counts among the caller's long-lived
// streams (acquireStream): beyond a bound it is refused at once, before
// any store read, with -31429.
func (s *Server) listen(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	var p struct {
		Notifications *SubscriptionFilter `json:"notifications"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, InvalidParamsError("Invalid params: notifications: %v", err)
	}
	want := SubscriptionFilter{}
	if p.Notifications != nil {
		want = *p.Notifications
	}
	if len(want.TaskIDs) > 0 && !r.declaresTasks() {
		return nil, missingTasks()
	}
	if isBuffered(ctx) {
		// Nothing can reach the client before the response ends: honour no
		// notification type, acknowledge, and end gracefully at once.
		want = SubscriptionFilter{}
	} else {
		slot, err := s.acquireStream(r.Principal)
		if err != nil {
			return nil, err
		}
		defer s.releaseStream(slot)
	}
	reg := s.reg.Load()
	var got SubscriptionFilter
	var kinds changeKind
	tw, taskIDs := s.watchTasks(ctx, r, want.TaskIDs)
	defer s.unwatchTasks(tw)
	if want.ToolsListChanged && s.hasTools(reg) {
		got.ToolsListChanged, kinds = true, kinds|changeTools
	}
	if want.PromptsListChanged && s.hasPrompts(reg) {
		got.PromptsListChanged, kinds = true, kinds|changePrompts
	}
	if want.ResourcesListChanged && s.hasResources(reg) {
		got.ResourcesListChanged, kinds = true, kinds|changeResources
	}
	if len(want.ResourceSubscriptions) > 0 && s.hasResources(reg) {
		got.ResourceSubscriptions = append([]string(nil), want.ResourceSubscriptions...)
		sort.Strings(got.ResourceSubscriptions)
	}
	got.TaskIDs = taskIDs
	sub := s.hub.subscribe(kinds, got.ResourceSubscriptions)
	defer s.hub.unsubscribe(sub)

	idMeta := func() []byte {
		b := append([]byte(`{"`), MetaSubscriptionID...)
		b = append(b, `":`...)
		return append(append(b, r.ID...), '}')
	}()
	paramsFor := func(uri string) []byte {
		b := append([]byte(`{"_meta":`), idMeta...)
		if uri != "" {
			b = append(b, `,"uri":`...)
			b = jsonwire.AppendString(b, uri)
		}
		return append(b, '}')
	}
	gj, _ := json.Marshal(got)
	ack := append([]byte(`{"_meta":`), idMeta...)
	ack = append(append(append(ack, `,"notifications":`...), gj...), '}')
	x := r.x
	if err := x.send(ctx, jsonwire.AppendNotification(nil, "notifications/subscriptions/acknowledged", ack)); err != nil {
		return nil, nil
	}

	if isBuffered(ctx) {
		return s.endListen(r, idMeta), nil
	}
	var stop <-chan time.Time
	if dl, ok := ctx.Deadline(); ok {
		margin := time.Until(dl) / 10
		if margin > time.Second {
			margin = time.Second
		}
		t := time.NewTimer(time.Until(dl) - margin)
		defer t.Stop()
		stop = t.C
	}
	var taskWoken <-chan struct{}
	if tw != nil {
		taskWoken = tw.wake
	}
	var tick <-chan time.Time
	if s.opts.StreamKeepAlive > 0 {
		t := time.NewTicker(s.opts.StreamKeepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil, nil // the client closed the stream
		case <-tick:
			if x.comment() != nil {
				return nil, nil
			}
		case <-sub.wake:
			kinds, uris := sub.take()
			for _, msg := range changeMessages(kinds, uris, paramsFor) {
				if x.send(ctx, msg) != nil {
					return nil, nil
				}
			}
		case <-taskWoken:
			for _, msg := range s.taskMessages(tw, idMeta) {
				if x.send(ctx, msg) != nil {
					return nil, nil
				}
			}
		case <-stop:
			return s.endListen(r, idMeta), nil
		case <-s.closed:
			return s.endListen(r, idMeta), nil
		}
	}
}

// endListen is the listen result that ends a subscription gracefully.
func (s *Server) endListen(r *Request, idMeta []byte) []byte {
	b := append([]byte(`{"resultType":"complete","_meta":`), idMeta[:len(idMeta)-1]...)
	b = append(b, `,"`+MetaServerInfo+`":`...)
	b = append(b, s.implRaw...)
	return append(b, `}}`...)
}
