package otel

import (
	"fmt"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/metric"
)

// TestTargetNamesBound: the histogram's tool and prompt names are bounded:
// names beyond max, and names not admitted (a -32602 of an unseen name),
// are "_OTHER"; known names stay themselves; concurrent use is safe.
func TestTargetNamesBound(t *testing.T) {
	t.Parallel()
	tn := &targetNames{max: 3}
	if got := tn.admit("x", false); got != "_OTHER" {
		t.Errorf("an unseen, not admitted name is %q, want _OTHER", got)
	}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() { tn.admit(fmt.Sprint("t", i%10), true) })
	}
	wg.Wait()
	kept := 0
	for i := range 10 {
		n := fmt.Sprint("t", i)
		switch got := tn.admit(n, false); got {
		case n:
			kept++
		case "_OTHER":
		default:
			t.Errorf("admit(%q) = %q", n, got)
		}
	}
	if kept != 3 {
		t.Errorf("%d names kept, want the bound 3", kept)
	}
	if got := tn.admit("", true); got != "" {
		t.Errorf("admit(\"\") = %q", got)
	}
}

// TestSetCacheHit: a point recorded again reuses its cached options (the
// cache is keyed by the attributes in the order they were added, which
// attribute.NewSet reorders), and distinct points get distinct sets.
func TestSetCacheHit(t *testing.T) {
	t.Parallel()
	var sc setCache
	point := func(tool string) []metric.RecordOption {
		var k setKey
		a := append(k[:0], KeyMethodName.String("tools/call"), KeyToolName.String(tool), KeyErrorType.String("tool_error"))
		return sc.opts(&k, len(a))
	}
	first := point("add")
	if again := point("add"); &again[0] != &first[0] {
		t.Error("the same point built its options again")
	}
	if other := point("sub"); &other[0] == &first[0] {
		t.Error("two points share options")
	}
	if len(sc.m) != 2 {
		t.Errorf("%d cached sets, want 2", len(sc.m))
	}
}
