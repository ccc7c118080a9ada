package otel

import (
	"runtime"
	"sync"
	"weak"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/core"
)

// roundLinks remembers, for a legacy call whose handler asks for input
// over the bridge, the span of its first round, so that its later rounds
// (the chain called again with the same *core.Call) link to it. An entry
// is dropped when a round ends without asking for input, and, since a
// call parked for SSE polling has no later round on that Call, also when
// the Call is collected: the map holds it weakly and never keeps it alive.
type roundLinks struct {
	mu sync.Mutex
	m  map[weak.Pointer[core.Call]]trace.SpanContext
}

// first returns the span context of the first round of c's logical call,
// if an earlier round of c recorded one.
func (r *roundLinks) first(c *core.Call) (trace.SpanContext, bool) {
	k := weak.Make(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	sc, ok := r.m[k]
	return sc, ok
}

// ended records how a round of c ended: asking for input (the first such
// round's span is kept for the next rounds) or not (the entry goes).
func (r *roundLinks) ended(c *core.Call, sc trace.SpanContext, asked bool) {
	k := weak.Make(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !asked {
		delete(r.m, k)
		return
	}
	if _, ok := r.m[k]; ok || !sc.IsValid() {
		return
	}
	if r.m == nil {
		r.m = map[weak.Pointer[core.Call]]trace.SpanContext{}
	}
	r.m[k] = sc
	runtime.AddCleanup(c, r.drop, k)
}

func (r *roundLinks) drop(k weak.Pointer[core.Call]) {
	r.mu.Lock()
	delete(r.m, k)
	r.mu.Unlock()
}
