package proxy

import "testing"

// Records are filed as their handlers return, which need not be the order
// the requests arrived in; Records gives them in arrival order.
func TestRecordsInArrivalOrder(t *testing.T) {
	p := &Proxy{records: []Record{{Seq: 1}, {Seq: 3}, {Seq: 2}, {Seq: 4}}}
	recs := p.Records()
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("records in order %v, want by Seq", recs)
		}
	}
	if p.records[1].Seq != 3 {
		t.Error("Records reordered the proxy's own slice, not a copy")
	}
}
