package memory

import "github.com/mcpfn/mcpfn/core"

// Store is an in-memory core.SessionStore: core.MemorySessionStore, the
// store a server uses when core.ServerOptions.SessionStore is nil. Use one
// to share a store between the servers of a process or to count its
// sessions (Len). The zero value is ready to use.
type Store = core.MemorySessionStore
