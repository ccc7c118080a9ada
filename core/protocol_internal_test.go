package core

import "testing"

// BenchmarkCapsClone measures the per-request copy of the client
// capabilities handed to a handler, for a client that declares elicitation
// (both modes), sampling with tools and roots.
func BenchmarkCapsClone(b *testing.B) {
	c, err := (&Server{}).decodeCaps([]byte(`{"elicitation":{"form":{},"url":{}},"sampling":{"tools":{}},"roots":{"listChanged":true}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if cloneCaps(c) == c {
			b.Fatal("not a copy")
		}
	}
}

// TestCapsCloneIsDeep checks that a copy shares no map with the original.
func TestCapsCloneIsDeep(t *testing.T) {
	t.Parallel()
	c, err := (&Server{}).decodeCaps([]byte(`{"elicitation":{"form":{"x":{"y":[1]}}},"sampling":{"tools":{}},"experimental":{"e":{"k":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	d := cloneCaps(c)
	d.Elicitation.Form["x"].(map[string]any)["y"].([]any)[0] = 2
	d.Sampling.Tools["t"] = true
	d.Experimental["e"]["k"] = 2
	d.Roots = &RootsCapabilities{}
	if c.Elicitation.Form["x"].(map[string]any)["y"].([]any)[0] != float64(1) || len(c.Sampling.Tools) != 0 || c.Experimental["e"]["k"] != float64(1) || c.Roots != nil {
		t.Errorf("the copy shares state with the original: %+v", c)
	}
	if cloneCaps(nil) == nil {
		t.Errorf("the copy of nil is nil")
	}
}
