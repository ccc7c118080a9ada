package otel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/otel"
)

// TestSpanNamesOfUnknownTargets: 1,000 distinct tool names the server
// does not have make one span name, "tools/call", on the server and on the
// client, in both eras, while a tool the server has keeps its own; on a
// legacy server, methods it does not serve are one span name, "_OTHER".
// The spans still say which name was asked (gen_ai.tool.name,
// mcp.method.name): span attributes are per span, names are what backends
// group by.
func TestSpanNamesOfUnknownTargets(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, era eraCase, s *sdk) {
		ctx := context.Background()
		url := server(t, era.mode, s.opts)
		c := connect(t, url, &client.Options{Mode: era.cmode, NoGETStream: true,
			Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)}})
		const n = 1000
		for i := range n {
			if _, err := c.CallTool(ctx, fmt.Sprint("invented", i), nil, nil); mcp.CodeOf(err) != mcp.CodeInvalidParams {
				t.Fatalf("invented%d: %v, want -32602", i, err)
			}
		}
		if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
			t.Fatal(err)
		}
		if era.mode == core.ModeLegacy {
			for i := range 20 {
				if _, err := c.Call(ctx, fmt.Sprint("x/invented", i), nil, nil); mcp.CodeOf(err) != mcp.CodeMethodNotFound {
					t.Fatalf("x/invented%d: %v, want -32601", i, err)
				}
			}
		}
		for _, kind := range []trace.SpanKind{trace.SpanKindServer, trace.SpanKindClient} {
			names := map[string]int{}
			tools := map[string]bool{}
			methods := map[string]bool{}
			for _, sp := range s.ended(kind) {
				a := attrs(sp.Attributes())
				switch m := a["mcp.method.name"]; {
				case m == "tools/call":
					tools[a["gen_ai.tool.name"]] = true
				case strings.HasPrefix(m, "x/"):
					methods[m] = true
					if kind == trace.SpanKindClient {
						continue // the client's own choice of method
					}
				default:
					continue // initialize, the client's tools/list
				}
				names[sp.Name()]++
			}
			want := map[string]int{"tools/call": n, "tools/call echo": 1}
			if era.mode == core.ModeLegacy && kind == trace.SpanKindServer {
				want["_OTHER"] = 20
			}
			if !maps.Equal(names, want) {
				t.Errorf("%v span names %v, want %v", kind, names, want)
			}
			if len(tools) != n+1 || !tools["invented999"] {
				t.Errorf("%v spans name %d distinct tools, want %d", kind, len(tools), n+1)
			}
			if era.mode == core.ModeLegacy && (len(methods) != 20 || !methods["x/invented7"]) {
				t.Errorf("%v spans name %d distinct invented methods, want 20", kind, len(methods))
			}
		}
	})
}

// TestAdvancedToolSpanName: a tool only ListToolsHandler lists is found by
// the call, so its span is named after it once the call has found it; an
// unlisted name keeps the method's name.
func TestAdvancedToolSpanName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSDK(t)
	srv := core.NewServer(core.Implementation{Name: "test", Version: "1"}, &core.ServerOptions{
		Mode: core.ModeModern, DisableRequestLog: true, Middleware: []core.Middleware{otel.Middleware(s.opts)},
		ListToolsHandler: func(ctx context.Context, req *core.ListToolsRequest) (*core.ListToolsResult, error) {
			return &core.ListToolsResult{Tools: []*core.Tool{{Name: "listed", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, nil
		},
		CallToolHandler: func(ctx context.Context, req *core.CallToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "ran"}}}, nil
		},
	})
	url := serve(t, nethttp.Handler(srv))
	c := connect(t, url, &client.Options{Mode: client.ModeModern, NoGETStream: true})
	if _, err := c.CallTool(ctx, "listed", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "unlisted", nil, nil); mcp.CodeOf(err) != mcp.CodeInvalidParams {
		t.Fatalf("unlisted: %v, want -32602", err)
	}
	var names []string
	for _, sp := range s.ended(trace.SpanKindServer) {
		if attrs(sp.Attributes())["mcp.method.name"] == "tools/call" {
			names = append(names, sp.Name())
		}
	}
	if want := []string{"tools/call listed", "tools/call"}; !slices.Equal(names, want) {
		t.Errorf("span names %q, want %q", names, want)
	}
}

// huge is a client-chosen string of 900 KiB.
var huge = strings.Repeat("a", 900<<10)

// TestSpanBoundsHostileRequests sends requests whose tool name, method,
// resource URI and JSON-RPC ids (a string and a number) are hundreds of
// KiB, and a tool whose -32603 message quotes its 900 KiB argument: every
// span name is the method's (or "_OTHER"), every string attribute and
// status description is within its bound (names core.LogNameBytes, URIs
// core.LogURIBytes, messages core.LogErrorBytes), cut with the marker
// naming the original length; the client's span of the failed call too.
func TestSpanBoundsHostileRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSDK(t)
	srv := newServer(core.ModeAuto, s.opts)
	core.AddTool(srv, &core.Tool{Name: "down"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return "", core.InternalError("upstream refused %s", in.S)
	})
	srv.AddResource(&core.Resource{URI: "test://r/1", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{}, nil
	})
	url := serve(t, nethttp.Handler(srv))
	mc := &mcptest.Client{URL: url}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modern := func(method, name string) http.Header {
		h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
		if name != "" {
			h.Set("Mcp-Name", name)
		}
		return h
	}
	post := func(c *mcptest.Client, body string, h http.Header) {
		t.Helper()
		if _, err := c.Post(ctx, []byte(body), h, nil); err != nil {
			t.Fatal(err)
		}
	}
	post(mc, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+huge+`",`+meta+`}}`, modern("tools/call", huge))
	post(mc, `{"jsonrpc":"2.0","id":"`+huge[:200<<10]+`","method":"tools/list","params":{`+meta+`}}`, modern("tools/list", ""))
	post(mc, `{"jsonrpc":"2.0","id":1`+strings.Repeat("0", 200<<10)+`,"method":"tools/list","params":{`+meta+`}}`, modern("tools/list", ""))
	post(mc, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://`+huge+`",`+meta+`}}`, modern("resources/read", "test://"+huge))
	lc := &mcptest.Client{URL: url}
	if _, err := lc.Initialize(ctx, mcp.ProtocolVersion20251125, nil); err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Mcp-Protocol-Version": {mcp.ProtocolVersion20251125}}
	post(lc, `{"jsonrpc":"2.0","id":"`+huge[:200<<10]+`","method":"`+huge+`"}`, h)

	c := connect(t, url, &client.Options{Mode: client.ModeModern, NoGETStream: true,
		Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)}})
	if _, err := c.CallTool(ctx, "down", map[string]any{"s": huge}, nil); mcp.CodeOf(err) != mcp.CodeInternalError {
		t.Fatalf("down: %v, want -32603", err)
	}

	bounds := map[attribute.Key]int{
		otel.KeyToolName: core.LogNameBytes, otel.KeyMethodName: core.LogNameBytes,
		otel.KeyJSONRPCRequestID: core.LogNameBytes, otel.KeyResourceURI: core.LogURIBytes,
	}
	cut := map[string]bool{}
	var names []string
	for _, sp := range s.spans.Ended() {
		if sp.SpanKind() == trace.SpanKindServer {
			names = append(names, sp.Name())
		}
		for _, kv := range sp.Attributes() {
			v := kv.Value.Emit()
			bound, ok := bounds[kv.Key]
			if !ok {
				bound = 64
			}
			if len(v) > bound {
				t.Errorf("span %.80q: %s is %d bytes, more than %d", sp.Name(), kv.Key, len(v), bound)
			}
			if i := strings.LastIndex(v, "…[truncated from "); i >= 0 {
				n, err := strconv.Atoi(strings.TrimSuffix(v[i+len("…[truncated from "):], " bytes]"))
				if err != nil || n <= bound {
					t.Errorf("span %q: %s marker %q", sp.Name(), kv.Key, v[i:])
				}
				cut[sp.Name()+" "+string(kv.Key)] = true
			}
		}
		if d := sp.Status().Description; len(d) > core.LogErrorBytes || len(d) > 200 && !strings.HasSuffix(d, " bytes]") {
			t.Errorf("span %q: status description of %d bytes, more than %d or without the marker", sp.Name(), len(d), core.LogErrorBytes)
		}
	}
	want := []string{"tools/call", "tools/list", "tools/list", "resources/read", "_OTHER", "tools/list", "tools/call down"}
	if !slices.Equal(names, want) {
		t.Errorf("span names %.300q, want %q", names, want)
	}
	for _, k := range []string{"tools/call gen_ai.tool.name", "tools/list jsonrpc.request.id", "resources/read mcp.resource.uri",
		"_OTHER mcp.method.name", "_OTHER jsonrpc.request.id"} {
		if !cut[k] {
			t.Errorf("no truncated %s (truncated: %v)", k, slices.Sorted(maps.Keys(cut)))
		}
	}
	// The description of the -32603, on the server and the client span.
	for _, sp := range s.spans.Ended() {
		if sp.Name() == "tools/call down" && !strings.HasSuffix(sp.Status().Description, "[truncated from "+strconv.Itoa(len("upstream refused ")+len(huge))+" bytes]") {
			t.Errorf("%v span tools/call down: status %.100q…, want it cut", sp.SpanKind(), sp.Status().Description)
		}
	}
}

// TestIgnoreClientPropagation: with Options.IgnoreClientPropagation the
// server span is not a child of the trace context the client sent, in
// params._meta or in the traceparent header, nor linked to it, and the
// client's baggage (either place) does not reach the handler; a span the
// server's own HTTP instrumentation started stays the parent, while a
// remote span context something outside put in the context is ignored
// too. The default (the same requests) trusts the client, as OpenTelemetry
// propagation does.
func TestIgnoreClientPropagation(t *testing.T) {
	t.Parallel()
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true, TraceFlags: trace.FlagsSampled})
	for _, tc := range []struct {
		name    string
		ignore  bool
		ambient string // "", "local" (a span of the server's), "remote" (an extracted context)
	}{
		{"trust", false, ""},
		{"ignore", true, ""},
		{"ignore/local-ambient", true, "local"},
		{"ignore/remote-ambient", true, "remote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newSDK(t)
			opts := s.opts
			opts.IgnoreClientPropagation = tc.ignore
			type seen struct {
				span    trace.SpanContext
				baggage string
			}
			got := make(chan seen, 1)
			prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
			srv := newServer(core.ModeModern, opts)
			core.AddTool(srv, &core.Tool{Name: "bag"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				carrier := propagation.MapCarrier{}
				prop.Inject(ctx, carrier)
				got <- seen{trace.SpanContextFromContext(ctx), carrier["baggage"]}
				return "ok", nil
			})
			h := nethttp.Handler(srv)
			ambient := make(chan trace.SpanContext, 8)
			tr := s.opts.TracerProvider.Tracer("http")
			url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rctx := r.Context()
				switch tc.ambient {
				case "local":
					var sp trace.Span
					rctx, sp = tr.Start(rctx, "HTTP POST", trace.WithSpanKind(trace.SpanKindServer))
					defer sp.End()
					if r.Header.Get("Mcp-Method") == "tools/call" {
						ambient <- sp.SpanContext()
					}
				case "remote":
					rctx = trace.ContextWithRemoteSpanContext(rctx, remote)
				}
				h.ServeHTTP(w, r.WithContext(rctx))
			}))
			inject := func(next client.Handler) client.Handler {
				return func(ctx context.Context, c *client.Call) (*client.Outcome, error) {
					if c.Method == "tools/call" {
						c.SetMeta("traceparent", "00-"+metaTrace+"-"+metaSpan+"-01")
						c.SetMeta("baggage", "tenant=acme")
						c.SetHeader("Traceparent", "00-"+headerTrace+"-"+headerSpan+"-01")
						c.SetHeader("Baggage", "region=eu")
					}
					return next(ctx, c)
				}
			}
			c := connect(t, url, &client.Options{Mode: client.ModeModern, NoGETStream: true,
				Middleware: []client.Middleware{inject}})
			if _, err := c.CallTool(ctx, "bag", nil, nil); err != nil {
				t.Fatal(err)
			}
			in := <-got
			sp := s.span(t, trace.SpanKindServer, "tools/call bag")
			if in.span.SpanID() != sp.SpanContext().SpanID() {
				t.Errorf("the handler's context holds span %s, not the server span %s", in.span.SpanID(), sp.SpanContext().SpanID())
			}
			var links []string
			for _, l := range sp.Links() {
				links = append(links, l.SpanContext.TraceID().String())
			}
			tid := sp.SpanContext().TraceID().String()
			if !tc.ignore {
				// _meta's baggage replaces the header's.
				if tid != metaTrace || sp.Parent().SpanID().String() != metaSpan || in.baggage != "tenant=acme" || len(links) != 1 || links[0] != headerTrace {
					t.Errorf("trusting: trace %s parent %s links %v baggage %q, want _meta's %s/%s and baggage, linked to %s",
						tid, sp.Parent().SpanID(), links, in.baggage, metaTrace, metaSpan, headerTrace)
				}
				return
			}
			if tid == metaTrace || tid == headerTrace || tid == remote.TraceID().String() || len(links) != 0 || in.baggage != "" {
				t.Errorf("ignoring: trace %s, links %v, baggage %q: the client's context is used", tid, links, in.baggage)
			}
			switch tc.ambient {
			case "local":
				amb := <-ambient
				if sp.Parent().SpanID() != amb.SpanID() || sp.Parent().IsRemote() {
					t.Errorf("ignoring: parent %s, want the server's own HTTP span %s", sp.Parent().SpanID(), amb.SpanID())
				}
			default:
				if sp.Parent().IsValid() {
					t.Errorf("ignoring: parent %s, want a new root", sp.Parent().SpanID())
				}
			}
		})
	}
}
