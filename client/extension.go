package client

// Extensions (SEP-2133; docs/extensions/overview, "Negotiation"): the
// client declares the extensions it supports, each with its settings
// object, in the extensions member of its capabilities (every 2026-07-28
// request's io.modelcontextprotocol/clientCapabilities, the legacy
// initialize), reads those the server advertises (server/discover,
// initialize), and sends requests of an extension's methods.

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/mcpfn/mcpfn/mcp"
)

// ServerExtensions returns the extensions the server advertised, each with
// its settings object (a copy), from the server/discover result the Conn
// was opened with (2026-07-28) or the initialize result (legacy); nil when
// it advertised none or the Conn has neither result.
func (c *Conn) ServerExtensions() map[string]map[string]any {
	var ext map[string]map[string]any
	if d := c.Discovery(); d != nil {
		ext = d.Capabilities.Extensions
	} else if init := c.InitializeResult(); init != nil {
		ext = init.Capabilities.Extensions
	}
	if ext == nil {
		return nil
	}
	out := make(map[string]map[string]any, len(ext))
	for id, s := range ext {
		out[id] = cloneSettings(s)
	}
	return out
}

// ServerExtension returns the settings object the server advertised for
// the extension id (a copy; {} when it advertised none or null), and
// whether it advertised the extension (see ServerExtensions).
func (c *Conn) ServerExtension(id string) (map[string]any, bool) {
	s, ok := c.ServerExtensions()[id]
	if ok && s == nil {
		s = map[string]any{}
	}
	return s, ok
}

// Request sends a request of any method, an extension's most often, with
// params (a value that marshals to a JSON object, or nil) and decodes its
// result into result (nil: the result is not decoded). A 2026-07-28
// request carries the standard _meta, the declared capabilities
// (Options.Extensions among them) and the Mcp-Method header; an extension
// method that mirrors a params member in Mcp-Name gets it from
// CallOptions.Name. Errors are as Call's: a JSON-RPC error is an *Error
// (-32021 when the server needs an extension the client did not declare,
// -32601 for a method it does not serve).
func (c *Conn) Request(ctx context.Context, method string, params, result any, opts *CallOptions) error {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return err
		}
		raw = b
	}
	res, err := c.Call(ctx, method, raw, opts)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(res, result); err != nil {
		return protocolError("%s result: %v", method, err)
	}
	return nil
}

// declaredExtensions returns Options.Extensions as the capabilities carry
// them: a deep copy through JSON (nil settings become {}), so that a later
// change by the caller has no effect.
func declaredExtensions(in map[string]map[string]any) map[string]map[string]any {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]map[string]any, len(in))
	for id, s := range in {
		if id == mcp.ExtensionTasks {
			continue // Options.Tasks declares it, with the client's task support
		}
		out[id] = map[string]any{}
		if s != nil {
			if b, err := json.Marshal(s); err == nil {
				var m map[string]any
				if json.Unmarshal(b, &m) == nil && m != nil {
					out[id] = m
				}
			}
		}
	}
	return out
}

// cloneSettings deep-copies a decoded settings object.
func cloneSettings(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return maps.Clone(s)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}
