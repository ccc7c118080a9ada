package memory

import "github.com/mcpfn/mcpfn/core"

// TaskStore is an in-memory core.TaskStore: core.MemoryTaskStore, the
// store a server uses when core.ServerOptions.TaskStore is nil. Use one to
// share a store between the servers of a process or to count its tasks
// (Len, Bytes). The zero value is ready to use; MaxBytes and MaxTotalBytes
// bound it.
type TaskStore = core.MemoryTaskStore

// ChangeBus is an in-process core.ChangeBus: core.MemoryChangeBus, for
// several servers in one process. The zero value is ready to use.
type ChangeBus = core.MemoryChangeBus
