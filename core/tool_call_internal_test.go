package core

import (
	"bytes"
	"testing"
)

// TestEncodeCallToolResultText: a plain text block is written inline with
// exactly the bytes of TextContent.MarshalJSON, in both eras.
func TestEncodeCallToolResultText(t *testing.T) {
	t.Parallel()
	s := NewServer(Implementation{Name: "t", Version: "1"}, nil)
	for _, text := range []string{"", "42", `{"sum":5}`, "a\"b\\c\n\t\x00\x1f", "<&>\u2028\u2029", "é😀", "\xff\xfe", "x\xed\xa0\x80y"} {
		want, err := (&TextContent{Text: text}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []era{eraModern, eraLegacy} {
			r := &Request{srv: s, era: e, ProtocolVersion: ProtocolVersion20251125}
			got, err := r.encodeCallToolResult(&CallToolResult{Content: []Content{&TextContent{Text: text}, &TextContent{Text: text, Meta: Meta{"k": 1}}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			annotated, _ := (&TextContent{Text: text, Meta: Meta{"k": 1}}).MarshalJSON()
			prefix := append(append(append(append([]byte(`{"content":[`), want...), ','), annotated...), ']')
			if !bytes.HasPrefix(got, prefix) {
				t.Errorf("text %q: %s, want it to begin with %s", text, got, prefix)
			}
		}
	}
}

// TestResultBufferPooledFollowsHead: the pooled buffer an exchange returns
// is always the one its response head is in. A request that encodes twice
// (a round after input) into a buffer too large for the pool must not
// return the first, which its earlier result may still reach.
func TestResultBufferPooledFollowsHead(t *testing.T) {
	t.Parallel()
	s := NewServer(Implementation{Name: "t", Version: "1"}, nil)
	if !s.poolResults {
		t.Fatal("a server without middleware does not recycle result buffers")
	}
	x := &exchange{}
	r := &Request{srv: s, x: x, ID: []byte("1")}
	r.resultBuffer(16)
	if x.pooled == nil || &(*x.pooled)[:1][0] != &x.head[0] {
		t.Fatal("a small result is not encoded in a pooled buffer")
	}
	r.resultBuffer(pooledResultCap)
	if x.pooled != nil {
		t.Fatal("after a result too large for the pool, the exchange still names the earlier pooled buffer")
	}
}
