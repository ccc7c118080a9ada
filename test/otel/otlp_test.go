package otel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// receiver is an OTLP/HTTP receiver (OTLP specification, "OTLP/HTTP":
// POST /v1/traces and /v1/metrics, binary protobuf bodies) that decodes the
// requests into the OTLP protobuf messages and hands them to the test.
type receiver struct {
	*httptest.Server
	spans   chan *tracepb.Span
	metrics chan string // the names of the metrics received
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{spans: make(chan *tracepb.Span, 64), metrics: make(chan string, 64)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
		if err != nil {
			t.Errorf("receiver: %v", err)
			return
		}
		if ct := req.Header.Get("Content-Type"); req.Method != http.MethodPost || ct != "application/x-protobuf" {
			t.Errorf("receiver: %s %s with content type %q, want POST application/x-protobuf", req.Method, req.URL.Path, ct)
		}
		var res proto.Message
		switch req.URL.Path {
		case "/v1/traces":
			var m coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &m); err != nil {
				t.Errorf("receiver: /v1/traces body is not an ExportTraceServiceRequest: %v", err)
			}
			for _, rs := range m.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, sp := range ss.Spans {
						r.spans <- sp
					}
				}
			}
			res = &coltracepb.ExportTraceServiceResponse{}
		case "/v1/metrics":
			var m colmetricspb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &m); err != nil {
				t.Errorf("receiver: /v1/metrics body is not an ExportMetricsServiceRequest: %v", err)
			}
			for _, rm := range m.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, mt := range sm.Metrics {
						if mt.GetHistogram() != nil {
							r.metrics <- mt.Name
						}
					}
				}
			}
			res = &colmetricspb.ExportMetricsServiceResponse{}
		default:
			t.Errorf("receiver: unexpected %s %s", req.Method, req.URL.Path)
			w.WriteHeader(http.StatusNotFound)
			return
		}
		out, _ := proto.Marshal(res)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// buildExample builds examples/otel into the test's temporary directory.
func buildExample(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "otel-example")
	cmd := exec.Command("go", "build", "-o", bin, "./otel")
	cmd.Dir = filepath.Join("..", "..", "examples")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/otel: %v\n%s", err, out)
	}
	return bin
}

// otlpEnv is the environment that makes examples/otel export its spans,
// and its metrics when metrics is "otlp" ("none": not), over OTLP/HTTP to
// endpoint (a receiver's URL), followed by extra. The batch span processor
// waits ten minutes, so spans leave at shutdown only.
func otlpEnv(endpoint, metrics string, extra ...string) []string {
	return append([]string{
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=" + metrics, "OTEL_LOGS_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_PROPAGATORS=", "OTEL_SERVICE_NAME=calculator", "OTEL_BSP_SCHEDULE_DELAY=600000",
	}, extra...)
}

// startExample runs bin with env and returns its MCP endpoint (from the
// line it logs once it listens) and the command.
func startExample(t *testing.T, bin string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, url, ok := strings.Cut(sc.Text(), "serving MCP on "); ok {
			go io.Copy(io.Discard, stderr) // keep the pipe drained
			return url, cmd
		}
	}
	t.Fatalf("examples/otel exited before serving: %v", cmd.Wait())
	return "", nil
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		}
	}
	return m
}

// TestOTLPExport runs examples/otel as a process exporting over OTLP/HTTP
// (OTEL_TRACES_EXPORTER=otlp, OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf) to
// a receiver that decodes the real OTLP protobuf, calls its add tool over
// 2026-07-28 with params._meta.traceparent, sends SIGTERM, and checks the
// server span the exporter flushed: the caller's trace id and parent span
// id, name "tools/call add", kind SERVER, the conventions' attributes; and
// the mcp.server.operation.duration histogram.
func TestOTLPExport(t *testing.T) {
	t.Parallel()
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	rcv := newReceiver(t)
	url, cmd := startExample(t, buildExample(t), otlpEnv(rcv.URL, "otlp", "OTEL_METRIC_EXPORT_INTERVAL=600000")...)

	ctx := context.Background()
	res, err := (&mcptest.Client{URL: url}).Call(ctx, "tools/call", map[string]any{
		"name": "add", "arguments": map[string]any{"left": 40, "right": 2},
		"_meta": map[string]any{"traceparent": "00-" + traceID + "-" + spanID + "-01"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Result), `"42"`) {
		t.Fatalf("tools/call add answered %s %v", res.Result, res.Error)
	}
	// The batcher's delay is ten minutes: only the shutdown on SIGTERM
	// flushes the span.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	timeout := time.After(30 * time.Second)
	var sp *tracepb.Span
	for sp == nil {
		select {
		case s := <-rcv.spans:
			if s.Name == "tools/call add" {
				sp = s
			}
		case <-timeout:
			t.Fatal("no span tools/call add reached the receiver")
		}
	}
	if got := hex.EncodeToString(sp.TraceId); got != traceID {
		t.Errorf("trace id %s, want the _meta traceparent's %s", got, traceID)
	}
	if got := hex.EncodeToString(sp.ParentSpanId); got != spanID {
		t.Errorf("parent span id %s, want the _meta traceparent's %s", got, spanID)
	}
	if sp.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("kind %v, want SERVER", sp.Kind)
	}
	a := attrMap(sp.Attributes)
	for k, v := range map[string]string{
		"mcp.method.name": "tools/call", "mcp.protocol.version": "2026-07-28", "gen_ai.tool.name": "add",
		"gen_ai.operation.name": "execute_tool", "jsonrpc.request.id": "1", "network.protocol.name": "http",
		"network.transport": "tcp", "client.address": "127.0.0.1",
	} {
		if a[k] != v {
			t.Errorf("attribute %s = %q, want %q (all: %v)", k, a[k], v, a)
		}
	}
	if _, ok := a["error.type"]; ok || sp.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a successful call has error.type %q, status %v", a["error.type"], sp.Status)
	}
	for {
		select {
		case name := <-rcv.metrics:
			if name == "mcp.server.operation.duration" {
				if err := cmd.Wait(); err != nil {
					t.Errorf("examples/otel after SIGTERM: %v", err)
				}
				return
			}
		case <-timeout:
			t.Fatal("no mcp.server.operation.duration histogram reached the receiver")
		}
	}
}
