// Package glue holds the JavaScript a Worker built with package workers
// runs: worker.mjs, the Worker's entry module. It starts Go instances from
// the module's wasm (app.wasm, beside Go's wasm_exec.js), hands them
// requests, carries out what Go posts to each request in that request's own
// context, and exports the Durable Object class and the task entry point
// the state stores use. `mcpfn package workers` copies these files into
// the Worker directory it writes.
package glue

import "embed"

// FS holds the glue's files: worker.mjs and the modules it imports.
//
//go:embed *.mjs
var FS embed.FS
