package lambdaenv_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

// invocationContext is the context aws-lambda-go gives an invocation: its
// lambdacontext and its trace header (under aws-lambda-go's string key).
func invocationContext(ctx context.Context, requestID, trace string) context.Context {
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID,
		InvokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:calc"})
	//nolint:staticcheck // aws-lambda-go's key is this string
	return context.WithValue(ctx, "x-amzn-trace-id", trace)
}

// TestLambdaLogFields: on Lambda (AWS_LAMBDA_FUNCTION_NAME set) a record
// logged with an invocation's context has the Powertools fields, and its
// durations are milliseconds under key_ms, in both log formats; the
// service is POWERTOOLS_SERVICE_NAME, else OTEL_SERVICE_NAME, else the
// function's name. Off Lambda, a record keeps requestId only, and its
// duration.
func TestLambdaLogFields(t *testing.T) {
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	ctx := invocationContext(t.Context(), "req-9", trace)
	for _, c := range []struct {
		name, service string
		env           []string
	}{
		{"powertools", "orders", []string{"POWERTOOLS_SERVICE_NAME", "orders", "OTEL_SERVICE_NAME", "otel-orders"}},
		{"otel", "otel-orders", []string{"POWERTOOLS_SERVICE_NAME", "", "OTEL_SERVICE_NAME", "otel-orders"}},
		{"function", "calc", []string{"POWERTOOLS_SERVICE_NAME", "", "OTEL_SERVICE_NAME", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			setenv(t, append([]string{"AWS_LAMBDA_LOG_FORMAT", "JSON", "AWS_LAMBDA_FUNCTION_NAME", "calc",
				"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512"}, c.env...)...)
			cfg, lines := loadStderr(t)
			cfg.Server.Logger.With("took", 2*time.Second).InfoContext(ctx, "hello", "duration", 1234567*time.Nanosecond)
			line, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			var rec map[string]any
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			want := map[string]any{
				"message": "hello", "level": "INFO", "service": c.service, "function_name": "calc",
				"function_memory_size": 512.0, "function_request_id": "req-9", "requestId": "req-9",
				"function_arn":  "arn:aws:lambda:us-east-1:123456789012:function:calc",
				"xray_trace_id": "1-5759e988-bd862e3fe1be46a994272793", "duration_ms": 1.235, "took_ms": 2000.0,
			}
			for k, v := range want {
				if rec[k] != v {
					t.Errorf("%s = %#v, want %#v (%s)", k, rec[k], v, line)
				}
			}
			for _, k := range []string{"duration", "took", "cold_start"} {
				if _, ok := rec[k]; ok {
					t.Errorf("the record has %s: %s", k, line)
				}
			}
		})
	}

	t.Run("text", func(t *testing.T) {
		setenv(t, "AWS_LAMBDA_FUNCTION_NAME", "calc")
		cfg, lines := loadStderr(t)
		cfg.Server.Logger.InfoContext(ctx, "hello", "duration", 1500*time.Microsecond)
		line, _ := lines.ReadString('\n')
		for _, want := range []string{"msg=hello", "service=calc", "function_name=calc", "duration_ms=1.5",
			"function_request_id=req-9", "xray_trace_id=1-5759e988-bd862e3fe1be46a994272793"} {
			if !strings.Contains(line, want) {
				t.Errorf("text line %q lacks %s", line, want)
			}
		}
	})

	t.Run("off lambda", func(t *testing.T) {
		setenv(t, "AWS_LAMBDA_LOG_FORMAT", "JSON")
		cfg, lines := loadStderr(t)
		cfg.Server.Logger.InfoContext(ctx, "hello", "duration", time.Millisecond)
		line, _ := lines.ReadBytes('\n')
		var rec map[string]any
		json.Unmarshal(line, &rec)
		if rec["requestId"] != "req-9" || rec["duration"] != float64(time.Millisecond) {
			t.Errorf("off Lambda: %s, want requestId and the duration in nanoseconds", line)
		}
		for _, k := range []string{"service", "function_name", "function_request_id", "xray_trace_id", "duration_ms"} {
			if _, ok := rec[k]; ok {
				t.Errorf("off Lambda the record has %s: %s", k, line)
			}
		}
	})
}

// TestStartWithChild is the Lambda function of TestStartWith, run in a
// child process of the test binary: StartWith with a middleware that
// logs, and a Flusher that reports to the Runtime API's server.
func TestStartWithChild(t *testing.T) {
	hook := os.Getenv("LAMBDAENV_TEST_FLUSH_HOOK")
	if hook == "" {
		t.Skip("run by TestStartWith")
	}
	flush := flusherFunc(func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hook, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return res.Body.Close()
	})
	var log *slog.Logger // the kit's, from Configure
	mw := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
			log.InfoContext(ctx, "middleware", "method", c.Method)
			return next(ctx, c)
		}
	}
	lambdaenv.StartWith(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."},
			func(ctx context.Context, req *core.CallToolRequest, in struct{ A, B int }) (int, error) {
				return in.A + in.B, nil
			})
	}, &lambdaenv.Options{
		Middleware: []core.Middleware{mw},
		Flush:      []lambda.Flusher{flush},
		Configure: func(cfg *lambdaenv.Config) {
			log = cfg.Server.Logger
			cfg.Server.Instructions = "Adds numbers."
		},
	})
}

type flusherFunc func(context.Context) error

func (f flusherFunc) ForceFlush(ctx context.Context) error { return f(ctx) }

// TestStartWith runs StartWith as a Lambda function does (in its own
// process, under a Runtime API handing out two invocations, each with a
// trace header, with Lambda's JSON log format) and checks the options and
// the log: the middleware runs, the Flusher is flushed after each
// response and before the next invocation is asked for, and every record
// of an invocation has the Powertools fields, cold_start true for the
// first invocation only (never with provisioned concurrency), with the
// request record's duration in ms.
func TestStartWith(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a child process")
	}
	t.Run("on demand", func(t *testing.T) { testStartWith(t, "on-demand") })
	t.Run("provisioned", func(t *testing.T) { testStartWith(t, "provisioned-concurrency") })
}

func testStartWith(t *testing.T, initType string) {
	traces := []string{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
		"Root=1-5759e989-0123456789abcdef01234567;Parent=53995c3f42cd8ad9;Sampled=0"}
	event := functionURLEvent(t)
	var mu sync.Mutex
	var seen []string
	record := func(s string) {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	n := 0
	third, stop := make(chan struct{}), make(chan struct{})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/flushed":
			record("flush")
		case r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next":
			record("next")
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			if k > len(traces) {
				close(third)
				<-stop
				w.WriteHeader(http.StatusGone)
				return
			}
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", fmt.Sprint("req-", k))
			w.Header().Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(time.Minute).UnixMilli()))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:calc")
			w.Header().Set("Lambda-Runtime-Trace-Id", traces[k-1])
			w.Write(event)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/response"):
			body, _ := io.ReadAll(r.Body)
			if !bytes.Contains(body, []byte(`\"text\":\"3\"`)) {
				t.Errorf("tools/call add 1 2: %s", body)
			}
			record("response")
			w.WriteHeader(http.StatusAccepted)
		default:
			unexpectedRuntimeCall(t, w, r)
		}
	}))
	t.Cleanup(func() { close(stop); api.Close() })

	cmd, stderr := runChild(t, "TestStartWithChild", api.URL, "LAMBDAENV_TEST_FLUSH_HOOK="+api.URL+"/flushed",
		"POWERTOOLS_SERVICE_NAME=", "OTEL_SERVICE_NAME=",
		"AWS_LAMBDA_LOG_FORMAT=JSON", "AWS_LAMBDA_FUNCTION_NAME=calc", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
		"AWS_LAMBDA_INITIALIZATION_TYPE="+initType)
	select {
	case <-third:
	case <-time.After(30 * time.Second):
		t.Fatalf("the function did not ask for a third invocation; stderr:\n%s", stderr)
	}
	mu.Lock()
	if got, want := strings.Join(seen, " "), "next response flush next response flush next"; got != want {
		t.Errorf("the Runtime API saw %q, want %q", got, want)
	}
	mu.Unlock()
	cmd.Process.Kill()
	cmd.Wait()

	type rec struct {
		Message     string   `json:"message"`
		Method      string   `json:"method"`
		ColdStart   *bool    `json:"cold_start"`
		Service     string   `json:"service"`
		Function    string   `json:"function_name"`
		Memory      int      `json:"function_memory_size"`
		RequestID   string   `json:"function_request_id"`
		XRay        string   `json:"xray_trace_id"`
		DurationMS  *float64 `json:"duration_ms"`
		DurationNS  any      `json:"duration"`
		LambdaReqID string   `json:"requestId"`
	}
	var requests, middleware []rec
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		var r rec
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		switch r.Message {
		case "mcp request":
			requests = append(requests, r)
		case "middleware":
			middleware = append(middleware, r)
		}
	}
	if len(requests) != 2 || len(middleware) != 2 {
		t.Fatalf("%d request records and %d middleware records, want 2 each; stderr:\n%s", len(requests), len(middleware), stderr)
	}
	for i, rs := range [][]rec{requests, middleware} {
		for k, r := range rs {
			cold := k == 0 && initType != "provisioned-concurrency"
			xray := strings.TrimPrefix(strings.Split(traces[k], ";")[0], "Root=")
			if r.ColdStart == nil || *r.ColdStart != cold || r.Service != "calc" || r.Function != "calc" || r.Memory != 128 ||
				r.RequestID != fmt.Sprint("req-", k+1) || r.LambdaReqID != r.RequestID || r.XRay != xray {
				t.Errorf("record %d of invocation %d: %+v, want cold_start %v, service and function calc, memory 128, request req-%d, xray %s",
					i, k+1, r, cold, k+1, xray)
			}
		}
	}
	for _, r := range requests {
		if r.DurationMS == nil || *r.DurationMS <= 0 || r.DurationNS != nil {
			t.Errorf("request record with duration_ms %v and duration %v, want milliseconds only", r.DurationMS, r.DurationNS)
		}
	}
	if middleware[0].Method != "tools/call" {
		t.Errorf("the middleware saw %q", middleware[0].Method)
	}
}
