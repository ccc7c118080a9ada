package adapterbench_test

import (
	"testing"

	"github.com/mcpfn/mcpfn/test/adapterbench"
)

// BenchmarkToolsCall serves the same tools/call through each case, side by
// side; cmd/measure prints the ratios to the nethttp baseline.
func BenchmarkToolsCall(b *testing.B) {
	for _, c := range adapterbench.Cases {
		b.Run(c.Name, func(b *testing.B) { adapterbench.Run(b, c) })
	}
}

// TestCasesAnswer checks that every case serves the request and gets the
// answer, so the benchmark measures a working round trip.
func TestCasesAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range adapterbench.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			serve, done := c.Setup(adapterbench.NewServer())
			defer done()
			for range 3 { // the keep-alive connection is reused
				out, err := serve()
				if err != nil || !adapterbench.Answered(out) {
					t.Fatalf("%v, answer %q", err, out)
				}
			}
		})
	}
}
