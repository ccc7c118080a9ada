package otel

import (
	"runtime"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/core"
)

// TestRoundLinksForget: the first round's span is kept while the call asks
// for input, dropped when a round ends otherwise, and dropped when the Call
// is collected (a call parked for SSE polling has no later round on it),
// so that the map does not grow with parked calls.
func TestRoundLinksForget(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}})
	var r roundLinks
	c := &core.Call{}
	r.ended(c, sc, true)
	r.ended(c, trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{3}}), true)
	if got, ok := r.first(c); !ok || !got.Equal(sc) {
		t.Fatalf("first = %v, %v; want the first round's %v", got, ok, sc)
	}
	r.ended(c, sc, false)
	if _, ok := r.first(c); ok {
		t.Fatal("the entry outlived the call's last round")
	}

	parked := &core.Call{}
	r.ended(parked, sc, true)
	parked = nil
	for i := 0; ; i++ {
		runtime.GC()
		r.mu.Lock()
		n := len(r.m)
		r.mu.Unlock()
		if n == 0 {
			break
		}
		if i == 1000 {
			t.Fatalf("%d entries after the parked Call was collected, want 0", n)
		}
		runtime.Gosched()
	}
	_ = parked
}
