// Package workers serves an mcpfn server ([core.Server]) as a Cloudflare
// Worker: Go compiled to WebAssembly (GOOS=js GOARCH=wasm), started by a
// small JavaScript module (package glue) that the Worker's entry point is.
//
//	func main() {
//		srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, workers.ServerOptions(nil))
//		core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
//		workers.Serve(srv, nil) // serves /mcp; never returns
//	}
//
// `mcpfn package workers -o dist .` builds the wasm and writes a deployable
// Worker directory: the wasm, Go's wasm_exec.js, the glue, a wrangler.toml
// with the Durable Object bindings and a workerd configuration for a local
// run (see docs/workers.md).
//
// # One Go instance, many requests
//
// One Go instance serves every request of an isolate, and Workers tie every
// promise, timer and stream to the request whose code created it. Go's
// scheduler resumes goroutines from whichever JavaScript callback is
// running, so the adapter never lets Go touch a request's JavaScript
// objects directly: Go posts what it wants done (answer, stream a chunk,
// call a Durable Object) to the request's own queue, and the request drains
// that queue from callbacks created in its own context: its fetch handler,
// the settling of its own I/O, and a short interval timer that also resumes
// Go's scheduler while the request is pending. A response is buffered until
// the handler's first Flush, then streamed through a ReadableStream whose
// cancellation (the client went away) cancels the handler's context.
//
// A panic in a request's handler answers that request with 500. A Go exit
// (os.Exit, an unrecovered panic in another goroutine) ends the instance:
// its pending requests get 500 and the next request starts a fresh one.
// Nothing that outlives a request is kept in the instance when the stores
// are Durable Objects ([ServerOptions]): sessions, tasks and signing keys
// survive it.
//
// # Start-up
//
// The Go instance starts in the first request of an isolate (Go's runtime
// needs randomness and a clock, which Workers give only inside a request).
// The string binding MCPFN_EAGER_START=1 starts it while the isolate
// starts instead, so that the first request finds main done; it needs a
// main (and package initialisers) that read no crypto/rand before Serve,
// and falls back to a start in the first request, logging why, otherwise.
// MCPFN_GO_INSTANCE=request starts a fresh instance for every request.
//
// # Bindings
//
// The Worker's string bindings (vars and secrets) are the Go program's
// environment (os.Getenv), read when the instance starts; [Env] reads them
// too. Durable Object namespaces are reached through [Call]. Background
// work runs only while some request is active: tasks therefore run in a
// request of their own, started by a Durable Object alarm (see
// [ServerOptions]).
//
// The package builds for js/wasm only; under any other GOOS/GOARCH it is
// empty.
package workers
