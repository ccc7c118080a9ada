package client

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcpfn/mcpfn/mcp"
)

// wireMessage is any JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID with Result or Error).
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *mcp.Error      `json:"error,omitempty"`
}

func (m *wireMessage) isResponse() bool { return m.Method == "" }

// decodeMessage decodes and checks one JSON-RPC message from the server.
func decodeMessage(b []byte) (*wireMessage, error) {
	var m wireMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, protocolError("undecodable message: %v", err)
	}
	if m.JSONRPC != "2.0" {
		return nil, protocolError("message without jsonrpc \"2.0\"")
	}
	if bytes.Equal(m.ID, []byte("null")) {
		m.ID = nil
	}
	if m.ID != nil && !validID(m.ID) {
		return nil, protocolError("invalid id %.40s", m.ID)
	}
	if m.Method == "" {
		if (m.Result == nil) == (m.Error == nil) {
			return nil, protocolError("response needs exactly one of result and error")
		}
		if m.ID == nil && m.Error == nil {
			return nil, protocolError("result without id")
		}
		if m.Result != nil && (len(m.Result) == 0 || m.Result[0] != '{') {
			return nil, protocolError("result is not an object")
		}
	}
	return &m, nil
}

// validID reports whether raw is a JSON string or integer.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return true // json.Unmarshal already checked the string
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// sameID reports whether the raw id equals our integer id.
func sameID(raw json.RawMessage, id int64) bool {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n == id
}

// appendJSONString appends s as a JSON string: plain printable ASCII
// directly, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// params is an ordered list of top-level params members, each raw JSON.
type params []field

type field struct {
	key string
	raw []byte
}

func (p params) with(key string, raw []byte) params {
	out := make(params, 0, len(p)+1)
	for _, f := range p {
		if f.key != key {
			out = append(out, f)
		}
	}
	return append(out, field{key, raw})
}

// appendRequest appends {"jsonrpc":"2.0","id":id,"method":m,"params":{...}}.
// meta, when non-nil, is the inside of the _meta object.
func appendRequest(b []byte, id int64, method string, p params, meta []byte, withParams bool) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, method)
	if withParams || len(p) > 0 || meta != nil {
		b = append(b, `,"params":{`...)
		for i, f := range p {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f.key)
			b = append(b, ':')
			b = append(b, f.raw...)
		}
		if meta != nil {
			if len(p) > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, `"_meta":{`...), meta...), '}')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// mcpName returns the Mcp-Name value of a request, if its method has one.
func mcpName(method string, p params) (string, bool) {
	key := ""
	switch method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return "", false
	}
	for _, f := range p {
		if f.key == key {
			var s string
			if json.Unmarshal(f.raw, &s) == nil {
				return s, true
			}
		}
	}
	return "", false
}

const acceptBoth = "application/json, text/event-stream"

func quoteJSON(s string) []byte { return appendJSONString(nil, s) }
