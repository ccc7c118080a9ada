// Package mcptest is a small MCP client for tests: it sends 2026-07-28
// requests with their _meta and mirrored headers, runs the legacy
// initialize handshake, reads JSON and SSE responses, and answers
// server-to-client requests that arrive on a legacy call's stream.
package mcptest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// Modern is the revision of Client.Call.
const Modern = "2026-07-28"

// Client talks to one MCP endpoint.
type Client struct {
	URL  string
	HTTP *http.Client // nil means http.DefaultClient
	// Caps are the client capabilities sent with modern requests (nil: {}).
	Caps map[string]any
	// Header is added to every request (e.g. Authorization).
	Header http.Header

	// Legacy state, set by Initialize.
	SessionID string
	Version   string

	ids atomic.Int64
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Response is what one POST returned.
type Response struct {
	Status int
	Header http.Header
	// SSE reports whether the body was an event stream.
	SSE bool
	// Messages are the JSON-RPC messages of the body, in order (one for a
	// JSON body).
	Messages []json.RawMessage
	// Result and Error come from the response to the request.
	Result json.RawMessage
	Error  *RPCError
	// Notifications are the notifications that preceded the response.
	Notifications []json.RawMessage
	// ServerRequests are the server-to-client requests seen on the stream.
	ServerRequests []json.RawMessage
}

// Decode unmarshals the result into v.
func (r *Response) Decode(v any) error {
	if r.Error != nil {
		return r.Error
	}
	return json.Unmarshal(r.Result, v)
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// NextID returns a fresh request id.
func (c *Client) NextID() int64 { return c.ids.Add(1) }

// Call sends a 2026-07-28 request: params (nil for none) get the required
// _meta (merged with any _meta already in params), and the request gets
// MCP-Protocol-Version, Mcp-Method and, for tools/call, prompts/get and
// resources/read, Mcp-Name. extra headers override the computed ones.
func (c *Client) Call(ctx context.Context, method string, params map[string]any, extra http.Header) (*Response, error) {
	if params == nil {
		params = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta["io.modelcontextprotocol/protocolVersion"]; !ok {
		meta["io.modelcontextprotocol/protocolVersion"] = Modern
	}
	if _, ok := meta["io.modelcontextprotocol/clientCapabilities"]; !ok {
		caps := c.Caps
		if caps == nil {
			caps = map[string]any{}
		}
		meta["io.modelcontextprotocol/clientCapabilities"] = caps
	}
	params["_meta"] = meta
	h := http.Header{}
	h.Set("MCP-Protocol-Version", fmt.Sprint(meta["io.modelcontextprotocol/protocolVersion"]))
	h.Set("Mcp-Method", method)
	switch method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", EncodeHeader(fmt.Sprint(params["name"])))
	case "resources/read":
		h.Set("Mcp-Name", EncodeHeader(fmt.Sprint(params["uri"])))
	}
	for k, v := range extra {
		h[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.NextID(), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	return c.Post(ctx, body, h, nil)
}

// EncodeHeader encodes a mirrored header value as clients must.
func EncodeHeader(v string) string {
	plain := v == strings.TrimSpace(v) && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
	for i := 0; plain && i < len(v); i++ {
		plain = v[i] >= 0x20 && v[i] < 0x7f
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// Answerer answers a server-to-client request (legacy): it returns the
// result, or an error to send as a JSON-RPC error.
type Answerer func(method string, params json.RawMessage) (any, error)

// Post sends a raw body with headers (plus Content-Type, Accept, the
// session id and c.Header) and reads the whole response. Server-to-client
// requests on an SSE stream are answered with answer (if not nil) by
// POSTing the response, as legacy clients do.
func (c *Client) Post(ctx context.Context, body []byte, h http.Header, answer Answerer) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.SessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.SessionID)
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &Response{Status: resp.StatusCode, Header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.SSE = true
		err = ReadSSE(resp.Body, func(data []byte) error {
			return c.collect(ctx, r, data, answer)
		})
		return r, err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) > 0 {
		if err := c.collect(ctx, r, b, answer); err != nil {
			return r, err
		}
	}
	return r, nil
}

// collect files one message of a response.
func (c *Client) collect(ctx context.Context, r *Response, data []byte, answer Answerer) error {
	msg := json.RawMessage(append([]byte(nil), data...))
	r.Messages = append(r.Messages, msg)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("mcptest: message is not JSON: %q", data)
	}
	switch {
	case m.Method != "" && m.ID != nil:
		r.ServerRequests = append(r.ServerRequests, msg)
		if answer != nil {
			res, aerr := answer(m.Method, m.Params)
			var out map[string]any
			if aerr != nil {
				out = map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": aerr.Error()}}
			} else {
				out = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res}
			}
			b, _ := json.Marshal(out)
			h := http.Header{}
			if c.Version != "" && c.Version != "2025-03-26" {
				h.Set("MCP-Protocol-Version", c.Version)
			}
			ar, err := c.Post(ctx, b, h, nil)
			if err != nil {
				return err
			}
			if ar.Status != http.StatusAccepted {
				return fmt.Errorf("mcptest: posting the answer: HTTP %d", ar.Status)
			}
		}
	case m.Method != "":
		r.Notifications = append(r.Notifications, msg)
	default:
		r.Result, r.Error = m.Result, m.Error
	}
	return nil
}

// Initialize runs the legacy handshake (initialize, then
// notifications/initialized) and keeps the session id and version.
func (c *Client) Initialize(ctx context.Context, version string, caps map[string]any) (*Response, error) {
	if caps == nil {
		caps = map[string]any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.NextID(), "method": "initialize", "params": map[string]any{
		"protocolVersion": version, "capabilities": caps, "clientInfo": map[string]any{"name": "mcptest", "version": "1.0.0"}}})
	c.SessionID = ""
	r, err := c.Post(ctx, body, nil, nil)
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		return r, r.Error
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return r, err
	}
	c.Version = res.ProtocolVersion
	c.SessionID = r.Header.Get("Mcp-Session-Id")
	n, err := c.Post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), c.legacyHeader(), nil)
	if err != nil {
		return r, err
	}
	if n.Status != http.StatusAccepted {
		return r, fmt.Errorf("mcptest: notifications/initialized: HTTP %d", n.Status)
	}
	return r, nil
}

func (c *Client) legacyHeader() http.Header {
	h := http.Header{}
	if c.Version != "" && c.Version != "2025-03-26" {
		h.Set("MCP-Protocol-Version", c.Version)
	}
	return h
}

// LegacyCall sends a legacy request in the session, answering
// server-to-client requests with answer.
func (c *Client) LegacyCall(ctx context.Context, method string, params map[string]any, answer Answerer) (*Response, error) {
	m := map[string]any{"jsonrpc": "2.0", "id": c.NextID(), "method": method}
	if params != nil {
		m["params"] = params
	}
	body, _ := json.Marshal(m)
	return c.Post(ctx, body, c.legacyHeader(), answer)
}
