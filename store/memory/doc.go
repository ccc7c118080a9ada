// Package memory holds in-process implementations of the stores an mcpfn
// server uses: [Store], a [core.SessionStore] for legacy sessions, and
// [TaskStore], a [core.TaskStore] for tasks (both the stores a server uses
// by default, core.MemorySessionStore and core.MemoryTaskStore, under the
// names of this package), and [Keys], a [core.KeyProvider] for the keys
// that seal request state.
//
// All are ready to use at their zero value and safe for concurrent use. They
// keep state in one process only: behind a load balancer, on AWS Lambda or on
// Cloud Functions, where consecutive requests reach different instances, use
// a shared store (package store/dynamo) instead.
package memory
