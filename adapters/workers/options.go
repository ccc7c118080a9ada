//go:build js && wasm

package workers

import (
	"os"

	"github.com/mcpfn/mcpfn/adapters/workers/durable"
	"github.com/mcpfn/mcpfn/core"
)

// StateKeyVar names the secret holding the keys that seal request state:
// comma-separated standard base64 keys of at least core.MinKeyBytes bytes
// each (openssl rand -base64 32); the first seals, all open, which is how a
// key rotates. Every instance of the Worker must share them.
const StateKeyVar = "MCPFN_STATE_KEY"

// ServerOptions returns a copy of opts (nil means the zero value) set up
// for many instances sharing state: legacy sessions and tasks in Durable
// Objects of the namespace bound as MCPFN_STATE (package durable), change
// notifications between instances through a change log there, tasks
// run by that namespace's alarms through the McpfnTasks entry point bound
// as MCPFN_TASKS, and the keys that seal request state from the secret
// MCPFN_STATE_KEY. Fields opts already sets are kept. It panics when the
// secret is missing or malformed: each instance would otherwise seal with
// a key of its own, and a client's next round could reach another.
func ServerOptions(opts *core.ServerOptions) *core.ServerOptions {
	var o core.ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionStore == nil {
		o.SessionStore = &durable.Sessions{Call: Call}
	}
	if o.TaskStore == nil {
		o.TaskStore = &durable.Tasks{Call: Call}
	}
	if o.TaskRunner == nil {
		o.TaskRunner = &durable.Runner{Call: Call}
	}
	if o.ChangeBus == nil {
		o.ChangeBus = &durable.Changes{Call: Call}
	}
	if o.Keys == nil {
		keys, err := durable.ParseKeys(StateKeyVar, os.Getenv(StateKeyVar))
		if err != nil {
			panic("workers: " + err.Error())
		}
		o.Keys = keys
	}
	return &o
}
