// Package callrec is a core middleware for tests that records what it saw
// of each call, so that a test of an adapter or a deploy package can check
// which calls reached the server and how they looked there.
package callrec

import (
	"context"
	"sync"

	"github.com/mcpfn/mcpfn/core"
)

// Recorder records, for every call that passes its Middleware, what See
// makes of the call and its outcome once the rest of the chain has
// answered. It is safe for concurrent use. The zero value needs See set
// before the first call.
type Recorder[T any] struct {
	// See describes a call and its outcome; it may run concurrently.
	See func(ctx context.Context, c *core.Call, out *core.Outcome, err error) T

	mu   sync.Mutex
	seen []T
}

// Middleware is the Recorder as a core.Middleware: it passes every call on
// unchanged and records it after next returns.
func (r *Recorder[T]) Middleware(next core.Handler) core.Handler {
	return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
		out, err := next(ctx, c)
		v := r.See(ctx, c, out, err)
		r.mu.Lock()
		r.seen = append(r.seen, v)
		r.mu.Unlock()
		return out, err
	}
}

// Seen returns a copy of what was recorded so far, in the order the calls
// were answered.
func (r *Recorder[T]) Seen() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.seen...)
}
