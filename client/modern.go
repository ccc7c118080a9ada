package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpfn/mcpfn/mcp"
)

// Result types of 2026-07-28 (basic/index §ResultType).
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// callModern sends one 2026-07-28 request and returns its result and
// resultType. A stream that breaks before the response is re-sent once with
// a new id, except for tools/call, which is never repeated
// (2026-07-28 basic/transports/streamable-http §Sending messages).
func (c *Conn) callModern(ctx context.Context, method string, p params, co *callOptions, extra http.Header) (json.RawMessage, string, error) {
	resent, versionRetried := false, false
	for {
		id := c.nextID.Add(1)
		meta := c.metaBase
		if co != nil && co.progress != nil {
			meta = append(append(append([]byte(nil), meta...), `,"progressToken":`...), strconv.FormatInt(id, 10)...)
		}
		body := appendRequest(make([]byte, 0, 256+len(meta)), id, method, p, meta, true)
		name, hasName := mcpName(method, p)
		resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: method, co: co, header: extra}, func(h http.Header) {
			h["Content-Type"] = []string{"application/json"}
			h["Accept"] = []string{acceptBoth}
			h["Mcp-Protocol-Version"] = []string{c.version}
			h["Mcp-Method"] = []string{method}
			if hasName {
				h["Mcp-Name"] = []string{mcp.EncodeHeaderValue(name)}
			}
		})
		var res json.RawMessage
		if err == nil {
			x := &exchange{c: c, id: id, method: method}
			if co != nil {
				x.progress = co.progress
			}
			res, err = x.read(ctx, resp)
		}
		if err != nil {
			if errors.Is(err, ErrStreamBroken) && !resent && method != "tools/call" && ctx.Err() == nil {
				resent = true
				continue
			}
			// -32022 naming our version among the supported ones (a server
			// that changed its mind, or a gateway): retry once
			// (2026-07-28 basic/versioning).
			var uv *mcp.Error
			if !versionRetried && (co == nil || !co.noVersionRetry) && errors.As(err, &uv) &&
				uv.Code == mcp.CodeUnsupportedProtocolVersion && pickVersion(uv.Supported()) == c.version {
				versionRetried = true
				continue
			}
			return nil, "", err
		}
		rt, err := resultTypeOf(res)
		return res, rt, err
	}
}

// resultTypeOf reads result.resultType: absent means "complete" (older
// servers); a value this client does not know is an error (2026-07-28
// basic/index §ResultType).
func resultTypeOf(res json.RawMessage) (string, error) {
	var r struct {
		ResultType *string `json:"resultType"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", protocolError("result: %v", err)
	}
	if r.ResultType == nil {
		return resultComplete, nil
	}
	switch *r.ResultType {
	case resultComplete, resultInputRequired:
		return *r.ResultType, nil
	}
	return "", protocolError("unknown resultType %q", *r.ResultType)
}

// discover sends server/discover.
func (c *Conn) discover(ctx context.Context, co *callOptions) (*Discovery, error) {
	res, rt, err := c.callModern(ctx, "server/discover", nil, co, nil)
	if err != nil {
		return nil, err
	}
	if rt != resultComplete {
		return nil, protocolError("server/discover answered %s", rt)
	}
	return decodeDiscovery(c.url, res)
}

func decodeDiscovery(url string, res json.RawMessage) (*Discovery, error) {
	d := &Discovery{URL: url, Raw: res}
	if err := json.Unmarshal(res, &d.DiscoverResult); err != nil {
		return nil, protocolError("server/discover result: %v", err)
	}
	var w struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(res, &w)
	if si, ok := w.Meta[mcp.MetaServerInfo]; ok {
		var impl mcp.Implementation
		if json.Unmarshal(si, &impl) == nil {
			d.ServerInfo = &impl
		}
	}
	return d, nil
}
