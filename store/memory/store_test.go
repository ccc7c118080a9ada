package memory_test

import (
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
	"github.com/mcpfn/mcpfn/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) core.SessionStore { return &memory.Store{} })
}

func TestTaskStore(t *testing.T) {
	t.Parallel()
	storetest.RunTasks(t, func(t *testing.T) core.TaskStore { return &memory.TaskStore{} }, 400<<10)
}
