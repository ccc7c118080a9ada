// Package durable keeps an mcpfn Worker's state in Cloudflare Durable
// Objects: [Sessions] (a [core.SessionStore]), [Tasks] (a [core.TaskStore])
// and [Runner] (a [core.TaskRunner]). The objects are of the class
// McpfnState that the adapter's glue exports (glue/state.mjs), bound to the
// Worker as MCPFN_STATE; package workers wires all three with
// workers.ServerOptions.
//
// Each operation is one call from Go to one object; the objects call each
// other for the rest:
//
//   - a session lives in an object of its own (record, version, expiry by
//     the object's alarm); its owner's pool (a principal's sessions, or the
//     anonymous ones) lives in another, which orders them by last use and
//     evicts past core.SessionLimits. Create calls the pool, which writes
//     the session's object; Get, Update and Delete call the session's
//     object, which tells the pool of an update or a deletion.
//   - a task lives in an object of its own (record, version, expiry, run);
//     creation goes through the principal's object, which counts the
//     principal's unexpired tasks and their charges against core.TaskLimits
//     and reserves the task before writing it, so concurrent creates never
//     exceed the limits.
//   - Runner.Start asks the task's object to run the task: its alarm calls
//     the Worker's McpfnTasks entry point (bound as MCPFN_TASKS), which runs
//     core.Server.RunTask in a request of its own, outliving the request
//     that created the task. A run that fails is tried again after 1, 2, 4,
//     8 and 16 s, then given up (the task then fails when its lease
//     passes, as core's lease rules say).
//
// The package is portable Go: the Caller decides how an object is reached
// (workers.Call inside a Worker; the tests reach objects in workerd over
// HTTP).
package durable
