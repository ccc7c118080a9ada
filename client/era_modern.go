package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpfn/mcpfn/mcp"
)

// modernEra speaks the stateless 2026-07-28 revision: every request
// carries its version, capabilities and client info in _meta and mirrors
// them in headers; results may be cached (server/utilities/caching); an
// input_required result is answered and the request sent again
// (basic/patterns/mrtr); tools/call mirrors the arguments a tool declares
// with x-mcp-header into Mcp-Param-* headers.
type modernEra struct {
	c *Conn
	v string
	// metaBase is the fixed part of a request's _meta, without the
	// braces: version, capabilities, clientInfo, logLevel.
	metaBase []byte
	// remembered: the era came from the Client's era memory, not a probe;
	// legacy evidence on a request forgets it.
	remembered bool
	// decls are the x-mcp-header declarations learnt from tools/list.
	decls declarations
	// meta is metaBase decoded, the Meta a Call starts from.
	meta metaTemplate
}

var _ era = (*modernEra)(nil)

// newModern returns the 2026-07-28 protocol of c in version v.
func newModern(c *Conn, v string, remembered bool) *modernEra {
	p := &modernEra{c: c, v: v, remembered: remembered}
	p.decls.init()
	b := append([]byte(`"`+mcp.MetaProtocolVersion+`":`), strconv.Quote(v)...)
	b = append(b, `,"`+mcp.MetaClientCapabilities+`":`...)
	b = append(b, modernCaps(c)...)
	if !c.opts.OmitClientInfo {
		b = append(append(b, `,"`+mcp.MetaClientInfo+`":`...), c.cl.clientInfo...)
	}
	if c.opts.LogLevel != "" {
		b = append(append(b, `,"`+mcp.MetaLogLevel+`":`...), strconv.Quote(string(c.opts.LogLevel))...)
	}
	p.metaBase = b
	return p
}

// modernCaps returns the encoding of the client capabilities a 2026-07-28
// request declares: the handlers', and the Tasks extension when
// Options.Tasks is set (SEP-2663 §Capability Negotiation: per request, in
// extensions).
func modernCaps(c *Conn) []byte {
	if !c.opts.Tasks {
		return c.cl.capsJSON
	}
	caps := c.cl.caps
	caps.Extensions = map[string]map[string]any{mcp.ExtensionTasks: {}}
	for id, s := range c.cl.caps.Extensions { // Options.Extensions
		if id != mcp.ExtensionTasks {
			caps.Extensions[id] = s
		}
	}
	b, _ := json.Marshal(&caps)
	return b
}

func (p *modernEra) version() string { return p.v }

// session: 2026-07-28 has no sessions.
func (p *modernEra) session() (string, *Initialization) { return "", nil }

// close: a modern Conn holds nothing open between calls.
func (p *modernEra) close(context.Context) error { return nil }

// notified forgets the tools earlier x-mcp-header walks did not find when
// the tool list changed.
func (p *modernEra) notified(n Notification) {
	if n.Method == "notifications/tools/list_changed" {
		p.decls.forgetUnlisted()
	}
}

// keepTool learns t's x-mcp-header declarations; a tool whose declarations
// are invalid is dropped (2026-07-28 server/tools §x-mcp-header: the
// client MUST NOT use it) and logged.
func (p *modernEra) keepTool(t *mcp.Tool) bool {
	in, _ := t.InputSchema.(json.RawMessage)
	th, err := parseToolHeaders(in)
	if err != nil {
		p.c.cl.log.Warn("mcp client: tool dropped: invalid x-mcp-header", "tool", t.Name, "reason", err.Error())
		p.decls.drop(t.Name)
		return false
	}
	p.decls.learn(t.Name, th)
	return true
}

// call sends r through the cache and its input rounds. A tools/call of
// CallTool carries its Mcp-Param-* headers, learning the tool's
// declarations first when they are unknown; after a -32020 the tool list is
// read again and the call sent once more.
func (p *modernEra) call(ctx context.Context, r request) (json.RawMessage, error) {
	if !r.toolCall {
		return p.do(ctx, &r)
	}
	if err := p.toolHeaders(ctx, &r); err != nil {
		return nil, err
	}
	res, err := p.do(ctx, &r)
	if err != nil && errors.Is(err, mcp.ErrHeaderMismatch) {
		if _, lerr := p.c.listTools(ctx, r.co.credentialOnly(CacheRefresh)); lerr == nil {
			if err := p.toolHeaders(ctx, &r); err != nil {
				return nil, err
			}
			res, err = p.do(ctx, &r)
		}
	}
	return res, err
}

// callOnce sends one round of r (CallToolOnce), with its Mcp-Param-*
// headers.
func (p *modernEra) callOnce(ctx context.Context, r request) (json.RawMessage, *Continuation, error) {
	if r.toolCall {
		if err := p.toolHeaders(ctx, &r); err != nil {
			return nil, nil, err
		}
	}
	return p.round(ctx, &r, 0)
}

// toolHeaders sets r.header to the Mcp-Param-* headers of the tools/call
// r. When the tool's x-mcp-header declarations are unknown it reads
// tools/list first (learnHeaders), since the client MUST send the headers
// (2026-07-28 basic/transports/streamable-http §Custom Headers from Tool
// Parameters).
func (p *modernEra) toolHeaders(ctx context.Context, r *request) error {
	h, known, err := p.decls.paramHeaders(r.tool, r.arguments())
	if err == nil && !known {
		if err = p.learnHeaders(ctx, r.tool, r.co); err == nil {
			h, _, err = p.decls.paramHeaders(r.tool, r.arguments())
		}
	}
	r.header = h
	return err
}

// do sends r through the cache: a fresh entry answers it, and a complete
// result that needed no input round is stored. A call with its own
// credential neither reads nor stores entries: they belong to the Client's
// credential source.
func (p *modernEra) do(ctx context.Context, r *request) (json.RawMessage, error) {
	c := p.c
	cache := c.cl.cache
	_, own := r.co.ownAuth()
	useCache := r.cacheable && cache != nil && r.co.cache() != CacheBypass && !own
	var src credSource
	var gen uint64
	if useCache {
		var err error
		if src, err = c.credential(ctx); err != nil {
			return nil, err
		}
		if r.co.cache() == CacheDefault {
			if res, ok := cache.get(c.ep, r.method, r.target, src); ok {
				return res, nil
			}
		}
		gen = cache.generation()
	}
	// The rounds keep their request beyond this call (a middleware's Call,
	// an input round), so they get a copy on the heap: a cache hit above
	// allocates nothing for it.
	rc := *r
	return p.fetch(ctx, &rc, useCache, src, gen)
}

// fetch sends r to the server (do missed the cache) and caches the result
// when useCache allows, under src's credential and the cache generation gen
// read before the request.
func (p *modernEra) fetch(ctx context.Context, r *request, useCache bool, src credSource, gen uint64) (json.RawMessage, error) {
	c := p.c
	cache := c.cl.cache
	var res json.RawMessage
	var err error
	rounds := 0
	r.cached = cacheAt{src, gen}
	if mrtrMethod(r.method) {
		res, rounds, err = p.callMRTR(ctx, r)
	} else {
		var rt string
		res, rt, err = p.sendRound(ctx, r, 0)
		if err == nil && rt != resultComplete {
			err = protocolError("%s answered %s", r.method, rt)
		}
	}
	if err != nil {
		var re *mcp.Error
		if errors.As(err, &re) && re.Code == mcp.CodeHeaderMismatch {
			p.decls.forgetUnlisted()
		}
		c.invalidateOnError(r.method, r.target, err)
		if p.remembered && legacyEvidence(err) {
			c.cl.eras.forget(c.url) // the next Connect probes again
		}
		return nil, err
	}
	// Never cache what answered inputResponses or requestState.
	if useCache && rounds == 0 {
		cache.put(c.ep, r.method, r.target, r.cached.src, r.cached.gen, res)
	}
	return res, nil
}

// Result types of 2026-07-28 (basic/index §ResultType).
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
	// resultTask is a CreateTaskResult (the Tasks extension, SEP-2663
	// §Polymorphic Results).
	resultTask = mcp.ResultTypeTask
)

// send sends one request and returns its result and resultType. A stream
// that breaks before the response is re-sent once with a new id, except for
// tools/call, which is never repeated (2026-07-28
// basic/transports/streamable-http §Sending messages).
func (p *modernEra) send(ctx context.Context, r *request) (json.RawMessage, string, error) {
	c := p.c
	resent, versionRetried := false, false
	progress := r.co.progressFn()
	for {
		id := c.nextID.Add(1)
		meta := p.metaBase
		if r.meta != nil {
			meta = r.meta
		}
		if progress != nil {
			meta = appendProgress(meta, id)
		}
		body := appendRequest(make([]byte, 0, 256+len(meta)), id, r.method, r.params, meta, true)
		name, hasName := mcpName(r.method, r.params)
		if !hasName && r.co != nil && r.co.name != "" {
			// An extension method's (CallOptions.Name).
			name, hasName = r.co.name, true
		}
		resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: r.method, co: r.co, header: r.header, mw: r.mwHeader, cached: r.cachedAt()}, func(h http.Header) {
			h["Content-Type"] = []string{"application/json"}
			h["Accept"] = []string{acceptBoth}
			h["Mcp-Protocol-Version"] = []string{p.v}
			h["Mcp-Method"] = []string{r.method}
			if hasName {
				h["Mcp-Name"] = []string{mcp.EncodeHeaderValue(name)}
			}
		})
		var res json.RawMessage
		if err == nil {
			x := &exchange{c: c, id: id, method: r.method, progress: progress}
			res, err = x.read(ctx, resp)
		}
		if err != nil {
			if errors.Is(err, ErrStreamBroken) && !resent && r.method != "tools/call" && ctx.Err() == nil {
				resent = true
				continue
			}
			// -32022 naming our version among the supported ones (a server
			// that changed its mind, or a gateway): retry once
			// (2026-07-28 basic/versioning).
			var uv *mcp.Error
			if !versionRetried && r.co.versionRetry() && errors.As(err, &uv) &&
				uv.Code == mcp.CodeUnsupportedProtocolVersion && pickVersion(uv.Supported()) == p.v {
				versionRetried = true
				continue
			}
			return nil, "", err
		}
		rt, err := resultTypeOf(res)
		return res, rt, err
	}
}

// sendRound is send through the Client's middleware: round n of r is one
// Call (see Middleware). Without middleware it is send.
func (p *modernEra) sendRound(ctx context.Context, r *request, n int) (json.RawMessage, string, error) {
	if p.c.cl.mw == nil {
		return p.send(ctx, r)
	}
	call := &Call{Method: r.method, Target: targetOf(r.method, r.params), Version: p.v, Modern: true, Round: n,
		Meta: p.meta.clone(p.metaBase), sender: p, req: r}
	resp, err := p.c.intercept(ctx, call, nil)
	if err != nil {
		return nil, "", err
	}
	rt := resp.rt
	if rt == "" {
		if rt, err = resultTypeOf(resp.Result); err != nil {
			return nil, "", err
		}
	}
	return resp.Result, rt, nil
}

// sendCall is the end of a modern Call's chain (terminal): r sent with
// the Call's _meta and headers.
func (p *modernEra) sendCall(ctx context.Context, call *Call) (*Outcome, error) {
	r := *call.req
	r.mwHeader = call.Header
	if !p.meta.unchanged(call.Meta) {
		if r.meta = encodeMeta(call.Meta); r.meta == nil {
			r.meta = []byte{} // every entry deleted: an empty _meta
		}
	}
	res, rt, err := p.send(ctx, &r)
	if err != nil {
		return nil, err
	}
	return call.outcome(res, rt), nil
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
	case resultComplete, resultInputRequired, resultTask:
		return *r.ResultType, nil
	}
	return "", protocolError("unknown resultType %q", *r.ResultType)
}

// discover sends server/discover through the cache (Conn.Discover).
func (p *modernEra) discover(ctx context.Context, co *callOptions) (*Discovery, error) {
	res, err := p.c.do(ctx, &request{method: "server/discover", co: co, cacheable: true})
	if err != nil {
		return nil, err
	}
	return decodeDiscovery(p.c.url, res)
}

// discoverOnce sends one server/discover, bypassing the cache (the probe,
// Client.Discover).
func (p *modernEra) discoverOnce(ctx context.Context, co *callOptions) (*Discovery, error) {
	res, rt, err := p.sendRound(ctx, &request{method: "server/discover", co: co}, 0)
	if err != nil {
		return nil, err
	}
	if rt != resultComplete {
		return nil, protocolError("server/discover answered %s", rt)
	}
	return decodeDiscovery(p.c.url, res)
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

// listen sends subscriptions/listen and reads its stream (2026-07-28
// basic/utilities/subscriptions): the acknowledgement first, then the
// notifications of this subscription; closing the stream ends it.
// With middleware the subscription is one Call, whose Handler returns
// when the stream ends.
func (p *modernEra) listen(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification)) error {
	if p.c.cl.mw == nil {
		return p.listenWith(ctx, f, ack, fn, p.metaBase, nil)
	}
	req := &Call{Method: "subscriptions/listen", Version: p.v, Modern: true, Meta: p.meta.clone(p.metaBase)}
	_, err := p.c.intercept(ctx, req, func(ctx context.Context, req *Call) (*Outcome, error) {
		meta := p.metaBase
		if !p.meta.unchanged(req.Meta) {
			if meta = encodeMeta(req.Meta); meta == nil {
				meta = []byte{}
			}
		}
		if err := p.listenWith(ctx, f, ack, fn, meta, req.Header); err != nil {
			return nil, err
		}
		return &Outcome{rt: resultComplete}, nil
	})
	return err
}

// listenWith is listen with the _meta members and middleware headers to
// send.
func (p *modernEra) listenWith(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification), meta []byte, mwHeader http.Header) error {
	c := p.c
	fb, err := json.Marshal(f)
	if err != nil {
		return err
	}
	id := c.nextID.Add(1)
	body := appendRequest(nil, id, "subscriptions/listen", params{{"notifications", fb}}, meta, true)
	resp, err := c.send(ctx, &httpReq{method: http.MethodPost, body: body, rpc: "subscriptions/listen", mw: mwHeader}, func(h http.Header) {
		h["Content-Type"] = []string{"application/json"}
		h["Accept"] = []string{acceptBoth}
		h["Mcp-Protocol-Version"] = []string{p.v}
		h["Mcp-Method"] = []string{"subscriptions/listen"}
	})
	if err != nil {
		return err
	}
	idRaw := strconv.FormatInt(id, 10)
	acked := false
	x := &exchange{c: c, id: id, method: "subscriptions/listen", onNote: func(m *wireMessage) bool {
		var n struct {
			Meta          map[string]json.RawMessage `json:"_meta"`
			Notifications mcp.SubscriptionFilter     `json:"notifications"`
		}
		json.Unmarshal(m.Params, &n)
		if sid, ok := n.Meta[mcp.MetaSubscriptionID]; ok && string(sid) != idRaw && string(sid) != strconv.Quote(idRaw) {
			return true // another subscription's: not ours
		}
		if m.Method == "notifications/subscriptions/acknowledged" {
			acked = true
			if ack != nil {
				ack(n.Notifications)
			}
			return true
		}
		if !acked {
			return true // nothing may precede the acknowledgement
		}
		c.dispatch(m, nil)
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

func (*modernEra) tasks() bool { return true }
