package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// session is the 2025 session a host opened on stdio with initialize (see
// stdio.go), served by a client.Conn: a 2025 session with the server, or,
// when the server speaks only 2026-07-28, a modern Conn the bridge
// translates for.
type session struct {
	b *bridge
	// version is the protocol version agreed with the host.
	version string
	// modern: the server speaks only 2026-07-28; the bridge translates.
	modern    bool
	discovery *client.Discovery // modern: what server/discover said
	opts      client.Options    // the Conn's, kept for logging/setLevel
	conn      atomic.Pointer[client.Conn]

	// ready is closed by the host's notifications/initialized: requests
	// to the host wait for it (2025-11-25 basic/lifecycle §Initialization).
	ready     chan struct{}
	readyOnce sync.Once

	mu sync.Mutex
	// started: the initialize response was written; notifications that
	// come before it wait in early (at most maxEarly).
	started bool
	early   [][]byte

	// The subscription of a modern session (subscriptions/listen) that
	// carries the listChanged notifications and resources/subscribe.
	lmu        sync.Mutex
	filter     mcp.SubscriptionFilter // the listChanged part
	uris       []string
	stopListen context.CancelFunc
	listenDone chan struct{}
}

// maxEarly bounds the notifications kept until initialize is answered.
const maxEarly = 64

// hostInit is the part of the host's initialize params the bridge reads.
type hostInit struct {
	ProtocolVersion string `json:"protocolVersion"`
	Capabilities    struct {
		Elicitation *struct {
			URL json.RawMessage `json:"url"`
		} `json:"elicitation"`
		Sampling json.RawMessage `json:"sampling"`
		Roots    json.RawMessage `json:"roots"`
	} `json:"capabilities"`
	ClientInfo mcp.Implementation `json:"clientInfo"`
}

// legacyVersions are the 2025 revisions the bridge serves, newest first.
var legacyVersions = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326}

func isLegacyVersion(v string) bool {
	for _, l := range legacyVersions {
		if v == l {
			return true
		}
	}
	return false
}

// present reports whether a capability was declared (a member that is
// neither absent nor null).
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// initialize answers the host's initialize: it connects to the server in
// the era that serves the host (see stdio.go) and returns the response.
func (b *bridge) initialize(ctx context.Context, m *message) []byte {
	if b.sess.Load() != nil {
		return errorMessage(m.ID, mcp.CodeInvalidRequest, "Invalid Request: initialize was sent already", nil)
	}
	var p hostInit
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return errorMessage(m.ID, mcp.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
	}
	// Version negotiation (2025-11-25 basic/lifecycle): the host's version
	// if the bridge speaks it, else its newest.
	s := &session{b: b, version: p.ProtocolVersion, ready: make(chan struct{})}
	if !isLegacyVersion(s.version) {
		s.version = legacyVersions[0]
	}
	o := b.base
	o.Mode = b.mode
	if p.ClientInfo.Name != "" {
		o.ClientInfo = p.ClientInfo
	}
	o.LegacyVersion = s.version
	o.Notification = s.notification
	if p.Capabilities.Elicitation != nil {
		o.Elicitation = s.elicit
		o.ElicitationURL = present(p.Capabilities.Elicitation.URL)
		o.ElicitationDefaults = true
	}
	if present(p.Capabilities.Sampling) {
		o.Sampling = s.sample
	}
	if present(p.Capabilities.Roots) {
		o.Roots = s.roots
	}
	s.opts = o

	legacy := b.mode == client.ModeLegacy
	if !legacy {
		pc, err := b.probeConn(ctx)
		if err != nil {
			return b.errorReply(ctx, m, err)
		}
		d := pc.Discovery()
		if pc.Modern() && d == nil {
			if d, err = pc.Discover(ctx, nil); err != nil {
				return b.errorReply(ctx, m, err)
			}
		}
		// The host's era when the server serves it: a 2025 server, or a
		// dual-era one that lists a 2025 revision (unless --mode modern).
		legacy = !pc.Modern() || b.mode == client.ModeAuto && listsLegacy(d.SupportedVersions)
		s.discovery = d
	}
	var res json.RawMessage
	if legacy {
		c, err := client.New(&o).InitializeLegacy(ctx, b.url)
		if err != nil {
			return b.errorReply(ctx, m, err)
		}
		s.version = c.ProtocolVersion()
		res = c.InitializeResult().Raw
		s.conn.Store(c)
		fmt.Fprintf(b.log, "mcpfn: stdio: a %s session for the host\n", s.version)
	} else {
		c, err := client.New(&o).Adopt(s.discovery)
		if err != nil {
			return b.errorReply(ctx, m, err)
		}
		s.modern = true
		res = s.initializeResult()
		s.conn.Store(c)
		fmt.Fprintf(b.log, "mcpfn: stdio: the host speaks %s, the server %s: translating\n", s.version, c.ProtocolVersion())
	}
	b.sess.Store(s)
	return resultMessage(m.ID, res)
}

func listsLegacy(versions []string) bool {
	for _, v := range versions {
		if isLegacyVersion(v) {
			return true
		}
	}
	return false
}

// initializeResult is the InitializeResult a modern server's
// server/discover makes: its capabilities without the 2026-only
// extensions, its server info and instructions.
func (s *session) initializeResult() json.RawMessage {
	d := s.discovery
	var w struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(d.Raw, &w)
	if w.Capabilities == nil {
		w.Capabilities = map[string]json.RawMessage{}
	}
	delete(w.Capabilities, "extensions")
	info := mcp.Implementation{Name: "mcpfn-stdio", Version: moduleVersion()}
	if d.ServerInfo != nil {
		info = *d.ServerInfo
	}
	if t := d.Capabilities.Tools; t != nil {
		s.filter.ToolsListChanged = t.ListChanged
	}
	if p := d.Capabilities.Prompts; p != nil {
		s.filter.PromptsListChanged = p.ListChanged
	}
	if r := d.Capabilities.Resources; r != nil {
		s.filter.ResourcesListChanged = r.ListChanged
	}
	b, _ := json.Marshal(struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      mcp.Implementation         `json:"serverInfo"`
		Instructions    string                     `json:"instructions,omitempty"`
	}{s.version, w.Capabilities, info, d.Instructions})
	return b
}

// start lets notifications go to the host, those that came early first:
// the initialize response has been written.
func (s *session) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	for _, n := range s.early {
		s.b.out.write(n)
	}
	s.early = nil
}

// initialized is the host's notifications/initialized: requests to the
// host may go, and a modern session starts its subscription.
func (s *session) initialized() {
	s.readyOnce.Do(func() {
		close(s.ready)
		if s.modern {
			s.relisten()
		}
	})
}

// close ends the session: its subscription, and the server session
// (DELETE).
func (s *session) close() {
	s.lmu.Lock()
	if s.stopListen != nil {
		s.stopListen()
		<-s.listenDone
		s.stopListen = nil
	}
	s.lmu.Unlock()
	if err := s.conn.Load().Close(); err != nil {
		fmt.Fprintln(s.b.log, "mcpfn: stdio: ending the session:", oneLine(err.Error()))
	}
}

// notification is Options.Notification: a server notification to the
// host. notifications/cancelled names an id of the server's that the host
// never saw (the client answers the server's requests), so it is dropped.
func (s *session) notification(method string, params json.RawMessage) {
	if method == "notifications/cancelled" {
		return
	}
	msg := notificationMessage(method, params)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		if len(s.early) < maxEarly {
			s.early = append(s.early, msg)
		}
		return
	}
	s.b.out.write(msg)
}

// call runs a request of the host in the session.
func (s *session) call(ctx context.Context, m *message) (json.RawMessage, error) {
	if present(m.Params) && m.Params[0] != '{' {
		return nil, mcp.NewError(mcp.CodeInvalidParams, "Invalid params: params must be an object")
	}
	var opts *client.CallOptions
	if tok := progressToken(m.Params); tok != nil {
		opts = &client.CallOptions{Progress: func(p client.Progress) { s.progress(tok, p) }}
	}
	c := s.conn.Load()
	if !s.modern {
		return c.Call(ctx, m.Method, m.Params, opts)
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		URI       string          `json:"uri"`
		Level     string          `json:"level"`
	}
	if present(m.Params) {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, mcp.NewError(mcp.CodeInvalidParams, "Invalid params: "+err.Error())
		}
	}
	// What 2026-07-28 removed, done by the bridge.
	switch m.Method {
	case "ping":
		return json.RawMessage(`{}`), nil
	case "logging/setLevel":
		if !validLevel(p.Level) {
			return nil, mcp.NewError(mcp.CodeInvalidParams, "Invalid params: unknown log level "+strconv.Quote(p.Level))
		}
		return json.RawMessage(`{}`), s.setLevel(mcp.LoggingLevel(p.Level))
	case "resources/subscribe", "resources/unsubscribe":
		if p.URI == "" {
			return nil, mcp.NewError(mcp.CodeInvalidParams, "Invalid params: uri is required")
		}
		return json.RawMessage(`{}`), s.subscribe(ctx, p.URI, m.Method == "resources/subscribe")
	case "tools/call":
		// CallTool sends the Mcp-Param-* headers of the tool's
		// x-mcp-header declarations; Call would not.
		var raw json.RawMessage
		args := any(nil)
		if present(p.Arguments) {
			args = p.Arguments
		}
		if _, err := c.CallTool(ctx, p.Name, args, withRaw(opts, &raw)); err != nil {
			return nil, err
		}
		return legacyResult(m.Method, raw), nil
	}
	res, err := c.Call(ctx, m.Method, m.Params, opts)
	if err != nil {
		return nil, err
	}
	return legacyResult(m.Method, res), nil
}

// progressToken returns the request's _meta.progressToken, or nil.
func progressToken(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	if !present(p.Meta.ProgressToken) {
		return nil
	}
	return p.Meta.ProgressToken
}

// progress sends a progress notification with the host's token.
func (s *session) progress(tok json.RawMessage, p client.Progress) {
	b, _ := json.Marshal(struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total,omitempty"`
		Message  string          `json:"message,omitempty"`
	}{tok, p.Progress, p.Total, p.Message})
	s.notification("notifications/progress", b)
}

// legacyResult drops from a 2026-07-28 result what a 2025 host must not
// see (WIRE §15 item 5): resultType and the cache hints, a
// structuredContent that is not an object, and in a tools/list result
// the outputSchema of a tool whose structured content is not an object.
func legacyResult(method string, res json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(res, &m) != nil {
		return res
	}
	delete(m, "resultType")
	delete(m, "ttlMs")
	delete(m, "cacheScope")
	if sc, ok := m["structuredContent"]; ok && (len(sc) == 0 || sc[0] != '{') {
		delete(m, "structuredContent")
	}
	if method == "tools/list" {
		var tools []map[string]json.RawMessage
		if json.Unmarshal(m["tools"], &tools) == nil {
			for _, t := range tools {
				var os struct {
					Type json.RawMessage `json:"type"`
				}
				if raw, ok := t["outputSchema"]; ok && (json.Unmarshal(raw, &os) != nil || string(os.Type) != `"object"`) {
					delete(t, "outputSchema")
				}
			}
			m["tools"], _ = json.Marshal(tools)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return res
	}
	return b
}

// setLevel is logging/setLevel in a modern session: later requests carry
// the level (io.modelcontextprotocol/logLevel), through a new Conn.
func (s *session) setLevel(level mcp.LoggingLevel) error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	s.opts.LogLevel = level
	c, err := client.New(&s.opts).Adopt(s.discovery)
	if err != nil {
		return err
	}
	s.conn.Store(c)
	return nil
}

// waitReady waits for the host's notifications/initialized.
func (s *session) waitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// elicit is Options.Elicitation: the host is asked with
// elicitation/create.
func (s *session) elicit(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	p := map[string]any{"message": req.Message}
	if req.Mode == "url" {
		id := req.ElicitationID
		if id == "" {
			// 2025-11-25 requires an elicitationId in URL mode; a
			// 2026-07-28 input request has none.
			s.b.mu.Lock()
			s.b.nextID++
			id = "mcpfn-stdio-" + strconv.FormatInt(s.b.nextID, 10)
			s.b.mu.Unlock()
		}
		p["mode"], p["url"], p["elicitationId"] = "url", req.URL, id
	} else {
		p["requestedSchema"] = req.RequestedSchema
		if s.version == mcp.ProtocolVersion20251125 {
			p["mode"] = "form" // the mode member came with 2025-11-25
		}
	}
	pb, _ := json.Marshal(p)
	res, err := s.b.ask(ctx, "elicitation/create", pb)
	if err != nil {
		return nil, err
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("the host's elicitation result: %w", err)
	}
	return &r, nil
}

// sample is Options.Sampling: the host is asked with
// sampling/createMessage.
func (s *session) sample(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	return s.b.ask(ctx, "sampling/createMessage", params)
}

// roots is Options.Roots: the host is asked with roots/list.
func (s *session) roots(ctx context.Context) ([]mcp.Root, error) {
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	res, err := s.b.ask(ctx, "roots/list", json.RawMessage(`{}`))
	if err != nil {
		return nil, err
	}
	var r struct {
		Roots []mcp.Root `json:"roots"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("the host's roots/list result: %w", err)
	}
	return r.Roots, nil
}

// subscribe adds (on) or removes a resource of the modern session's
// subscription, and waits until the server acknowledged the new one.
func (s *session) subscribe(ctx context.Context, uri string, on bool) error {
	s.lmu.Lock()
	i := -1
	for j, u := range s.uris {
		if u == uri {
			i = j
		}
	}
	switch {
	case on && i < 0:
		s.uris = append(s.uris, uri)
	case !on && i >= 0:
		s.uris = append(s.uris[:i], s.uris[i+1:]...)
	default:
		s.lmu.Unlock()
		return nil
	}
	s.lmu.Unlock()
	first := s.relisten()
	if first == nil {
		return nil
	}
	select {
	case err := <-first:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// relisten (re)starts the modern session's subscription (2026-07-28
// basic/patterns/subscriptions) with the listChanged notifications the
// server declared and the subscribed resources: its notifications reach
// the host through Options.Notification. A subscription that ends is
// started again, after a pause that doubles up to 30 s. The returned
// channel gets the first attempt's outcome: nil once acknowledged, or its
// error; it is nil when nothing is to be listened to.
func (s *session) relisten() <-chan error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if s.stopListen != nil {
		s.stopListen()
		<-s.listenDone
		s.stopListen = nil
	}
	f := s.filter
	f.ResourceSubscriptions = append([]string(nil), s.uris...)
	if !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.stopListen, s.listenDone = cancel, done
	first := make(chan error, 1)
	var once sync.Once
	report := func(err error) { once.Do(func() { first <- err }) }
	go func() {
		defer close(done)
		delay := time.Second
		for {
			began := time.Now()
			err := s.conn.Load().Listen(ctx, f, func(mcp.SubscriptionFilter) { report(nil) }, nil)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				report(err)
				fmt.Fprintf(s.b.log, "mcpfn: stdio: subscriptions/listen: %s; listening again in %v\n", oneLine(err.Error()), delay)
			}
			if time.Since(began) > time.Minute {
				delay = time.Second
			}
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			delay = min(2*delay, 30*time.Second)
		}
	}()
	return first
}

// withRaw returns opts with RawResult set to raw.
func withRaw(opts *client.CallOptions, raw *json.RawMessage) *client.CallOptions {
	o := client.CallOptions{}
	if opts != nil {
		o = *opts
	}
	o.RawResult = raw
	return &o
}
