package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// stdioMaxLine bounds one message the host writes.
const stdioMaxLine = 16 << 20

// stdioMaxInflight bounds the host's requests the bridge runs at once.
const stdioMaxInflight = 256

// stdioFlags are the flags mcpfn stdio takes (the others are refused).
var stdioFlags = map[string]bool{"mode": true, "header": true, "token": true, "oauth": true, "insecure": true, "timeout": true}

// stdioCmd is mcpfn stdio URL, which bridges the stdio transport
// (newline-delimited JSON-RPC on stdin and stdout, as desktop MCP hosts
// spawn a server: 2026-07-28 and 2025-11-25 basic/transports §stdio) to
// the Streamable HTTP server at URL, until stdin ends, so that a host that
// speaks only stdio reaches it, with the CLI's
// credentials (--token, --header, --oauth: the browser login, whose tokens
// the process keeps and refreshes). Stdout carries JSON-RPC messages only,
// one per line; diagnostics go to stderr.
//
// The bridge speaks the era the host speaks, message by message:
//
//   - A 2026-07-28 request (params._meta names the protocol version) is
//     relayed as it is (client.Conn.Forward): the bridge adds the headers
//     the HTTP transport carries outside the body (MCP-Protocol-Version,
//     Mcp-Method, Mcp-Name, Mcp-Param-*), and hands back the notifications
//     of its response stream (progress, log messages, a subscription's) and
//     the response, input_required results included: the host runs the
//     multi round-trip itself. The host's notifications/cancelled closes
//     the request's stream, which is cancellation over HTTP. The server
//     must speak 2026-07-28: a server that speaks only the 2025 revisions
//     gets no modern request, and the host's server/discover probe gets
//     -32601, after which a dual-era host falls back to initialize.
//   - initialize starts a 2025 session on stdio, which the bridge serves
//     with a client.Conn built from the host's initialize: its client info,
//     version, and handlers for the capabilities the host declared, which
//     ask the host (elicitation/create, sampling/createMessage, roots/list
//     as bridge requests on stdout) and wait for its answer. When the
//     server serves the 2025 revisions (its server/discover lists one, or it
//     is a 2025 server), the Conn is a 2025 session of the same version:
//     the server's requests on a POST's SSE stream and on the GET stream
//     reach the host, its notifications too, and EOF ends the session with
//     DELETE. When the server speaks only 2026-07-28, the bridge translates:
//     input_required results are answered by asking the host, the
//     initialize result is made from server/discover, logging/setLevel
//     sets the level of later requests, resources/subscribe and the
//     listChanged notifications go through subscriptions/listen, ping is
//     answered by the bridge, and results lose their 2026-only members
//     (resultType, ttlMs, cacheScope, a structuredContent or outputSchema
//     that is not an object).
//
// --mode modern sends no probe and translates for a 2025 host; --mode
// legacy sends no 2026-07-28 request. --timeout bounds each request.
//
// A line longer than the bound gets -32600 and invalid JSON -32700, both
// without an id (the bridge keeps serving); EOF on stdin cancels what is
// in flight, ends the session and exits 0. docs/client.md ("The stdio
// bridge") says why, and what does not cross.
func stdioCmd(ctx context.Context, cfg *config, e *env, stderr io.Writer, bad func(string) int) int {
	for f := range cfg.set {
		if !stdioFlags[f] {
			return bad("--" + f + " is not a flag of stdio")
		}
	}
	if len(cfg.args) != 2 {
		return bad("stdio takes one URL")
	}
	endpoint := cfg.args[1]
	if _, err := checkEndpoint(endpoint); err != nil {
		return bad(err.Error())
	}
	if cfg.oauth && cfg.token != "" {
		return bad("--oauth and --token exclude each other")
	}
	if (cfg.token != "" || cfg.header.Get("Authorization") != "") && !cfg.insecure && cleartextRemote(endpoint) {
		return bad("refusing to send a credential over plain http to " + endpoint + ": use https, or --insecure")
	}
	b := &bridge{
		url:     endpoint,
		mode:    cfg.mode,
		out:     &lineWriter{w: e.stdout},
		log:     stderr,
		maxLine: stdioMaxLine,
		base: client.Options{Header: cfg.header, ClientInfo: clientInfo, CacheEntries: -1,
			Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))},
	}
	// --timeout bounds each request here, not the process: a bridge lives
	// as long as its host.
	if cfg.set["timeout"] {
		b.timeout = cfg.timeout
	}
	switch {
	case cfg.token != "":
		b.base.TokenSource = client.StaticToken(cfg.token)
	case cfg.oauth:
		if OAuth == nil {
			return bad("--oauth is not available in this build")
		}
		ts, err := OAuth(ctx, endpoint, stderr)
		if err != nil {
			return failure(stderr, err)
		}
		b.base.TokenSource = ts
	}
	return b.serve(ctx, e.stdin)
}

// bridge is one run of mcpfn stdio.
type bridge struct {
	url     string
	mode    client.Mode
	base    client.Options // what every Client of the bridge shares
	timeout time.Duration  // per request; 0: none
	out     *lineWriter
	log     io.Writer
	maxLine int

	mu       sync.Mutex
	inflight map[string]*hostCall    // the host's requests, by id key
	pending  map[int64]chan *message // the bridge's requests to the host, by id
	nextID   int64

	// probe is the server's era, found once (probeConn).
	probeMu sync.Mutex
	probe   *client.Conn

	// sess is the 2025 session of the host, once it sent initialize.
	sess atomic.Pointer[session]

	wg sync.WaitGroup
}

// hostCall is a request of the host in flight.
type hostCall struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // by the host: its response is not sent
}

// message is any JSON-RPC message, as the host sent it.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *mcp.Error      `json:"error"`
}

// serve reads the host's messages until stdin ends (or ctx does), then
// cancels what is in flight and ends the session.
func (b *bridge) serve(ctx context.Context, in io.Reader) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.inflight, b.pending = map[string]*hostCall{}, map[int64]chan *message{}
	b.out.onErr = cancel // the host is gone
	lines := make(chan []byte)
	tooLong := []byte{}
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, long, err := readLine(r, b.maxLine)
			if long {
				line = tooLong
			}
			if len(line) > 0 || long {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	fmt.Fprintf(b.log, "mcpfn: stdio: bridging to %s\n", b.url)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case line, ok := <-lines:
			if !ok {
				break loop
			}
			if len(line) == 0 {
				b.out.write(errorMessage(nil, mcp.CodeInvalidRequest, fmt.Sprintf("Invalid Request: message larger than %d bytes", b.maxLine), nil))
				continue
			}
			b.handleLine(ctx, line)
		}
	}
	cancel()
	b.wg.Wait()
	if s := b.sess.Load(); s != nil {
		s.close()
	}
	if b.out.failed() {
		return exitFailure
	}
	return exitOK
}

// readLine reads one line of at most max bytes, without its line end. A
// longer line is read to its end and dropped: long reports it.
func readLine(r *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !long {
			if len(line)+len(frag) > max+2 { // the line end does not count
				long, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long {
			return nil, true, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > max {
			return nil, true, err
		}
		return bytes.TrimSpace(line), false, err
	}
}

// handleLine handles one line: a message, or a batch (2025-03-26).
func (b *bridge) handleLine(ctx context.Context, line []byte) {
	if !json.Valid(line) {
		b.out.write(errorMessage(nil, mcp.CodeParseError, "Parse error", nil))
		return
	}
	if line[0] != '[' {
		b.handle(ctx, line, b.out.write)
		return
	}
	var batch []json.RawMessage
	json.Unmarshal(line, &batch)
	if len(batch) == 0 {
		b.out.write(errorMessage(nil, mcp.CodeInvalidRequest, "Invalid Request: empty batch", nil))
		return
	}
	// The responses of a batch go back as one array, once all are in
	// (JSON-RPC 2.0 §6); notifications and responses in it get none.
	col := &collector{out: b.out}
	for _, m := range batch {
		if wantsReply(m) {
			col.n++
		}
	}
	for _, m := range batch {
		if wantsReply(m) {
			b.handle(ctx, m, col.add)
		} else {
			b.handle(ctx, m, func([]byte) {})
		}
	}
}

// wantsReply reports whether a batch element gets an element in the
// batch's answer: anything but a notification or a response.
func wantsReply(raw json.RawMessage) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return true
	}
	notification := m.Method != "" && (m.ID == nil || string(m.ID) == "null")
	response := m.Method == "" && m.ID != nil && (m.Result != nil || m.Error != nil)
	return !notification && !response
}

// collector gathers the responses of a batch.
type collector struct {
	out  *lineWriter
	n    int
	mu   sync.Mutex
	msgs []json.RawMessage
	got  int
}

// add takes one response (nil for one that is not sent).
func (c *collector) add(msg []byte) {
	c.mu.Lock()
	c.got++
	if msg != nil {
		c.msgs = append(c.msgs, msg)
	}
	done := c.got == c.n
	c.mu.Unlock()
	if done && len(c.msgs) > 0 {
		b, _ := json.Marshal(c.msgs)
		c.out.write(b)
	}
}

// handle handles one message; reply sends the response to a request (nil:
// none).
func (b *bridge) handle(ctx context.Context, raw json.RawMessage, reply func([]byte)) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil || m.JSONRPC != "2.0" {
		reply(errorMessage(nil, mcp.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message", nil))
		return
	}
	if bytes.Equal(m.ID, []byte("null")) {
		m.ID = nil
	}
	if m.ID != nil && !validID(m.ID) {
		reply(errorMessage(nil, mcp.CodeInvalidRequest, "Invalid Request: an id is a string or an integer", nil))
		return
	}
	switch {
	case m.Method == "" && m.ID != nil && (m.Result != nil || m.Error != nil):
		b.answered(&m)
	case m.Method == "":
		reply(errorMessage(m.ID, mcp.CodeInvalidRequest, "Invalid Request: no method", nil))
	case m.ID == nil:
		b.notified(ctx, &m)
	default:
		b.request(ctx, raw, &m, reply)
	}
}

// validID reports whether raw is a JSON string or integer.
func validID(raw json.RawMessage) bool {
	if raw[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// idKey is the key of a request id: strings and integers apart, an integer
// however written.
func idKey(id json.RawMessage) string {
	if id[0] == '"' {
		var s string
		json.Unmarshal(id, &s)
		return "s" + s
	}
	n, _ := strconv.ParseInt(string(id), 10, 64)
	return "n" + strconv.FormatInt(n, 10)
}

// modernMeta reports whether a request carries the 2026-07-28 _meta: a
// protocol version (2026-07-28 basic/index §_meta).
func modernMeta(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	return p.Meta.Version != ""
}

// request runs one request of the host.
func (b *bridge) request(ctx context.Context, raw json.RawMessage, m *message, reply func([]byte)) {
	if m.Method == "initialize" && !modernMeta(m.Params) {
		// The handshake runs before anything else is read: until it is
		// answered the host sends nothing but ping (2025-11-25
		// basic/lifecycle §Initialization).
		reply(b.initialize(ctx, m))
		if s := b.sess.Load(); s != nil {
			s.start()
		}
		return
	}
	key := idKey(m.ID)
	b.mu.Lock()
	if _, dup := b.inflight[key]; dup {
		b.mu.Unlock()
		// Without an id: the host's request in flight keeps its own.
		reply(errorMessage(nil, mcp.CodeInvalidRequest, "Invalid Request: the id "+string(m.ID)+" is that of a request in flight", nil))
		return
	}
	if len(b.inflight) >= stdioMaxInflight {
		b.mu.Unlock()
		reply(errorMessage(m.ID, mcp.CodeInternalError, fmt.Sprintf("Internal error: more than %d requests in flight", stdioMaxInflight), nil))
		return
	}
	var rctx context.Context
	var cancel context.CancelFunc
	if b.timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, b.timeout)
	} else {
		rctx, cancel = context.WithCancel(ctx)
	}
	hc := &hostCall{cancel: cancel}
	b.inflight[key] = hc
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer cancel()
		var res json.RawMessage
		var err error
		note := func(n client.Notification) {
			if !hc.cancelled.Load() {
				b.out.write(notificationMessage(n.Method, n.Params))
			}
		}
		s := b.sess.Load()
		switch {
		case modernMeta(m.Params):
			res, err = b.forward(rctx, raw, m, note)
		case s != nil:
			res, err = s.call(rctx, m)
		case m.Method == "ping":
			res = json.RawMessage(`{}`) // before initialize, ping is allowed
		default:
			err = mcp.NewError(mcp.CodeInvalidParams, "Invalid params: a request carries _meta "+
				strconv.Quote(mcp.MetaProtocolVersion)+" (2026-07-28), or follows initialize (2025)")
		}
		b.mu.Lock()
		delete(b.inflight, key)
		b.mu.Unlock()
		if hc.cancelled.Load() || ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Cancelled by the host: no response (basic/patterns/
			// cancellation); or by the end of the bridge (EOF).
			reply(nil)
			return
		}
		if err != nil {
			reply(b.errorReply(rctx, m, err))
			return
		}
		reply(resultMessage(m.ID, res))
	}()
}

// errorReply is the response carrying err.
func (b *bridge) errorReply(ctx context.Context, m *message, err error) []byte {
	var re *mcp.Error
	if errors.As(err, &re) {
		return errorMessage(m.ID, re.Code, re.Message, re.Data)
	}
	if ctx.Err() == context.DeadlineExceeded && b.timeout > 0 {
		err = fmt.Errorf("timed out after %v (--timeout): %w", b.timeout, err)
	}
	// A failure of the bridge or of HTTP: no JSON-RPC error of the
	// server's, so an internal error with the cause.
	fmt.Fprintf(b.log, "mcpfn: stdio: %s: %s\n", oneLine(m.Method), oneLine(err.Error()))
	return errorMessage(m.ID, mcp.CodeInternalError, "Internal error: "+err.Error(), nil)
}

// forward relays a 2026-07-28 request.
func (b *bridge) forward(ctx context.Context, raw json.RawMessage, m *message, note func(client.Notification)) (json.RawMessage, error) {
	c, err := b.probeConn(ctx)
	if err != nil {
		return nil, err
	}
	if !c.Modern() {
		// A 2025 server: answered as a 2025 stdio server answers what it
		// does not know, so that the host falls back to initialize
		// (2026-07-28 basic/transports/stdio §Backward Compatibility).
		if m.Method == "server/discover" {
			return nil, mcp.NewError(mcp.CodeMethodNotFound, "Method not found: the server speaks only the 2025 revisions (initialize)")
		}
		return nil, mcp.NewError(mcp.CodeInvalidRequest, "Invalid Request: the server speaks only the 2025 revisions: send initialize")
	}
	return c.Forward(ctx, raw, note)
}

// probeConn returns a connection that tells the server's era: modern with
// the server/discover result (Forward relays on it), or a 2025 one without
// a session. It asks the server once (ModeAuto), or not at all.
func (b *bridge) probeConn(ctx context.Context) (*client.Conn, error) {
	b.probeMu.Lock()
	defer b.probeMu.Unlock()
	if b.probe != nil {
		return b.probe, nil
	}
	o := b.base
	o.Mode, o.NoInitialize = b.mode, true
	if b.mode == client.ModeLegacy {
		o.Mode = client.ModeLegacy // NoInitialize: no request
	}
	c, err := client.Connect(ctx, b.url, &o)
	if err != nil {
		return nil, err
	}
	if c.Modern() {
		fmt.Fprintf(b.log, "mcpfn: stdio: the server speaks %s\n", c.ProtocolVersion())
	} else {
		fmt.Fprintln(b.log, "mcpfn: stdio: the server speaks the 2025 revisions only")
	}
	b.probe = c
	return c, nil
}

// notified handles a notification of the host.
func (b *bridge) notified(ctx context.Context, m *message) {
	switch m.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 || !validID(p.RequestID) {
			return
		}
		b.mu.Lock()
		hc := b.inflight[idKey(p.RequestID)]
		b.mu.Unlock()
		if hc != nil {
			hc.cancelled.Store(true)
			hc.cancel()
		}
	case "notifications/initialized":
		if s := b.sess.Load(); s != nil {
			s.initialized()
		}
	}
	// Other notifications of the host (notifications/roots/list_changed,
	// notifications/progress) have no way to the server through the
	// client: they are dropped.
}

// answered hands the host's response to the request of the bridge that
// waits for it.
func (b *bridge) answered(m *message) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	b.mu.Lock()
	ch := b.pending[id]
	delete(b.pending, id)
	b.mu.Unlock()
	if err != nil || ch == nil {
		fmt.Fprintf(b.log, "mcpfn: stdio: a response to no request of the bridge (id %s)\n", oneLine(string(m.ID)))
		return
	}
	ch <- m
}

// ask sends a request to the host and waits for its answer: the result,
// or its error as an *mcp.Error. When ctx ends first the host is told with
// notifications/cancelled.
func (b *bridge) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	ch := make(chan *message, 1)
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.pending[id] = ch
	b.mu.Unlock()
	idRaw := json.RawMessage(strconv.FormatInt(id, 10))
	req, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", idRaw, method, params})
	b.out.write(req)
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		cp, _ := json.Marshal(map[string]any{"requestId": id, "reason": ctx.Err().Error()})
		b.out.write(notificationMessage("notifications/cancelled", cp))
		return nil, ctx.Err()
	}
}

// resultMessage, errorMessage and notificationMessage encode messages for
// the host.
func resultMessage(id, result json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id, result})
	return b
}

func errorMessage(id json.RawMessage, code int, msg string, data json.RawMessage) []byte {
	type errObj struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Error   errObj          `json:"error"`
	}{"2.0", id, errObj{code, msg, data}})
	return b
}

func notificationMessage(method string, params json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", method, params})
	return b
}

// lineWriter writes one message per line to the host, whole messages at a
// time from any goroutine. Messages are compacted: a server's JSON may
// hold line breaks between tokens, which stdio forbids (basic/transports
// §stdio: messages MUST NOT contain embedded newlines).
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	buf   bytes.Buffer
	err   error
	onErr func()
}

func (l *lineWriter) write(msg []byte) {
	if msg == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.buf.Reset()
	if err := json.Compact(&l.buf, msg); err != nil {
		return // not JSON: never written
	}
	l.buf.WriteByte('\n')
	if _, err := l.w.Write(l.buf.Bytes()); err != nil {
		l.err = err
		if l.onErr != nil {
			l.onErr()
		}
	}
}

func (l *lineWriter) failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err != nil
}
