//go:build unix

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpfn/mcpfn/core"
)

// touchOnSignal publishes an update of the watched resource at every
// SIGUSR1 until ctx ends: a test makes a change on one chosen instance.
func touchOnSignal(ctx context.Context, s *core.Server) {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(c)
		for {
			select {
			case <-ctx.Done():
				return
			case <-c:
				s.NotifyResourceUpdated(watchedURI)
			}
		}
	}()
}
