package mcptest

import (
	"bytes"
	"sync"
)

// LogBuffer is a bytes.Buffer safe for concurrent use, for capturing the
// logs of code under test that writes from several goroutines.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
