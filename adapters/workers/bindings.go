//go:build js && wasm

package workers

import (
	"context"
	"errors"
	"os"
	"syscall/js"
	"time"
)

// Env returns the Worker's string binding (a var or a secret) called name,
// as the instance saw it when it started. It is os.LookupEnv: the glue
// passes every string binding to the Go program as its environment.
func Env(name string) (string, bool) { return os.LookupEnv(name) }

// ErrNoRequest is Call's error when ctx belongs to no request and no
// request is active: a Worker performs I/O only on behalf of a request.
var ErrNoRequest = errors.New("workers: no request is active to perform I/O for")

// CallError is the error a Durable Object call threw, as its message.
type CallError struct{ Message string }

func (e *CallError) Error() string { return "workers: Durable Object call: " + e.Message }

// DefaultCallTimeout bounds Call and Transport.RoundTrip when their
// context has no deadline: a promise of a request that has ended never
// settles, and the goroutine waiting on it would wait forever.
const DefaultCallTimeout = 30 * time.Second

// bounded returns ctx with DefaultCallTimeout when it has no deadline.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultCallTimeout)
}

// current is set by Serve; Call uses it for I/O outside any request.
var current *host

// Call calls the RPC method method of the Durable Object named object in
// the namespace bound as binding (env[binding].get(idFromName(object))),
// with one string argument, and returns the string it returns. The call is
// made in the context of the request ctx belongs to (a request's context,
// or a context derived from it); a ctx of no request borrows an active
// request's. It returns when the call settles or ctx ends (at most
// DefaultCallTimeout when ctx has no deadline).
func Call(ctx context.Context, binding, object, method, arg string) (string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	r, err := requestFor(ctx)
	if err != nil {
		return "", err
	}
	return await(ctx, r, "call", func(args []js.Value) (string, error) {
		if e := args[0]; !e.IsNull() && !e.IsUndefined() {
			return "", &CallError{Message: e.String()}
		}
		return args[1].String(), nil
	}, binding, object, method, arg)
}
