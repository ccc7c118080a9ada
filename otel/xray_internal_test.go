package otel

import (
	"strings"
	"testing"
)

// TestParseXRay: the X-Ray tracing header's Root and Parent become the
// trace and span ids of a remote span context, Sampled=1 its sampled
// flag; fields in any order, with spaces or unknown fields, parse; a
// missing or malformed Root or Parent, or an oversized header, does not.
func TestParseXRay(t *testing.T) {
	t.Parallel()
	const tid, sid = "5759e988bd862e3fe1be46a994272793", "53995c3f42cd8ad8"
	for _, c := range []struct {
		in      string
		ok      bool
		sampled bool
	}{
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1", true, true},
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0", true, false},
		{"Sampled=?; Parent=53995c3f42cd8ad8 ;Lineage=a87bd80c:1|68fd508a:5; Root=1-5759e988-bd862e3fe1be46a994272793", true, false},
		{"Root=1-5759E988-BD862E3FE1BE46A994272793;Parent=53995C3F42CD8AD8", true, false},
		{"Root=1-5759e988-bd862e3fe1be46a994272793", false, false},                         // no Parent
		{"Parent=53995c3f42cd8ad8;Sampled=1", false, false},                                // no Root
		{"Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", false, false}, // version
		{"Root=1-5759e988-bd862e3fe1be46a99427279;Parent=53995c3f42cd8ad8", false, false},  // short
		{"Root=1-5759e98g-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", false, false}, // not hex
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad", false, false},  // short parent
		{"Root=1-00000000-000000000000000000000000;Parent=53995c3f42cd8ad8", false, false}, // zero trace id
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=0000000000000000", false, false}, // zero span id
		{"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;" + strings.Repeat("x", 600), false, false},
		{"", false, false},
	} {
		sc, ok := parseXRay(c.in)
		if ok != c.ok {
			t.Errorf("parseXRay(%.80q) ok = %v, want %v", c.in, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if sc.TraceID().String() != tid || sc.SpanID().String() != sid || !sc.IsRemote() || sc.IsSampled() != c.sampled {
			t.Errorf("parseXRay(%q) = trace %s span %s remote %v sampled %v", c.in, sc.TraceID(), sc.SpanID(), sc.IsRemote(), sc.IsSampled())
		}
	}
}

// FuzzParseXRay: any header value parses without panicking, and a span
// context it returns is valid and round-trips to the same ids.
func FuzzParseXRay(f *testing.F) {
	f.Add("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	f.Add("Root=1-5759e988-bd862e3fe1be46a994272793")
	f.Add("Self=1-67891234-12456789abcdef012345678;Root=1-67891233-abcdef012345678912345678;Parent=463ac35c9f6413ad")
	f.Add(";;=;Root=;Parent=")
	f.Fuzz(func(t *testing.T, s string) {
		sc, ok := parseXRay(s)
		if !ok {
			if sc.IsValid() {
				t.Fatalf("parseXRay(%q) failed with a valid span context", s)
			}
			return
		}
		if !sc.IsValid() || !sc.IsRemote() {
			t.Fatalf("parseXRay(%q) = %v", s, sc)
		}
		tid := sc.TraceID().String()
		root := "Root=1-" + tid[:8] + "-" + tid[8:]
		if !strings.Contains(strings.ToLower(s), strings.ToLower(root[5:])) {
			t.Fatalf("parseXRay(%q): trace id %s is not the header's", s, tid)
		}
		if again, ok := parseXRay(root + ";Parent=" + sc.SpanID().String()); !ok || again.TraceID() != sc.TraceID() || again.SpanID() != sc.SpanID() {
			t.Fatalf("parseXRay(%q) = %v does not round-trip: %v", s, sc, again)
		}
	})
}
