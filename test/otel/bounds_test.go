package otel_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestOTLPHostileNames runs examples/otel exporting over OTLP/HTTP and
// sends it 200 calls of tools it does not have, one of them named with
// 900 KiB, and one call of its add tool: the receiver decodes server
// spans named "tools/call" (one name for all the invented tools) and
// "tools/call add", and no attribute of the exported spans is longer than
// 1 KiB: what reaches a trace backend is bounded whatever names a client
// sends.
func TestOTLPHostileNames(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	url, cmd := startExample(t, buildExample(t), otlpEnv(rcv.URL, "none", "OTEL_BSP_MAX_QUEUE_SIZE=4096")...)
	ctx := context.Background()
	c := &mcptest.Client{URL: url}
	const invented = 200
	for i := range invented {
		name := fmt.Sprint("invented", i)
		if i == 0 {
			name = strings.Repeat("a", 900<<10)
		}
		res, err := c.Call(ctx, "tools/call", map[string]any{"name": name}, nil)
		if err != nil || res.Error == nil || res.Error.Code != -32602 {
			t.Fatalf("tools/call %.20s: %v %+v, want -32602", name, err, res)
		}
	}
	if res, err := c.Call(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"left": 1, "right": 2}}, nil); err != nil || res.Error != nil {
		t.Fatalf("tools/call add: %v %+v", err, res)
	}
	// The batcher's delay is ten minutes: only the shutdown flushes.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	names := map[string]int{}
	for names["tools/call"]+names["tools/call add"] < invented+1 {
		select {
		case sp := <-rcv.spans:
			if sp.Kind != tracepb.Span_SPAN_KIND_SERVER {
				continue
			}
			names[sp.Name]++
			for _, kv := range sp.Attributes {
				if v := kv.Value.GetStringValue(); len(v) > 1<<10 {
					t.Errorf("span %q: attribute %s of %d bytes", sp.Name, kv.Key, len(v))
				}
			}
		case <-timeout:
			t.Fatalf("the receiver got server spans %v, want %d tools/call and one tools/call add", names, invented)
		}
	}
	if len(names) != 2 || names["tools/call"] != invented || names["tools/call add"] != 1 {
		t.Errorf("server span names %v, want %d tools/call and one tools/call add", names, invented)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("examples/otel after SIGTERM: %v", err)
	}
}
