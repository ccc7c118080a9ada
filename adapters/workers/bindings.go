//go:build js && wasm

package workers

import (
	"context"
	"errors"
	"os"
	"syscall/js"
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

// hostOf is set by Serve; Call uses it for I/O outside any request.
var current *host

// Call calls the RPC method method of the Durable Object named object in
// the namespace bound as binding (env[binding].get(idFromName(object))),
// with one string argument, and returns the string it returns. The call is
// made in the context of the request ctx belongs to (a request's context,
// or a context derived from it); a ctx of no request borrows an active
// request's. It returns when the call settles or ctx ends.
func Call(ctx context.Context, binding, object, method, arg string) (string, error) {
	r, err := requestFor(ctx)
	if err != nil {
		return "", err
	}
	type result struct {
		v   string
		err error
	}
	ch := make(chan result, 1)
	var cb js.Func
	cb = js.FuncOf(func(_ js.Value, args []js.Value) any {
		cb.Release()
		if e := args[0]; !e.IsNull() && !e.IsUndefined() {
			ch <- result{err: &CallError{Message: e.String()}}
		} else {
			ch <- result{v: args[1].String()}
		}
		return nil
	})
	post(r.rq, "call", binding, object, method, arg, cb)
	select {
	case res := <-ch:
		return res.v, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
