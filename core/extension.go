package core

// Extensions (SEP-2133; docs/extensions/overview, "Negotiation"): optional
// additions to the protocol, each named by an identifier
// "{vendor-prefix}/{extension-name}" and negotiated in the extensions
// member of the capabilities. A server advertises the extensions it serves
// with their settings objects (an empty object: no settings) in
// server/discover (2026-07-28) and in the initialize result (legacy
// revisions); a client declares its own in every request's
// io.modelcontextprotocol/clientCapabilities (2026-07-28) or once in
// initialize (legacy). An extension may add methods; a request of one from
// a client that did not declare the extension is answered -32021 with the
// extension in data.requiredCapabilities (as the Tasks extension does,
// tasks.md §Error Handling).
//
// The extension table lives beside the registry: a copy-on-write snapshot
// readers load without locks. The Tasks extension (task*.go) registers its
// methods here like any other, with two differences only core may ask for:
// it is advertised only while a tool may run as a task, and it is of
// 2026-07-28 only.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// Extension is an extension a server serves: its identifier and the
// settings object it advertises in capabilities.extensions (nil: {}).
type Extension struct {
	// ID is the extension identifier, "{vendor-prefix}/{extension-name}",
	// e.g. "com.example/search" (a reversed domain the vendor owns).
	ID string
	// Settings is the extension's settings object, whose schema the
	// extension defines. It must marshal to a JSON object.
	Settings map[string]any
}

// MethodHandler answers one request of an extension's method. params is the
// request's params object as sent (with its _meta in 2026-07-28; {} when
// the request had none). The result must marshal to a JSON object (nil:
// {}); a _meta member of it is merged with the server's own _meta. An
// *Error is answered as is (InvalidParamsError for bad params); any other
// error is logged and answered -32603. The request has been checked: its
// client declared the extension (r.Extension reads the settings it
// declared).
type MethodHandler func(ctx context.Context, r *Request, params json.RawMessage) (any, error)

// MethodOptions are the options of an extension's method.
type MethodOptions struct {
	// NameParam names a top-level string member of params that the
	// extension mirrors in the Mcp-Name header, as tools/call mirrors name
	// and the Tasks extension taskId (2026-07-28 basic/transports,
	// "Routing Headers"): a 2026-07-28 request must then carry Mcp-Name,
	// equal to the member when params has it, or is answered -32020.
	// "": the method has no Mcp-Name.
	NameParam string
	// ModernOnly serves the method to 2026-07-28 requests only; legacy
	// requests of it get -32601.
	ModernOnly bool
}

// MethodFunc adapts a handler of typed params to a MethodHandler: params
// are decoded into P with encoding/json (members P lacks, _meta among them,
// are ignored), and params that do not decode are answered -32602.
func MethodFunc[P, R any](f func(ctx context.Context, r *Request, params P) (R, error)) MethodHandler {
	return func(ctx context.Context, r *Request, raw json.RawMessage) (any, error) {
		var p P
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, InvalidParamsError("Invalid params: %s", err.Error())
		}
		return f(ctx, r, p)
	}
}

// AddExtension advertises ext in the capabilities of server/discover and of
// initialize, replacing the settings of an extension of the same ID. The
// methods of the extension are added with AddMethod. It panics on an
// invalid identifier, on settings that do not marshal to a JSON object, and
// on the identifier of an extension core implements (ExtensionTasks).
func (s *Server) AddExtension(ext Extension) {
	checkExtensionID("AddExtension", ext.ID)
	settings := map[string]any{}
	if ext.Settings != nil {
		b, err := json.Marshal(ext.Settings)
		if err == nil {
			err = json.Unmarshal(b, &settings)
		}
		if err != nil {
			panic(fmt.Sprintf("core: AddExtension %q: the settings do not marshal to a JSON object: %v", ext.ID, err))
		}
	}
	s.ext.update(func(t *extTable) {
		e := t.exts[ext.ID]
		if e == nil {
			e = &extEntry{id: ext.ID}
		} else {
			c := *e
			e = &c
		}
		e.settings = settings
		t.exts[ext.ID] = e
	})
}

// AddMethod registers method as a method of the extension ext, which it
// advertises (AddExtension, with no settings) unless already added.
// Requests of it are routed and checked as core's own are (the
// Mcp-Method header, Mcp-Name per opts.NameParam, authorization with
// Operation.Method = method, the middleware), then gated: a client that
// did not declare ext (2026-07-28: in the request's _meta client
// capabilities; legacy: in the session's initialize capabilities, so a
// sessionless legacy request never declares one) gets -32021 naming it. It
// replaces a method of the same name of the same extension, and panics on
// a nil handler, an empty method, a method core serves, a notification
// method, or a method of another extension.
func (s *Server) AddMethod(ext, method string, h MethodHandler, opts *MethodOptions) {
	checkExtensionID("AddMethod", ext)
	if h == nil {
		panic(fmt.Sprintf("core: AddMethod %q: nil handler", method))
	}
	if method == "" || method == "initialize" || strings.HasPrefix(method, "notifications/") ||
		modernMethods[method] != nil || legacyMethods[method] != nil {
		panic(fmt.Sprintf("core: AddMethod %q: the method is core's (or a notification)", method))
	}
	var o MethodOptions
	if opts != nil {
		o = *opts
	}
	spec := &methodSpec{handle: vendorHandler(h), available: always, nameParam: o.NameParam}
	s.ext.update(func(t *extTable) {
		if m := t.methods[method]; m != nil && m.ext != ext {
			panic(fmt.Sprintf("core: AddMethod %q: already a method of extension %q", method, m.ext))
		}
		if t.exts[ext] == nil {
			t.exts[ext] = &extEntry{id: ext, settings: map[string]any{}}
		}
		t.methods[method] = gated(ext, spec, o.ModernOnly)
	})
}

// DeclaresExtension reports whether the request's client declared the
// extension id: in the request's _meta client capabilities (2026-07-28),
// or in its session's initialize capabilities (legacy).
func (r *Request) DeclaresExtension(id string) bool {
	c := r.declaredCaps()
	if c == nil {
		return false
	}
	_, ok := c.Extensions[id]
	return ok
}

// Extension returns the settings object the request's client declared for
// the extension id (a copy: the handler may change it), and whether it
// declared the extension; an extension declared with no settings or with
// null settings is an empty map.
func (r *Request) Extension(id string) (map[string]any, bool) {
	c := r.declaredCaps()
	if c == nil {
		return nil, false
	}
	v, ok := c.Extensions[id]
	if !ok {
		return nil, false
	}
	if v == nil {
		return map[string]any{}, true
	}
	return cloneObject(v), true
}

// MissingExtensionError returns the -32021 error of a request that needs
// the client to declare the extension id (data.requiredCapabilities is
// {"extensions": {id: {}}}).
func MissingExtensionError(id string) *Error {
	return MissingCapabilityError(&ClientCapabilities{Extensions: map[string]map[string]any{id: {}}})
}

// checkExtensionID panics unless id has the form of an extension
// identifier, "{vendor-prefix}/{extension-name}", without spaces or
// control characters.
func checkExtensionID(fn, id string) {
	i := strings.IndexByte(id, '/')
	ok := i > 0 && i < len(id)-1
	for _, c := range id {
		if c <= ' ' || c == 0x7f {
			ok = false
		}
	}
	if !ok {
		panic(fmt.Sprintf("core: %s %q: an extension identifier is {vendor-prefix}/{extension-name}, e.g. com.example/search", fn, id))
	}
	if id == ExtensionTasks {
		panic(fmt.Sprintf("core: %s %q: core serves the Tasks extension (ToolOptions.TaskSupport)", fn, id))
	}
}

// extState is a server's extensions: a snapshot readers load without
// locks, replaced whole by writers.
type extState struct {
	mu  sync.Mutex
	tab atomic.Pointer[extTable]
}

// extTable is an immutable snapshot of the extensions and their methods.
type extTable struct {
	exts    map[string]*extEntry
	methods map[string]*extMethod
}

// extEntry is one advertised extension.
type extEntry struct {
	id       string
	settings map[string]any // plain JSON values; never changed once published
	// advertised, when set, decides whether the extension is advertised
	// now (the Tasks extension: while a tool may run as a task).
	advertised func(s *Server, reg *registry) bool
	// modernOnly: advertised in server/discover only, not in initialize.
	modernOnly bool
}

// extMethod is a method of an extension: its spec, served in 2026-07-28
// and, unless modernOnly, in the legacy revisions (each era's file looks
// its methods up: era_modern.go, era_legacy.go).
type extMethod struct {
	ext        string
	spec       *methodSpec
	modernOnly bool
}

func (x *extState) load() *extTable {
	if t := x.tab.Load(); t != nil {
		return t
	}
	return &extTable{}
}

// update applies fn to a copy of the table and publishes it.
func (x *extState) update(fn func(*extTable)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.load()
	t := &extTable{exts: make(map[string]*extEntry, len(old.exts)+1), methods: make(map[string]*extMethod, len(old.methods)+1)}
	for k, v := range old.exts {
		t.exts[k] = v
	}
	for k, v := range old.methods {
		t.methods[k] = v
	}
	fn(t)
	x.tab.Store(t)
}

// gated returns the method of extension ext whose spec is spec, behind the
// extension's -32021 check.
func gated(ext string, spec *methodSpec, modernOnly bool) *extMethod {
	inner := spec.handle
	g := *spec
	g.handle = func(s *Server, ctx context.Context, r *Request, params []byte) ([]byte, error) {
		if !r.DeclaresExtension(ext) {
			return nil, MissingExtensionError(ext)
		}
		return inner(s, ctx, r, params)
	}
	return &extMethod{ext: ext, spec: &g, modernOnly: modernOnly}
}

// extensionCaps returns the extensions the server advertises in an era
// (nil: none), each settings object a copy.
func (s *Server) extensionCaps(reg *registry, modern bool) map[string]map[string]any {
	t := s.ext.load()
	var out map[string]map[string]any
	for id, e := range t.exts {
		if (e.modernOnly && !modern) || (e.advertised != nil && !e.advertised(s, reg)) {
			continue
		}
		if out == nil {
			out = make(map[string]map[string]any, len(t.exts))
		}
		out[id] = cloneObject(e.settings)
	}
	return out
}

// vendorHandler runs a MethodHandler and encodes its result with the
// era's common members (resultType and the server's _meta in 2026-07-28).
func vendorHandler(h MethodHandler) methodHandler {
	return func(s *Server, ctx context.Context, r *Request, params []byte) ([]byte, error) {
		v, err := h(ctx, r, params)
		if err != nil {
			return nil, err
		}
		b := []byte("{}")
		if v != nil {
			if b, err = json.Marshal(v); err != nil {
				return nil, fmt.Errorf("method %s: the result does not marshal: %w", r.Method, err)
			}
		}
		if !jsonwire.IsObject(b) {
			return nil, fmt.Errorf("method %s: the result is not a JSON object", r.Method)
		}
		// The result's own _meta joins the server's (one _meta member).
		var user Meta
		var rest []byte
		jsonwire.EachMember(b, func(k, v []byte) bool {
			if jsonwire.KeyIs(k, "_meta") {
				if json.Unmarshal(v, &user) != nil {
					user = nil
				}
				return true
			}
			if len(rest) > 0 {
				rest = append(rest, ',')
			}
			rest = append(rest, '"')
			rest = append(rest, k...)
			rest = append(rest, '"', ':')
			rest = append(rest, v...)
			return true
		})
		out := append(make([]byte, 0, len(rest)+256), '{')
		out = append(out, rest...)
		if len(rest) > 0 {
			out = append(out, ',')
		}
		out = r.resultTail(out, "", user, nil)
		return append(out, '}'), nil
	}
}

// paramMember returns the raw value of the top-level member name of a
// params object (nil when absent): an extension method's Mcp-Name source.
func paramMember(params []byte, name string) []byte {
	var v []byte
	jsonwire.EachMember(params, func(k, val []byte) bool {
		if jsonwire.KeyIs(k, name) {
			v = val
		}
		return true
	})
	return v
}

// initExtensions registers the extensions core implements: the Tasks
// extension (tasks.md), advertised while a tool may run as a task
// (tasks.md §Capability Negotiation), of 2026-07-28 only; its methods
// mirror taskId in Mcp-Name (tasks.md §Streamable HTTP: Routing Headers).
func (s *Server) initExtensions() {
	s.ext.update(func(t *extTable) {
		t.exts[ExtensionTasks] = &extEntry{id: ExtensionTasks, settings: map[string]any{},
			advertised: (*Server).servesTasks, modernOnly: true}
		for method, h := range map[string]methodHandler{
			mcp.MethodTasksGet:    (*Server).getTask,
			mcp.MethodTasksUpdate: (*Server).updateTask,
			mcp.MethodTasksCancel: (*Server).cancelTask,
		} {
			t.methods[method] = gated(ExtensionTasks, &methodSpec{handle: h, available: always, nameParam: "taskId"}, true)
		}
	})
}
