package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/mcpfn/mcpfn/mcp"
)

// Forward sends msg, a 2026-07-28 JSON-RPC request another client
// built (the downstream client of a proxy or bridge: a stdio host, say), to
// the endpoint as it is: its id, params and _meta (version, capabilities,
// progress token, log level) reach the server unchanged, and nothing is
// answered, retried or cached on its behalf. An input_required result is
// returned like any other, for the downstream client to answer with a
// request of its own.
//
// Forward adds what the Streamable HTTP transport carries outside the
// body (2026-07-28 basic/transports/streamable-http): MCP-Protocol-Version
// from _meta["io.modelcontextprotocol/protocolVersion"], Mcp-Method,
// Mcp-Name, and for tools/call the Mcp-Param-* headers of the tool's
// x-mcp-header declarations, learnt from the tools/list results the Conn
// saw, Forward's included, else by reading tools/list first as CallTool
// does; a -32020 answer to a tools/call refreshes the list and sends the
// request once more. The Conn's TokenSource, Options.Header,
// RequestTimeout, StreamIdleTimeout and MaxResponseBytes apply; its
// Middleware does not.
//
// Each notification of the response stream (progress, log messages, the
// notifications of subscriptions/listen) is handed to fn, in order, from
// the calling goroutine, before Forward returns; fn may be nil. Forward
// returns the result as received, or the JSON-RPC error the server
// answered as an *mcp.Error; a failure without a JSON-RPC answer is an
// *HTTPError, ErrStreamBroken (the stream ended before the response: the
// request is not sent again), or the error of ctx. Ending ctx closes the
// response stream, which cancels the request (2026-07-28
// basic/patterns/cancellation).
//
// Forward needs a 2026-07-28 Conn (Modern); on a legacy Conn, and for a
// message that is not a request or whose _meta names no protocol
// version, it fails without sending anything.
func (c *Conn) Forward(ctx context.Context, msg json.RawMessage, fn func(Notification)) (json.RawMessage, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	return c.era.forward(ctx, msg, fn)
}

// forward is Conn.Forward on a 2026-07-28 connection.
func (p *modernEra) forward(ctx context.Context, msg json.RawMessage, fn func(Notification)) (json.RawMessage, error) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, errors.New("mcp client: Forward: the message is not a JSON object")
	}
	if m.JSONRPC != "2.0" || m.Method == "" || !validID(m.ID) {
		return nil, errors.New("mcp client: Forward: the message is not a JSON-RPC request")
	}
	var ps struct {
		Name      json.RawMessage `json:"name"`
		URI       json.RawMessage `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &ps) // a malformed params is the server's to reject
	if ps.Meta.Version == "" {
		// Without it a dual-era server would take the request for a
		// 2025-03-26 one (2026-07-28 streamable-http §Protocol Version
		// Header).
		return nil, errors.New("mcp client: Forward: the request has no _meta \"" + mcp.MetaProtocolVersion + "\"")
	}
	f := &forwarded{body: msg, id: m.ID, method: m.Method, version: ps.Meta.Version}
	var target params
	switch m.Method {
	case "tools/call", "prompts/get":
		target = params{{"name", ps.Name}}
	case "resources/read":
		target = params{{"uri", ps.URI}}
	}
	f.name, f.hasName = mcpName(m.Method, target)
	if m.Method != "tools/call" || !f.hasName {
		return p.forwardOnce(ctx, f, fn)
	}
	args := ps.Arguments
	if bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = nil
	}
	r := &request{method: "tools/call", params: params{{"arguments", args}}, tool: f.name, toolCall: true}
	if err := p.toolHeaders(ctx, r); err != nil {
		return nil, err
	}
	f.header = r.header
	res, err := p.forwardOnce(ctx, f, fn)
	if err != nil && errors.Is(err, mcp.ErrHeaderMismatch) {
		// The declarations were stale: read the list again and send the
		// request once more (2026-07-28 streamable-http §Custom Headers
		// from Tool Parameters: clients SHOULD refresh and retry).
		p.decls.forgetUnlisted()
		if _, lerr := p.c.listTools(ctx, &callOptions{cacheMode: CacheRefresh}); lerr == nil {
			if err := p.toolHeaders(ctx, r); err != nil {
				return nil, err
			}
			f.header = r.header
			res, err = p.forwardOnce(ctx, f, fn)
		}
	}
	return res, err
}

// forwarded is a request Forward sends.
type forwarded struct {
	body    []byte
	id      json.RawMessage
	method  string
	version string // _meta's protocol version ("" when absent)
	name    string // the Mcp-Name value, if the method has one
	hasName bool
	header  http.Header // Mcp-Param-*
}

// forwardOnce sends f once and reads its answer.
func (p *modernEra) forwardOnce(ctx context.Context, f *forwarded, fn func(Notification)) (json.RawMessage, error) {
	c := p.c
	resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: f.body, rpc: f.method, header: f.header}, func(h http.Header) {
		h["Content-Type"] = []string{"application/json"}
		h["Accept"] = []string{acceptBoth}
		if f.version != "" {
			h["Mcp-Protocol-Version"] = []string{f.version}
		}
		h["Mcp-Method"] = []string{f.method}
		if f.hasName {
			h["Mcp-Name"] = []string{mcp.EncodeHeaderValue(f.name)}
		}
	})
	if err != nil {
		return nil, err
	}
	res, err := readForwarded(ctx, c, resp, f, fn)
	if err == nil && f.method == "tools/list" {
		p.learnPage(res)
	}
	return res, err
}

// learnPage learns the x-mcp-header declarations of a forwarded tools/list
// page (the downstream client drops invalid tools itself).
func (p *modernEra) learnPage(res json.RawMessage) {
	w, err := decodeToolsPage(res)
	if err != nil {
		return
	}
	for _, raw := range w.Tools {
		t := &mcp.Tool{}
		if t.UnmarshalJSON(raw) == nil {
			p.keepTool(t)
		}
	}
}

// readForwarded reads the answer to a forwarded request: one JSON response,
// or an SSE stream whose notifications go to fn until the response to f's
// id arrives. Server requests on the stream are ignored: a 2026-07-28
// server sends none.
func readForwarded(ctx context.Context, c *Conn, resp *http.Response, f *forwarded, fn func(Notification)) (json.RawMessage, error) {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		m, err := readJSONResponse(resp.Body, c.opts.MaxResponseBytes)
		if err != nil {
			return nil, err
		}
		return forwardedResponse(m, f, resp.StatusCode)
	case "text/event-stream":
	default:
		return nil, protocolError("response Content-Type %q", resp.Header.Get("Content-Type"))
	}
	r := newSSEReader(resp.Body, c.opts.MaxResponseBytes)
	for {
		m, err := nextStreamMessage(ctx, r)
		if err != nil {
			return nil, err
		}
		switch {
		case m.isResponse():
			if equalID(m.ID, f.id) {
				return forwardedResponse(m, f, resp.StatusCode)
			}
		case m.ID == nil:
			if fn != nil {
				fn(Notification{Method: m.Method, Params: m.Params})
			}
		}
	}
}

// forwardedResponse returns the result of a response to a forwarded
// request, or its error.
func forwardedResponse(m *wireMessage, f *forwarded, status int) (json.RawMessage, error) {
	if m.Error != nil {
		if m.ID == nil || equalID(m.ID, f.id) {
			return nil, rpcError(f.method, status, m.Error)
		}
	}
	if !equalID(m.ID, f.id) {
		return nil, protocolError("response id %.40s, want %.40s", m.ID, f.id)
	}
	return m.Result, nil
}

// equalID reports whether two raw JSON-RPC ids (strings or integers) are
// the same id: the same string, or the same integer however written.
func equalID(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if (a[0] == '"') != (b[0] == '"') {
		return false
	}
	if a[0] == '"' {
		var x, y string
		return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && x == y
	}
	x, err1 := strconv.ParseInt(string(a), 10, 64)
	y, err2 := strconv.ParseInt(string(b), 10, 64)
	return err1 == nil && err2 == nil && x == y
}
