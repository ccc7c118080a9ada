package jsonwire

import "testing"

// TestRawString decodes strings with and without escapes and refuses
// what is not a string.
func TestRawString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"tools/call"`, "tools/call", true},
		{`"add"`, "add", true},
		{`""`, "", true},
		{`"a\"b"`, `a"b`, true},
		{`"\u00e9\n"`, "é\n", true},
		{`"\uD83D\uDE00"`, "😀", true},
		{`"\uD800"`, "\uFFFD", true},
		{`42`, "", false},
		{`null`, "", false},
		{`"`, "", false},
		{``, "", false},
	} {
		got, ok := RawString([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("RawString(%s) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestRawStringAllocations: the strings of every request (methods,
// versions) cost nothing, another string without escapes one copy.
func TestRawStringAllocations(t *testing.T) {
	method, name := []byte(`"tools/call"`), []byte(`"add"`)
	if n := testing.AllocsPerRun(100, func() { RawString(method) }); n != 0 {
		t.Errorf("an interned string: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { RawString(name) }); n != 1 {
		t.Errorf("a string without escapes: %v allocations, want 1", n)
	}
}
