package jsonwire

import (
	"strconv"
	"strings"
	"testing"
)

// TestEachKnownMember: the known members reach fn; a key that needs
// encoding/json's rules (an escape, a case-insensitive match, a repeat)
// declines, and so does an unknown member with onlyKnown.
func TestEachKnownMember(t *testing.T) {
	t.Parallel()
	known := []string{"type", "text"}
	for _, tc := range []struct {
		in        string
		onlyKnown bool
		ok        bool
		got       string
	}{
		{`{"type":"text","text":"x"}`, true, true, `0="text" 1="x"`},
		{`{"text":"x","other":1,"type":"t"}`, false, true, `1="x" 0="t"`},
		{`{"text":"x","other":1}`, true, false, `1="x"`},
		{`{"Type":"text"}`, false, false, ``},
		{`{"t\u0079pe":"text"}`, false, false, ``},
		{`{"type":"a","type":"b"}`, false, false, `0="a"`},
		{`{}`, true, true, ``},
	} {
		var got []string
		ok := EachKnownMember([]byte(tc.in), known, tc.onlyKnown, func(i int, v []byte) bool {
			got = append(got, strconv.Itoa(i)+"="+string(v))
			return true
		})
		if ok != tc.ok || strings.Join(got, " ") != tc.got {
			t.Errorf("%s: %v %q, want %v %q", tc.in, ok, got, tc.ok, tc.got)
		}
	}
	if EachKnownMember([]byte(`{"type":1}`), known, false, func(int, []byte) bool { return false }) {
		t.Error("fn declining did not decline")
	}
	var elems []string
	EachElement([]byte(`[ 1 , "a,b" ,{"k":[2]},[] ]`), func(v []byte) { elems = append(elems, string(v)) })
	if strings.Join(elems, "|") != `1|"a,b"|{"k":[2]}|[]` {
		t.Errorf("EachElement: %q", elems)
	}
	EachElement([]byte(`[]`), func(v []byte) { t.Errorf("element %q of an empty array", v) })
}
