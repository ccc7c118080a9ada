package client

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpfn/mcpfn/mcp"
)

// Notification is one server notification.
type Notification struct {
	Method string
	Params json.RawMessage
}

// listeners are the Listen calls of a legacy Conn.
type listeners struct {
	mu  sync.Mutex
	fns map[int]func(Notification)
	// uris are the resource subscriptions of each Listen call, sent again
	// when the session is replaced (they belong to the session).
	uris map[int][]string
	n    int
}

// subscriptions returns the resource URIs the Listen calls subscribed to.
func (l *listeners) subscriptions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []string
	for _, u := range l.uris {
		all = append(all, u...)
	}
	return all
}

// Listen delivers the server's change notifications to fn until ctx ends
// or the server ends the subscription. In 2026-07-28 it sends
// subscriptions/listen and reads its stream: the server's acknowledgement
// (the notifications it will send) is returned through ack before any other
// notification; Listen returns nil when the server closes the subscription
// with its result, ErrStreamBroken when the stream drops, and an error
// matching ErrTimeout when it stays silent (no event, no keep-alive) for
// Options.StreamIdleTimeout; listen again after either.
// In legacy sessions the notifications come on the session's GET stream and
// Listen returns when ctx ends; ack gets the filter unchanged. Matching
// cached results are dropped either way. fn may be called concurrently with
// other Conn methods, never concurrently with itself.
func (c *Conn) Listen(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification)) error {
	if c.isClosed() {
		return ErrClosed
	}
	if !c.modern {
		return c.listenLegacy(ctx, f, ack, fn)
	}
	fb, err := json.Marshal(f)
	if err != nil {
		return err
	}
	id := c.nextID.Add(1)
	meta := c.metaBase
	body := appendRequest(nil, id, "subscriptions/listen", params{{"notifications", fb}}, meta, true)
	resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: "subscriptions/listen"}, func(h http.Header) {
		h["Content-Type"] = []string{"application/json"}
		h["Accept"] = []string{acceptBoth}
		h["Mcp-Protocol-Version"] = []string{c.version}
		h["Mcp-Method"] = []string{"subscriptions/listen"}
	})
	if err != nil {
		return err
	}
	idRaw := strconv.FormatInt(id, 10)
	acked := false
	x := &exchange{c: c, id: id, method: "subscriptions/listen", onNote: func(m *wireMessage) bool {
		var p struct {
			Meta          map[string]json.RawMessage `json:"_meta"`
			Notifications mcp.SubscriptionFilter     `json:"notifications"`
		}
		json.Unmarshal(m.Params, &p)
		if sid, ok := p.Meta[mcp.MetaSubscriptionID]; ok && string(sid) != idRaw && string(sid) != strconv.Quote(idRaw) {
			return true // another subscription's: not ours
		}
		if m.Method == "notifications/subscriptions/acknowledged" {
			acked = true
			if ack != nil {
				ack(p.Notifications)
			}
			return true
		}
		if !acked {
			return true // nothing may precede the acknowledgement
		}
		c.dispatch(ctx, m, nil)
		if fn != nil {
			fn(Notification{Method: m.Method, Params: m.Params})
		}
		return true
	}}
	_, err = x.read(ctx, resp)
	if err != nil && ctx.Err() != nil {
		return nil // cancelling ctx closes the stream, which ends the subscription
	}
	return err
}

func (c *Conn) listenLegacy(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification)) error {
	want := map[string]bool{
		"notifications/tools/list_changed":     f.ToolsListChanged,
		"notifications/prompts/list_changed":   f.PromptsListChanged,
		"notifications/resources/list_changed": f.ResourcesListChanged,
		"notifications/resources/updated":      len(f.ResourceSubscriptions) > 0,
	}
	s := c.legacy.def
	for _, uri := range f.ResourceSubscriptions {
		if _, err := c.callLegacyIn(ctx, s, "resources/subscribe", params{{"uri", quoteJSON(uri)}}, nil, true); err != nil {
			return err
		}
	}
	if ack != nil {
		ack(f)
	}
	var mu sync.Mutex
	c.legacy.listen.mu.Lock()
	if c.legacy.listen.fns == nil {
		c.legacy.listen.fns = map[int]func(Notification){}
	}
	c.legacy.listen.n++
	key := c.legacy.listen.n
	if len(f.ResourceSubscriptions) > 0 {
		if c.legacy.listen.uris == nil {
			c.legacy.listen.uris = map[int][]string{}
		}
		c.legacy.listen.uris[key] = f.ResourceSubscriptions
	}
	c.legacy.listen.fns[key] = func(n Notification) {
		if want[n.Method] && fn != nil {
			mu.Lock()
			fn(n)
			mu.Unlock()
		}
	}
	c.legacy.listen.mu.Unlock()
	<-ctx.Done()
	c.legacy.listen.mu.Lock()
	delete(c.legacy.listen.fns, key)
	delete(c.legacy.listen.uris, key)
	c.legacy.listen.mu.Unlock()
	return nil
}

func (l *listeners) deliver(n Notification) {
	l.mu.Lock()
	fns := make([]func(Notification), 0, len(l.fns))
	for _, f := range l.fns {
		fns = append(fns, f)
	}
	l.mu.Unlock()
	for _, f := range fns {
		f(n)
	}
}
