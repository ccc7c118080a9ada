package otel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/otel"
)

// sdk is a real OpenTelemetry SDK pipeline: a span recorder and a manual
// metric reader.
type sdk struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	opts   otel.Options
}

func newSDK(t *testing.T) *sdk {
	t.Helper()
	s := &sdk{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	s.opts = otel.Options{TracerProvider: tp, MeterProvider: mp}
	return s
}

func (s *sdk) ended(kind trace.SpanKind) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Ended() {
		if sp.SpanKind() == kind {
			out = append(out, sp)
		}
	}
	return out
}

// histogram returns the data points of the histogram name.
func (s *sdk) histogram(t *testing.T, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				if m.Unit != "s" {
					t.Errorf("%s: unit %q, want s", name, m.Unit)
				}
				return m.Data.(metricdata.Histogram[float64]).DataPoints
			}
		}
	}
	t.Fatalf("no histogram %s", name)
	return nil
}

// span returns the last ended span of kind named name, and ends the test
// when there is none.
func (s *sdk) span(t *testing.T, kind trace.SpanKind, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var sp sdktrace.ReadOnlySpan
	for _, x := range s.ended(kind) {
		if x.Name() == name {
			sp = x
		}
	}
	if sp == nil {
		t.Fatalf("no %v span %s", kind, name)
	}
	return sp
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// newServer is an mcpfn server in mode with the otel Middleware of opts
// followed by more.
func newServer(mode core.Mode, opts otel.Options, more ...core.Middleware) *core.Server {
	return core.NewServer(core.Implementation{Name: "test", Version: "1"}, &core.ServerOptions{
		Mode: mode, DisableRequestLog: true, Middleware: append([]core.Middleware{otel.Middleware(opts)}, more...),
	})
}

// serve serves h on loopback until the test ends and returns the MCP
// endpoint's URL.
func serve(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return ts.URL + nethttp.DefaultPath
}

// connect connects a client to url, closed when the test ends.
func connect(tb testing.TB, url string, opts *client.Options) *client.Conn {
	tb.Helper()
	c, err := client.Connect(context.Background(), url, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// server is a real mcpfn server behind adapters/nethttp on loopback with
// the otel Middleware and the tools echo, fail (isError), confirm (an input
// round) and boom (a -32603).
func server(t *testing.T, mode core.Mode, opts otel.Options) string {
	t.Helper()
	srv := core.NewServer(core.Implementation{Name: "test", Version: "1"}, &core.ServerOptions{
		Mode: mode, DisableRequestLog: true, Middleware: []core.Middleware{otel.Middleware(opts)},
		Logger: slog.New(slog.DiscardHandler),
	})
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "echo", nil
	})
	core.AddTool(srv, &core.Tool{Name: "fail"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "", core.ToolErrorf("it failed")
	})
	core.AddTool(srv, &core.Tool{Name: "boom"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		panic("boom")
	})
	core.AddTool(srv, &core.Tool{Name: "confirm"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		if r, ok := req.Input.Elicitation("ok"); ok {
			return "answer: " + r.Action, nil
		}
		return "", core.InputRequired(core.InputRequests{"ok": core.ElicitForm("Proceed?",
			json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "")
	})
	return serve(t, nethttp.Handler(srv))
}

func accept(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}, nil
}

// eraCase is a protocol era of the server and the client.
type eraCase struct {
	name    string
	mode    core.Mode
	cmode   client.Mode
	version string
}

var eras = []eraCase{
	{"modern", core.ModeModern, client.ModeModern, mcp.ProtocolVersion20260728},
	{"legacy", core.ModeLegacy, client.ModeLegacy, mcp.ProtocolVersion20251125},
}

// eachEra runs f in a parallel subtest per era, with an SDK of its own.
func eachEra(t *testing.T, f func(t *testing.T, era eraCase, s *sdk)) {
	t.Helper()
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			f(t, era, newSDK(t))
		})
	}
}

// TestClientServer: a client with ClientMiddleware calls a server with
// Middleware in one process, both on one real SDK, in both eras. Every
// server span is a child of the client span of its request (the trace
// context travels in _meta and the header), with the conventions' names,
// kinds, attributes and status for a result, an isError result, a
// JSON-RPC error, a handler panic and an input round; both histograms get
// a point per call with the conventions' bucket boundaries.
func TestClientServer(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, era eraCase, s *sdk) {
		ctx := context.Background()
		url := server(t, era.mode, s.opts)
		c := connect(t, url, &client.Options{
			Mode: era.cmode, NoGETStream: true, Elicitation: accept,
			Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)},
		})
		if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
			t.Fatal(err)
		}
		if r, err := c.CallTool(ctx, "fail", nil, nil); err != nil || !r.IsError {
			t.Fatalf("fail: %+v, %v", r, err)
		}
		if _, err := c.CallTool(ctx, "boom", nil, nil); mcp.CodeOf(err) != mcp.CodeInternalError {
			t.Fatalf("boom: %v, want a -32603", err)
		}
		if _, err := c.CallTool(ctx, "nope", nil, nil); mcp.CodeOf(err) != mcp.CodeInvalidParams {
			t.Fatalf("nope: %v, want a -32602", err)
		}
		if _, err := c.CallTool(ctx, "confirm", nil, nil); err != nil {
			t.Fatal(err)
		}

		clientSpans := map[trace.SpanID]sdktrace.ReadOnlySpan{}
		for _, sp := range s.ended(trace.SpanKindClient) {
			clientSpans[sp.SpanContext().SpanID()] = sp
		}
		type row struct {
			Name, Status, ErrorType, Code, Round string
		}
		var got []row
		for _, sp := range s.ended(trace.SpanKindServer) {
			a := attrs(sp.Attributes())
			parent, ok := clientSpans[sp.Parent().SpanID()]
			if !ok || sp.Parent().TraceID() != parent.SpanContext().TraceID() || !sp.Parent().IsRemote() {
				t.Errorf("server span %q: parent %v is not a client span", sp.Name(), sp.Parent())
				continue
			}
			if parent.Name() != sp.Name() {
				t.Errorf("server span %q under client span %q", sp.Name(), parent.Name())
			}
			if a["mcp.method.name"] != strings.Fields(sp.Name())[0] || a["mcp.protocol.version"] != era.version ||
				a["network.protocol.name"] != "http" || a["network.transport"] != "tcp" || a["client.address"] != "127.0.0.1" {
				t.Errorf("server span %q attributes %v", sp.Name(), a)
			}
			pa := attrs(parent.Attributes())
			if pa["mcp.method.name"] != a["mcp.method.name"] || pa["mcp.protocol.version"] != era.version || pa["server.address"] != "127.0.0.1" {
				t.Errorf("client span %q attributes %v", parent.Name(), pa)
			}
			if a["mcp.session.id"] != pa["mcp.session.id"] || (era.name == "legacy") != (a["mcp.session.id"] != "") {
				t.Errorf("%s: mcp.session.id server %q client %q", sp.Name(), a["mcp.session.id"], pa["mcp.session.id"])
			}
			if a["jsonrpc.request.id"] == "" {
				t.Errorf("%s: no jsonrpc.request.id", sp.Name())
			}
			if a["mcp.method.name"] != "tools/call" {
				continue
			}
			if a["gen_ai.tool.name"] == "" || a["gen_ai.operation.name"] != "execute_tool" {
				t.Errorf("%s: attributes %v", sp.Name(), a)
			}
			if pa["error.type"] != a["error.type"] && a["error.type"] != "-32603" {
				t.Errorf("%s: error.type server %q client %q", sp.Name(), a["error.type"], pa["error.type"])
			}
			if pa["error.type"] != "" && parent.Status().Code != codes.Error {
				// Every JSON-RPC error is an error of the client span.
				t.Errorf("client span %q with error.type %q has status %v", parent.Name(), pa["error.type"], parent.Status())
			}
			got = append(got, row{sp.Name(), sp.Status().Code.String() + ":" + sp.Status().Description, a["error.type"], a["rpc.response.status_code"], a["mcpfn.round"]})
		}
		want := []row{
			{"tools/call echo", "Unset:", "", "", ""},
			{"tools/call fail", "Error:tool_error", "tool_error", "", ""},
			{"tools/call boom", "Error:Internal error", "-32603", "-32603", ""},
			// The conventions count -32603 and -32000..-32099 as the
			// server's errors: an unknown tool is the client's. Its
			// name is the client's too: the span is named by the
			// method (gen_ai.tool.name still says nope).
			{"tools/call", "Unset:", "-32602", "-32602", ""},
		}
		if era.name == "modern" {
			// Two requests, each a round: the client's retry carries the
			// answer.
			want = append(want, row{"tools/call confirm", "Unset:", "", "", ""}, row{"tools/call confirm", "Unset:", "", "", "1"})
		} else {
			// One request; the bridge runs the handler again with the
			// answer: two server spans, siblings under one client span.
			want = append(want, row{"tools/call confirm", "Unset:", "", "", ""}, row{"tools/call confirm", "Unset:", "", "", "1"})
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("server spans:\n got %v\nwant %v", got, want)
		}

		for _, name := range []string{otel.MetricServerOperationDuration, otel.MetricClientOperationDuration} {
			pts := s.histogram(t, name)
			var n uint64
			byTool := map[string]uint64{}
			for _, p := range pts {
				if !slices.Equal(p.Bounds, []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}) {
					t.Errorf("%s: bounds %v", name, p.Bounds)
				}
				a := attrs(p.Attributes.ToSlice())
				for _, k := range []string{"mcp.session.id", "jsonrpc.request.id", "client.address", "mcpfn.round"} {
					if _, ok := a[k]; ok {
						t.Errorf("%s: high-cardinality attribute %s in %v", name, k, a)
					}
				}
				n += p.Count
				byTool[a["gen_ai.tool.name"]+"|"+a["error.type"]] += p.Count
			}
			// Both halves record the unknown tool's name as _OTHER (names
			// refused with -32602 do not make series).
			unknown := "_OTHER|-32602"
			if byTool["echo|"] != 1 || byTool["fail|tool_error"] != 1 || byTool[unknown] != 1 || byTool["boom|-32603"] != 1 {
				t.Errorf("%s: points by tool %v", name, byTool)
			}
			if n == 0 {
				t.Errorf("%s: no points", name)
			}
		}
	})
}

// The trace and span ids of the propagation tests: a client's
// params._meta.traceparent and its HTTP traceparent header.
const (
	metaTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	metaSpan    = "00f067aa0ba902b7"
	headerTrace = "0af7651916cd43dd8448eb211c80319c"
	headerSpan  = "b7ad6b7169203331"
)

// TestServerParent: the server span's parent is the trace context of
// params._meta when there is one, linked to the HTTP header's; else the
// header's; an X-Amzn-Trace-Id header (the Lambda invocation's X-Ray
// trace id, which adapters/lambda sets) is a link, never the parent;
// baggage reaches the handler; both eras.
func TestServerParent(t *testing.T) {
	t.Parallel()
	const (
		xrayTrace = "5759e988bd862e3fe1be46a994272793"
		xraySpan  = "53995c3f42cd8ad8"
	)
	for _, era := range eras {
		for _, tc := range []struct {
			name               string
			meta, header, xray bool
			trace, parent      string
			link               bool
		}{
			{"meta", true, false, false, metaTrace, metaSpan, false},
			{"header", false, true, false, headerTrace, headerSpan, false},
			{"both", true, true, false, metaTrace, metaSpan, true},
			{"xray", true, false, true, metaTrace, metaSpan, false},
			{"xray-header", false, true, true, headerTrace, headerSpan, false},
		} {
			t.Run(era.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := newSDK(t)
				url := server(t, era.mode, s.opts)
				inject := func(next client.Handler) client.Handler {
					return func(ctx context.Context, c *client.Call) (*client.Outcome, error) {
						if c.Method == "tools/call" {
							if tc.meta {
								c.SetMeta("traceparent", "00-"+metaTrace+"-"+metaSpan+"-01")
								c.SetMeta("baggage", "tenant=acme")
							}
							if tc.header {
								c.SetHeader("Traceparent", "00-"+headerTrace+"-"+headerSpan+"-01")
							}
							if tc.xray {
								c.SetHeader("X-Amzn-Trace-Id", "Root=1-"+xrayTrace[:8]+"-"+xrayTrace[8:]+";Parent="+xraySpan+";Sampled=1")
							}
						}
						return next(ctx, c)
					}
				}
				c := connect(t, url, &client.Options{Mode: era.cmode, NoGETStream: true, Middleware: []client.Middleware{inject}})
				if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
					t.Fatal(err)
				}
				sp := s.span(t, trace.SpanKindServer, "tools/call echo")
				if got := sp.SpanContext().TraceID().String(); got != tc.trace {
					t.Errorf("trace id %s, want %s", got, tc.trace)
				}
				if got := sp.Parent().SpanID().String(); got != tc.parent || !sp.Parent().IsRemote() {
					t.Errorf("parent %s (remote %v), want %s", got, sp.Parent().IsRemote(), tc.parent)
				}
				var links []string
				for _, l := range sp.Links() {
					links = append(links, l.SpanContext.TraceID().String()+"/"+l.SpanContext.SpanID().String())
				}
				sort.Strings(links)
				var want []string
				if tc.link {
					want = append(want, headerTrace+"/"+headerSpan)
				}
				if tc.xray {
					want = append(want, xrayTrace+"/"+xraySpan)
				}
				sort.Strings(want)
				if !slices.Equal(links, want) {
					t.Errorf("links %v, want %v", links, want)
				}
				if sp.Status().Code != codes.Unset {
					t.Errorf("status %v", sp.Status())
				}
			})
		}
	}
}

// TestBaggage: baggage in _meta reaches the handler's context.
func TestBaggage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSDK(t)
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	got := make(chan string, 1)
	srv := newServer(core.ModeModern, s.opts)
	core.AddTool(srv, &core.Tool{Name: "bag"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		carrier := propagation.MapCarrier{}
		prop.Inject(ctx, carrier)
		got <- carrier["baggage"]
		return "ok", nil
	})
	url := serve(t, nethttp.Handler(srv))
	setBaggage := func(next client.Handler) client.Handler {
		return func(ctx context.Context, c *client.Call) (*client.Outcome, error) {
			c.SetMeta("baggage", "tenant=acme")
			return next(ctx, c)
		}
	}
	c := connect(t, url, &client.Options{Mode: client.ModeModern, NoGETStream: true, Middleware: []client.Middleware{setBaggage}})
	if _, err := c.CallTool(ctx, "bag", nil, nil); err != nil {
		t.Fatal(err)
	}
	if b := <-got; b != "tenant=acme" {
		t.Errorf("the handler's baggage %q, want tenant=acme", b)
	}
}

// TestClientInjectsMeta: the client writes its span's trace context into
// params._meta itself (not only the header), in both eras.
func TestClientInjectsMeta(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, era eraCase, s *sdk) {
		ctx := context.Background()
		got := make(chan [2]string, 1)
		srv := core.NewServer(core.Implementation{Name: "test", Version: "1"}, &core.ServerOptions{Mode: era.mode, DisableRequestLog: true})
		core.AddTool(srv, &core.Tool{Name: "meta"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			var m map[string]string
			_ = json.Unmarshal(req.Meta, &m)
			got <- [2]string{m["traceparent"], req.Header.Get("Traceparent")}
			return "ok", nil
		})
		url := serve(t, nethttp.Handler(srv))
		c := connect(t, url, &client.Options{Mode: era.cmode, NoGETStream: true,
			Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)}})
		if _, err := c.CallTool(ctx, "meta", nil, nil); err != nil {
			t.Fatal(err)
		}
		tp := <-got
		span := s.span(t, trace.SpanKindClient, "tools/call meta")
		want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
		if tp[0] != want || tp[1] != want {
			t.Errorf("_meta traceparent %q, header %q, want %q in both", tp[0], tp[1], want)
		}
	})
}

// TestHistogramCardinality: invented method and tool names do not become
// series of the server histogram: legacy methods the server does not serve
// are one series with mcp.method.name _OTHER, unknown tools one with
// gen_ai.tool.name _OTHER; nor span names (_OTHER and tools/call), while
// the spans' attributes keep the names.
func TestHistogramCardinality(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSDK(t)
	url := server(t, core.ModeLegacy, s.opts)
	c := connect(t, url, &client.Options{Mode: client.ModeLegacy, NoGETStream: true})
	for i := range 20 {
		if _, err := c.Call(ctx, fmt.Sprint("x/invented", i), nil, nil); mcp.CodeOf(err) != mcp.CodeMethodNotFound {
			t.Fatalf("x/invented%d: %v, want -32601", i, err)
		}
		if _, err := c.CallTool(ctx, fmt.Sprint("invented", i), nil, nil); mcp.CodeOf(err) != mcp.CodeInvalidParams {
			t.Fatalf("invented%d: %v, want -32602", i, err)
		}
	}
	series := map[string]uint64{}
	for _, p := range s.histogram(t, otel.MetricServerOperationDuration) {
		a := attrs(p.Attributes.ToSlice())
		series[a["mcp.method.name"]+"|"+a["gen_ai.tool.name"]+"|"+a["error.type"]] += p.Count
	}
	// initialize does not reach the middleware (the legacy handshake).
	want := map[string]uint64{"_OTHER||-32601": 20, "tools/call|_OTHER|-32602": 20}
	if fmt.Sprint(series) != fmt.Sprint(want) {
		t.Errorf("series %v, want %v", series, want)
	}
	names := map[string]bool{}
	asked := map[string]bool{}
	for _, sp := range s.ended(trace.SpanKindServer) {
		names[sp.Name()] = true
		a := attrs(sp.Attributes())
		asked[a["mcp.method.name"]+" "+a["gen_ai.tool.name"]] = true
	}
	if want := map[string]bool{"_OTHER": true, "tools/call": true}; !maps.Equal(names, want) {
		t.Errorf("span names %v, want %v", names, want)
	}
	if !asked["x/invented7 "] || !asked["tools/call invented7"] {
		t.Errorf("span attributes %v lack the invented names", asked)
	}
}

// TestTargets: prompts/get is named after the prompt and carries
// gen_ai.prompt.name; resources/read carries mcp.resource.uri but is named
// by the method alone (the conventions keep URIs out of span names), on
// both halves and in both eras; a client's HTTP failure is error.type the
// status.
func TestTargets(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, era eraCase, s *sdk) {
		ctx := context.Background()
		srv := newServer(era.mode, s.opts)
		srv.AddPrompt(&core.Prompt{Name: "greet"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{}, nil
		})
		srv.AddResource(&core.Resource{URI: "test://r/1", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "test://r/1", Text: "x"}}}, nil
		})
		url := serve(t, nethttp.Handler(srv))
		c := connect(t, url, &client.Options{Mode: era.cmode, NoGETStream: true,
			Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)}})
		if _, err := c.GetPrompt(ctx, "greet", nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadResource(ctx, "test://r/1", nil); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []trace.SpanKind{trace.SpanKindServer, trace.SpanKindClient} {
			got := map[string]map[string]string{}
			for _, sp := range s.ended(kind) {
				got[sp.Name()] = attrs(sp.Attributes())
			}
			if a := got["prompts/get greet"]; a == nil || a["gen_ai.prompt.name"] != "greet" || a["gen_ai.tool.name"] != "" {
				t.Errorf("%v: prompts/get greet span attributes %v (spans %v)", kind, a, slices.Sorted(maps.Keys(got)))
			}
			if a := got["resources/read"]; a == nil || a["mcp.resource.uri"] != "test://r/1" {
				t.Errorf("%v: resources/read span attributes %v (spans %v)", kind, a, slices.Sorted(maps.Keys(got)))
			}
		}
		// The histograms leave the URI out (opt-in in the conventions).
		for _, name := range []string{otel.MetricServerOperationDuration, otel.MetricClientOperationDuration} {
			for _, p := range s.histogram(t, name) {
				if _, ok := p.Attributes.Value("mcp.resource.uri"); ok {
					t.Errorf("%s has mcp.resource.uri: %v", name, p.Attributes.ToSlice())
				}
			}
		}
	})

	t.Run("http-error", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		s := newSDK(t)
		// A front that answers every request 503 without a JSON-RPC error
		// (Retry-After 0: the client's retries of a 503 do not wait).
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "down", http.StatusServiceUnavailable)
		}))
		defer down.Close()
		c, err := client.Connect(ctx, down.URL+nethttp.DefaultPath, &client.Options{Mode: client.ModeModern, NoGETStream: true,
			Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)}})
		if err == nil {
			defer c.Close()
			_, err = c.Call(ctx, "ping", nil, nil)
		}
		var he *client.HTTPError
		if !errors.As(err, &he) {
			t.Fatalf("a request to a 503 front: %v, want an *HTTPError", err)
		}
		var found bool
		for _, sp := range s.ended(trace.SpanKindClient) {
			a := attrs(sp.Attributes())
			if a["error.type"] == strconv.Itoa(he.StatusCode) && sp.Status().Code == codes.Error && a["rpc.response.status_code"] == "" {
				found = true
			}
		}
		if !found {
			t.Errorf("no client span with error.type %d among %d", he.StatusCode, len(s.ended(trace.SpanKindClient)))
		}
	})
}

// TestClientTimeout: a Call that ends by the caller's deadline is
// error.type "timeout" with status Error.
func TestClientTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSDK(t)
	url := server(t, core.ModeModern, otel.Options{})
	c := connect(t, url, &client.Options{Mode: client.ModeModern, NoGETStream: true,
		Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)}})
	expired, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
	defer cancel()
	if _, err := c.Call(expired, "ping", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ping with an expired deadline: %v", err)
	}
	var types []string
	for _, sp := range s.ended(trace.SpanKindClient) {
		if sp.Name() == "ping" {
			types = append(types, attrs(sp.Attributes())["error.type"]+"/"+sp.Status().Code.String())
		}
	}
	if !slices.Equal(types, []string{"timeout/Error"}) {
		t.Errorf("ping spans %v, want [timeout/Error]", types)
	}
}

// TestRoundLinks: the rounds of one logical call are tied together. A
// legacy call whose handler asks for input over the bridge runs its
// rounds as sibling server spans in one HTTP request, the later one
// linked to the first (link type first_round); a 2026-07-28 retry is a
// new request whose server span is the child of its own client round
// span, and both client rounds are children of the caller's span.
func TestRoundLinks(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, era eraCase, s *sdk) {
		ctx := context.Background()
		url := server(t, era.mode, s.opts)
		c := connect(t, url, &client.Options{Mode: era.cmode, NoGETStream: true, Elicitation: accept,
			Middleware: []client.Middleware{otel.ClientMiddleware(s.opts)}})
		tr := s.opts.TracerProvider.Tracer("test")
		cctx, caller := tr.Start(ctx, "caller")
		if _, err := c.CallTool(cctx, "confirm", nil, nil); err != nil {
			t.Fatal(err)
		}
		caller.End()

		var rounds []sdktrace.ReadOnlySpan
		for _, sp := range s.ended(trace.SpanKindServer) {
			if sp.Name() == "tools/call confirm" {
				rounds = append(rounds, sp)
			}
		}
		if len(rounds) != 2 {
			t.Fatalf("%d server spans of confirm, want 2", len(rounds))
		}
		first, second := rounds[0], rounds[1]
		var linked []string
		for _, l := range second.Links() {
			if attrs(l.Attributes)["mcpfn.link.type"] == "first_round" {
				linked = append(linked, l.SpanContext.SpanID().String())
			}
		}
		for _, l := range first.Links() {
			if attrs(l.Attributes)["mcpfn.link.type"] == "first_round" {
				t.Errorf("the first round links to %s", l.SpanContext.SpanID())
			}
		}
		clients := map[trace.SpanID]sdktrace.ReadOnlySpan{}
		for _, sp := range s.ended(trace.SpanKindClient) {
			if sp.Name() == "tools/call confirm" {
				clients[sp.SpanContext().SpanID()] = sp
			}
		}
		if era.name == "legacy" {
			if !slices.Equal(linked, []string{first.SpanContext().SpanID().String()}) {
				t.Errorf("second round links %v, want the first round %s", linked, first.SpanContext().SpanID())
			}
			if first.Parent().SpanID() != second.Parent().SpanID() || len(clients) != 1 {
				t.Errorf("bridge rounds: parents %s and %s, %d client spans; want siblings under one", first.Parent().SpanID(), second.Parent().SpanID(), len(clients))
			}
			return
		}
		if len(linked) != 0 {
			t.Errorf("a 2026-07-28 retry links %v: its rounds are requests of their own", linked)
		}
		if len(clients) != 2 {
			t.Fatalf("%d client spans, want one per round", len(clients))
		}
		for _, sp := range rounds {
			cs, ok := clients[sp.Parent().SpanID()]
			if !ok {
				t.Errorf("server round %s has no client round as parent", sp.SpanContext().SpanID())
				continue
			}
			if cs.Parent().SpanID() != caller.SpanContext().SpanID() {
				t.Errorf("client round's parent %s, want the caller %s", cs.Parent().SpanID(), caller.SpanContext().SpanID())
			}
		}
	})
}

// TestAmbientSpan: a span already in the server's context (an HTTP
// instrumentation around the handler, as otelhttp's) is the parent when
// the request's _meta has no trace context, and a link of type transport
// when _meta names another parent.
func TestAmbientSpan(t *testing.T) {
	t.Parallel()
	const metaTrace, metaSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, withMeta := range []bool{false, true} {
		t.Run(fmt.Sprint("meta=", withMeta), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newSDK(t)
			srv := newServer(core.ModeModern, s.opts)
			core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				return "echo", nil
			})
			tr := s.opts.TracerProvider.Tracer("http")
			h := nethttp.Handler(srv)
			ambient := make(chan trace.SpanContext, 8)
			url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rctx, sp := tr.Start(r.Context(), "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer))
				defer sp.End()
				if r.Header.Get("Mcp-Method") == "tools/call" {
					ambient <- sp.SpanContext()
				}
				h.ServeHTTP(w, r.WithContext(rctx))
			}))
			inject := func(next client.Handler) client.Handler {
				return func(ctx context.Context, c *client.Call) (*client.Outcome, error) {
					if withMeta && c.Method == "tools/call" {
						c.SetMeta("traceparent", "00-"+metaTrace+"-"+metaSpan+"-01")
					}
					return next(ctx, c)
				}
			}
			c := connect(t, url, &client.Options{Mode: client.ModeModern, NoGETStream: true, Middleware: []client.Middleware{inject}})
			if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
				t.Fatal(err)
			}
			amb := <-ambient
			sp := s.span(t, trace.SpanKindServer, "tools/call echo")
			var links []string
			for _, l := range sp.Links() {
				links = append(links, attrs(l.Attributes)["mcpfn.link.type"]+":"+l.SpanContext.SpanID().String())
			}
			if !withMeta {
				if sp.Parent().SpanID() != amb.SpanID() || len(links) != 0 {
					t.Errorf("parent %s, links %v; want the ambient span %s and no link", sp.Parent().SpanID(), links, amb.SpanID())
				}
				return
			}
			if sp.Parent().SpanID().String() != metaSpan || sp.SpanContext().TraceID().String() != metaTrace {
				t.Errorf("parent %s in trace %s, want _meta's %s in %s", sp.Parent().SpanID(), sp.SpanContext().TraceID(), metaSpan, metaTrace)
			}
			if want := []string{"transport:" + amb.SpanID().String()}; !slices.Equal(links, want) {
				t.Errorf("links %v, want %v", links, want)
			}
		})
	}
}

// TestServerParentEscapedMeta: a _meta member name written with a JSON
// escape is the same name (RFC 8259 §7): the trace context it holds is the
// parent, even though the server skips extraction for a _meta that names
// no trace context member.
func TestServerParentEscapedMeta(t *testing.T) {
	t.Parallel()
	const metaTrace, metaSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	s := newSDK(t)
	url := server(t, core.ModeModern, s.opts)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"\u0074raceparent":"00-` + metaTrace + `-` + metaSpan + `-01"}}}`
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}
	res, err := (&mcptest.Client{URL: url}).Post(context.Background(), []byte(body), h, nil)
	if err != nil || res.Error != nil {
		t.Fatalf("tools/call echo: %v %v", err, res)
	}
	sp := s.span(t, trace.SpanKindServer, "tools/call echo")
	if sp.Parent().SpanID().String() != metaSpan || sp.SpanContext().TraceID().String() != metaTrace {
		t.Errorf("parent %s in trace %s, want the escaped _meta member's %s in %s", sp.Parent().SpanID(), sp.SpanContext().TraceID(), metaSpan, metaTrace)
	}
}

// TestBatchElements: each request of a 2025-03-26 JSON-RPC batch is its own
// server span, with its own jsonrpc.request.id and target, and the same
// session digest; a batch element naming an unknown tool ends in -32602
// without changing its siblings.
func TestBatchElements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSDK(t)
	url := server(t, core.ModeLegacy, s.opts)
	c := &mcptest.Client{URL: url}
	if _, err := c.Initialize(ctx, "2025-03-26", nil); err != nil {
		t.Fatal(err)
	}
	batch := `[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":3,"method":"ping"}]`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(batch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.SessionID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answers []json.RawMessage
	err = json.NewDecoder(resp.Body).Decode(&answers)
	resp.Body.Close()
	if err != nil || len(answers) != 3 {
		t.Fatalf("batch answered HTTP %d with %d messages (%v), want 3", resp.StatusCode, len(answers), err)
	}
	got := map[string]string{}
	sessions := map[string]bool{}
	for _, sp := range s.ended(trace.SpanKindServer) {
		a := attrs(sp.Attributes())
		if a["mcp.protocol.version"] != "2025-03-26" || a["mcp.method.name"] == "initialize" {
			continue
		}
		got[a["jsonrpc.request.id"]] = sp.Name() + "|" + a["error.type"]
		sessions[a["mcp.session.id"]] = true
	}
	// nope is not the server's tool: its span is named by the method.
	want := map[string]string{"a": "tools/call echo|", "2": "tools/call|-32602", "3": "ping|"}
	if !maps.Equal(got, want) {
		t.Errorf("batch spans by request id %v, want %v", got, want)
	}
	if len(sessions) != 1 || sessions[""] {
		t.Errorf("session digests %v, want one", sessions)
	}
}

// TestPanicBelow: a panic below the otel Middleware (a later middleware;
// a handler's panic is recovered by the server before it reaches the
// chain) ends the span as a -32603 with status Error and records the
// histogram point, and the server still answers -32603.
func TestPanicBelow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSDK(t)
	boom := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
			if c.Method == "tools/call" {
				panic("middleware boom")
			}
			return next(ctx, c)
		}
	}
	srv := core.NewServer(core.Implementation{Name: "test", Version: "1"}, &core.ServerOptions{
		Mode: core.ModeModern, DisableRequestLog: true, Logger: slog.New(slog.DiscardHandler),
		Middleware: []core.Middleware{otel.Middleware(s.opts), boom},
	})
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "echo", nil
	})
	url := serve(t, nethttp.Handler(srv))
	c := connect(t, url, &client.Options{Mode: client.ModeModern, NoGETStream: true})
	if _, err := c.CallTool(ctx, "echo", nil, nil); mcp.CodeOf(err) != mcp.CodeInternalError {
		t.Fatalf("echo: %v, want a -32603", err)
	}
	var found bool
	for _, sp := range s.ended(trace.SpanKindServer) {
		if sp.Name() == "tools/call echo" {
			found = true
			if a := attrs(sp.Attributes()); a["error.type"] != "-32603" || sp.Status().Code != codes.Error {
				t.Errorf("span error.type %q status %v, want -32603 Error", a["error.type"], sp.Status())
			}
		}
	}
	if !found {
		t.Fatal("no server span tools/call echo")
	}
	points := 0
	for _, p := range s.histogram(t, otel.MetricServerOperationDuration) {
		if a := attrs(p.Attributes.ToSlice()); a["error.type"] == "-32603" && a["mcp.method.name"] == "tools/call" {
			points += int(p.Count)
		}
	}
	if points != 1 {
		t.Errorf("%d histogram points of the panicked call, want 1", points)
	}
}
