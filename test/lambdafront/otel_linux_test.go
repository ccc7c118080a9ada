package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// The telemetry tests run internal/otelfn (deploy/lambdaenv's StartWith
// with the otel module and the OpenTelemetry SDK, whose batches leave only
// when flushed) behind the Function URL door, under lambdafront's Runtime
// API with -freeze: a sandbox's process is stopped (SIGSTOP) once it asks
// for the next invocation, as Lambda freezes it. What the exporters wrote
// by then is all that would leave a frozen Lambda sandbox.

// otelBins are the telemetry bootstrap.
var otelBins = lambdaBinaries("./test/lambdafront/internal/otelfn")

// otelRig is otelfn behind a Function URL door.
type otelRig struct {
	t       *testing.T
	door    *server
	spans   string             // the file of the span exporter
	metrics string             // the file of the metric exporter
	frozen  chan freezeInfo    // the door's freezes
	out     *mcptest.LogBuffer // the function's output
}

type freezeInfo struct{ pid, served int }

type otelConfig struct {
	Runtime   Runtime
	Streaming bool
	Freeze    bool
	Env       []string
}

func startOtelRig(t *testing.T, cfg otelConfig) *otelRig {
	t.Helper()
	bootstrap, rie := rigBootstrap(t, "telemetry", otelBins, "otelfn", cfg.Runtime)
	dir := t.TempDir()
	r := &otelRig{t: t, spans: filepath.Join(dir, "spans.json"), metrics: filepath.Join(dir, "metrics.json"),
		frozen: make(chan freezeInfo, 16), out: &mcptest.LogBuffer{}}
	env := append(os.Environ(), "AWS_LAMBDA_FUNCTION_NAME=otelfn", "AWS_LAMBDA_LOG_FORMAT=JSON",
		"OTELFN_SPANS="+r.spans, "OTELFN_METRICS="+r.metrics, "OTEL_SERVICE_NAME=calc-service", "POWERTOOLS_SERVICE_NAME=",
		"MCPFN_DYNAMODB_TABLE=", "MCPFN_KEYS_SECRET_ID=", "MCPFN_TASK_RUNNER=", "MCPFN_LOG_LEVEL=")
	mode := ModeBuffered
	if cfg.Streaming {
		mode = ModeStreaming
		env = append(env, "MCPFN_STREAMING=1")
	}
	env = append(env, cfg.Env...)
	r.door = startDoor(t, config{
		Door: DoorFunctionURL, Mode: mode, Runtime: cfg.Runtime, Bootstrap: bootstrap, RIE: rie,
		Concurrency: 1, Timeout: 20 * time.Second, Env: env, Log: r.out, Freeze: cfg.Freeze,
		OnFreeze: func(_, pid, served int) {
			select {
			case r.frozen <- freezeInfo{pid, served}:
			default:
			}
		},
	})
	return r
}

// add calls the add tool through the door and checks the answer.
func (r *otelRig) add(a, b int) {
	r.t.Helper()
	body := toolCall("add", fmt.Sprintf(`{"a":%d,"b":%d}`, a, b))
	res, b2 := do(r.t, http.MethodPost, r.door.URL()+"/mcp", body, toolCallHeader("add", ""))
	if want := fmt.Sprintf(`"text":"%d"`, a+b); res.StatusCode != 200 || !bytes.Contains(b2, []byte(want)) {
		r.t.Fatalf("tools/call add: %d %s", res.StatusCode, b2)
	}
}

// waitFrozen waits until the function's process is stopped after its
// served-th invocation.
func (r *otelRig) waitFrozen(served int) freezeInfo {
	r.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case f := <-r.frozen:
			if f.served == served {
				return f
			}
		case <-timeout:
			r.t.Fatalf("the sandbox was not frozen after invocation %d", served)
		}
	}
}

// exported returns the names of the spans and the metrics the exporters
// have written to their files.
func (r *otelRig) exported() (spans, metrics []string) {
	r.t.Helper()
	b, _ := os.ReadFile(r.spans)
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var sp struct {
			Name     string
			SpanKind int
		}
		if err := dec.Decode(&sp); err != nil {
			break
		}
		spans = append(spans, fmt.Sprintf("%s (kind %d)", sp.Name, sp.SpanKind))
	}
	b, _ = os.ReadFile(r.metrics)
	dec = json.NewDecoder(bytes.NewReader(b))
	for {
		var m struct {
			ScopeMetrics []struct {
				Metrics []struct{ Name string }
			}
		}
		if err := dec.Decode(&m); err != nil {
			break
		}
		for _, sm := range m.ScopeMetrics {
			for _, mt := range sm.Metrics {
				metrics = append(metrics, mt.Name)
			}
		}
	}
	return spans, metrics
}

// serverSpan is the server span of tools/call add as the stdout exporter
// writes it (SpanKind 2 is SERVER).
const serverSpan = "tools/call add (kind 2)"

// TestTelemetryFlushedBeforeFreeze: with StartWith's Flush, the server
// span and the duration histogram of an invocation have reached their
// exporters when the sandbox is frozen after it, buffered and streamed;
// the client has its answer before the export ends (it is held until the
// client has it). Without Flush, the frozen sandbox holds them: nothing is
// exported.
func TestTelemetryFlushedBeforeFreeze(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			t.Parallel()
			phases := make(chan string, 8)
			answered := make(chan struct{})
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				phase := req.URL.Query().Get("phase")
				phases <- phase
				if phase == "start" {
					// The export waits until the client has its answer.
					select {
					case <-answered:
					case <-req.Context().Done():
					}
				}
			}))
			t.Cleanup(hook.Close)
			r := startOtelRig(t, otelConfig{Runtime: RuntimeStream, Streaming: streaming, Freeze: true,
				Env: []string{"OTELFN_EXPORT_HOOK=" + hook.URL, "OTELFN_FLUSH_TIMEOUT=20s"}})

			r.add(40, 2)
			close(answered)
			f := r.waitFrozen(1)
			// Frozen: nothing more can be written.
			spans, metrics := r.exported()
			if !contains(spans, serverSpan) {
				t.Errorf("spans exported by the freeze: %q, want %q", spans, serverSpan)
			}
			if !contains(metrics, "mcp.server.operation.duration") {
				t.Errorf("metrics exported by the freeze: %q, want mcp.server.operation.duration", metrics)
			}
			if got := drain(phases); strings.Join(got, " ") != "start done" {
				t.Errorf("export phases %q, want one export, started before the freeze and done", got)
			}
			if !stopped(f.pid) {
				t.Errorf("process %d is not stopped after the freeze", f.pid)
			}

			// The next invocation thaws it; its telemetry leaves too.
			r.add(1, 2)
			r.waitFrozen(2)
			if spans, _ := r.exported(); count(spans, serverSpan) != 2 {
				t.Errorf("spans after two invocations: %q, want two %q", spans, serverSpan)
			}
		})
	}

	t.Run("without flush", func(t *testing.T) {
		t.Parallel()
		r := startOtelRig(t, otelConfig{Runtime: RuntimeStream, Freeze: true, Env: []string{"OTELFN_FLUSH=0"}})
		r.add(40, 2)
		r.waitFrozen(1)
		if spans, metrics := r.exported(); len(spans) != 0 || len(metrics) != 0 {
			t.Errorf("without Flush, the frozen sandbox exported spans %q and metrics %q: the test cannot tell a flush", spans, metrics)
		}
	})
}

// TestTelemetryEmulator: under the Runtime Interface Emulator, the answer
// that flushes when sent (adapters/lambda's reader of the buffered
// response's JSON) is accepted, and the span of the invocation is
// exported once it is over.
func TestTelemetryEmulator(t *testing.T) {
	t.Parallel()
	phases := make(chan string, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		phases <- req.URL.Query().Get("phase")
	}))
	t.Cleanup(hook.Close)
	r := startOtelRig(t, otelConfig{Runtime: RuntimeRIE, Env: []string{"OTELFN_EXPORT_HOOK=" + hook.URL}})
	r.add(40, 2)
	for want := range strings.FieldsSeq("start done") {
		select {
		case got := <-phases:
			if got != want {
				t.Fatalf("export phase %q, want %q", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no export %s after the invocation", want)
		}
	}
	if spans, _ := r.exported(); !contains(spans, serverSpan) {
		t.Errorf("spans exported: %q, want %q", spans, serverSpan)
	}
}

// TestLambdaLogFields: the function's JSON logs under the Runtime API have
// the Powertools fields: the request record of the first invocation of
// the sandbox has cold_start true, the second's false; each has the
// function's name, the service (OTEL_SERVICE_NAME), the invocation's
// request id (function_request_id, as requestId) and the Root of its trace
// header (xray_trace_id), and the request's duration in milliseconds.
func TestLambdaLogFields(t *testing.T) {
	t.Parallel()
	r := startOtelRig(t, otelConfig{Runtime: RuntimeStream})
	r.add(1, 2)
	r.add(3, 4)
	r.door.pool.Close() // the output is whole once the process has ended
	type rec struct {
		Message    string   `json:"message"`
		ColdStart  *bool    `json:"cold_start"`
		Function   string   `json:"function_name"`
		Service    string   `json:"service"`
		RequestID  string   `json:"function_request_id"`
		LambdaID   string   `json:"requestId"`
		XRay       string   `json:"xray_trace_id"`
		DurationMS *float64 `json:"duration_ms"`
		Duration   any      `json:"duration"`
	}
	var recs []rec
	sc := bufio.NewScanner(strings.NewReader(r.out.String()))
	for sc.Scan() {
		_, line, _ := strings.Cut(sc.Text(), "] ") // the door's [fn N] prefix
		var x rec
		if json.Unmarshal([]byte(line), &x) == nil && x.Message == "mcp request" {
			recs = append(recs, x)
		}
	}
	if len(recs) != 2 {
		t.Fatalf("%d request records, want 2; output:\n%s", len(recs), r.out.String())
	}
	xray := regexp.MustCompile(`^1-[0-9a-f]{8}-[0-9a-f]{24}$`)
	for i, x := range recs {
		if x.ColdStart == nil || *x.ColdStart != (i == 0) {
			t.Errorf("invocation %d: cold_start %v, want %v", i+1, x.ColdStart, i == 0)
		}
		if x.Function != "otelfn" || x.Service != "calc-service" || x.RequestID == "" || x.RequestID != x.LambdaID || !xray.MatchString(x.XRay) {
			t.Errorf("invocation %d: %+v, want function otelfn, service calc-service, its request id, its X-Ray trace id", i+1, x)
		}
		if x.DurationMS == nil || *x.DurationMS <= 0 || x.Duration != nil {
			t.Errorf("invocation %d: duration_ms %v, duration %v; want milliseconds only", i+1, x.DurationMS, x.Duration)
		}
	}
	if recs[0].RequestID == recs[1].RequestID || recs[0].XRay == recs[1].XRay {
		t.Errorf("two invocations with the same request or trace id: %+v", recs)
	}
}

// stopped reports whether pid is stopped (SIGSTOP).
func stopped(pid int) bool {
	state, ok := procState(pid)
	return ok && strings.HasPrefix(state, "T")
}

func contains(list []string, s string) bool { return count(list, s) > 0 }

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// drain returns what c holds now.
func drain(c chan string) []string {
	var out []string
	for {
		select {
		case s := <-c:
			out = append(out, s)
		default:
			return out
		}
	}
}
