package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzSafeJSON: what the CLI writes to stdout is still JSON, with the same
// value as the server's document (encoding/json reads invalid UTF-8 as
// U+FFFD either way), and holds nothing a terminal acts on.
func FuzzSafeJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"t":"` + "\u009b31m\u202e\x7f\x9b" + `"}`, `["\u001b[2J",1,true,null]`, "{\n\t\"k\": \"\u2066\"\r\n}", `"é€😀"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var want any
		if json.Unmarshal(doc, &want) != nil {
			return
		}
		out := safeJSON(doc)
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("safeJSON(%q) = %q: %v", doc, out, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("safeJSON(%q) = %q: value %v, want %v", doc, out, got, want)
		}
		if u := unsafe(out); u != "" {
			t.Fatalf("safeJSON(%q) = %q has %s", doc, out, u)
		}
	})
}

// FuzzOneLine: one line, nothing a terminal acts on, and text without
// controls left as it was.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"plain", hostile, "a\nb\r\nc", "\xff\xfe", "تحذير\u061c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := oneLine(s)
		if u := unsafe([]byte(l)); u != "" || strings.ContainsAny(l, "\n") {
			t.Fatalf("oneLine(%q) = %q (%s)", s, l, u)
		}
		if unsafe([]byte(s)) == "" && !strings.ContainsAny(s, "\n\t") && l != s {
			t.Fatalf("oneLine(%q) = %q, want it unchanged", s, l)
		}
		m := multiLine(s)
		if u := unsafe([]byte(m)); u != "" {
			t.Fatalf("multiLine(%q) = %q (%s)", s, m, u)
		}
		for _, line := range strings.Split(m, "\n")[1:] {
			if !strings.HasPrefix(line, "  | ") {
				t.Fatalf("multiLine(%q): continuation %q unmarked", s, line)
			}
		}
	})
}
