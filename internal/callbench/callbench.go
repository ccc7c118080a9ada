// Package callbench holds the loop of the benchmarks that time a request
// end to end (the tools/call round trips of client and otel, otel's
// dispatch): besides wall time, each reports the process's CPU time per
// operation as cpu-ns/op, which on a shared machine varies far less.
package callbench

import (
	"context"
	"syscall"
	"testing"

	"github.com/mcpfn/mcpfn/client"
)

// ProcessCPU is the process's user and system CPU time, in nanoseconds; 0
// when it cannot be read.
func ProcessCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// Loop reports allocations, runs op for as long as b.Loop asks, and reports
// the CPU time per op of the whole process (the client and any in-process
// server) as cpu-ns/op.
func Loop(b *testing.B, op func()) {
	b.ReportAllocs()
	cpu0 := ProcessCPU()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// CallAdd connects a client with opts to the MCP endpoint url and times,
// with Loop, its tools/call of add with a=2 and b=3. Any error or an
// isError result fails b.
func CallAdd(b *testing.B, url string, opts *client.Options) {
	ctx := context.Background()
	c, err := client.Connect(ctx, url, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"a": 2, "b": 3}
	Loop(b, func() {
		r, err := c.CallTool(ctx, "add", args, nil)
		if err != nil || r.IsError {
			b.Fatal(err)
		}
	})
}
