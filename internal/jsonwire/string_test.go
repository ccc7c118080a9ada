package jsonwire

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzAppendJSONString: the encoder's output is valid JSON that decodes to
// what encoding/json's encoding of the input decodes to (invalid UTF-8
// becomes U+FFFD), and
// is HTML-safe like encoding/json's.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " backslash \ slash /`, "<a href='x'>&amp;</a>", "tab\tnl\nnul\x00",
		"ü€😀", "\xff\xfe", "\u2028\u2029", "\ufffd", strings.Repeat("x", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString(nil, s)
		if !json.Valid(out) {
			t.Fatalf("%q encodes to invalid JSON %q", s, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		var ref string // what encoding/json's own encoding decodes to
		rb, _ := json.Marshal(s)
		json.Unmarshal(rb, &ref)
		if back != ref {
			t.Fatalf("%q: decodes to %q, encoding/json's to %q", s, back, ref)
		}
		if strings.ContainsAny(string(out), "<>&") {
			t.Fatalf("%q: output %q is not HTML-safe", s, out)
		}
	})
}

func BenchmarkAppendJSONString(b *testing.B) {
	s := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(s)))
	for i := 0; i < b.N; i++ {
		buf = AppendString(buf[:0], s)
	}
}
