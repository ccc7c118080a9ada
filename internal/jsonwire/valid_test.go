package jsonwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// validCases are inputs at the edges of the JSON grammar, each checked
// against encoding/json.Valid (TestValidMatchesEncodingJSON) and seeding
// FuzzValidDifferential.
var validCases = []string{
	// Scalars and whitespace.
	``, ` `, "\t\n\r ", `0`, `-0`, `1`, `-`, `+1`, `01`, `-01`, `00`, `1.`, `.1`, `1.0`, `1.5e3`,
	`1e`, `1e+`, `1e-2`, `1E+2`, `1.e2`, `-1.5E-0`, `12345678901234567890123`, `1x`, `1 2`,
	`true`, `false`, `null`, `tru`, `nul`, `nulll`, `True`, `truefalse`, ` null `, "null\n",
	// Strings.
	`""`, `"`, `"a`, `"\"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\u0041"`, `"\u00e9"`, `"\uD800"`, `"\uDFFF\uD800"`,
	`"\u12"`, `"\u12G4"`, `"\x41"`, `"\'"`, `"\U0041"`, "\"\x00\"", "\"\x1f\"", "\"\x7f\"",
	"\"\xff\xfe\"", "\"\xc3\xa9\"", "\"\xed\xa0\x80\"", "\"a\tb\"", `"\`, `"\u`, `"\u004`,
	// Containers.
	`{}`, `[]`, `{ }`, `[ ]`, `{`, `[`, `}`, `]`, `{]`, `[}`, `[1,]`, `[,1]`, `[1 2]`, `[1,,2]`,
	`{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{'a':1}`, `{"a" : 1 , "b" : [ ] }`,
	`{"a":1 "b":2}`, `{"a":{"b":{"c":[1,{"d":null}]}}}`, `[[[[]]]]`, `[[[[]]]`, `[]]`, `{}}`,
	`{"a":1}{"b":2}`, `[1][2]`, `{"":""}`, `{"a":1,"a":2}`, `[true,false,null]`, `[-]`, `{"\u0000":0}`,
	`{1:2}`, `{"a":1:2}`, `{"a",1}`, `[1:2]`,
	// Whitespace JSON does not have, byte order marks, stray bytes.
	"\v1", "\f1", "1\v", "\u00a01", "\xc2\xa01", "\xef\xbb\xbf{}", "{}\x00", "\x00", "\x80", "[1,\n\t\r 2]",
	"{\"a\"\n:\r1\t}", "[\x0b]", "\"\x7f\x80\xbf\"",
	// Numbers at the edges of the grammar.
	`0e`, `0e1`, `0.e1`, `0.0`, `-0.0e-0`, `2.`, `1e309`, `-1e-400`, `[1e309]`, `0x10`, `1_000`, `Infinity`,
	`-Infinity`, `NaN`, `1.2.3`, `1e2e3`, `1ee2`, `1e+-2`, `--1`, `-.5`, `.`, `e5`, `[-0]`, `[01]`, `{"a":-}`,
	`{"a":0.}`, `{"a":1e}`, `[1.5E+10,-2e-3,0,0.5]`,
	// Escapes and surrogates.
	`"\uD83D\uDE00"`, `"\ud83d\ude00"`, `"\uDE00\uD83D"`, `"\uD83D"`, `"\uD83Dx"`, `"\uD83D\u0041"`,
	`"\uFFFF"`, `"\uffff\u0000"`, `"\u00G0"`, `"\u 000"`, `"\u-001"`, `"\0"`, `"\a"`, `"\v"`, `"\ "`,
	"\"\xf0\x9f\x98\x80\"", "\"\xc0\x80\"", "\"\xed\xbf\xbf\"", "\"\xf4\x90\x80\x80\"", "\"\xf0\x9f\x98\"",
	"\"\\\xff\"", "{\"\xff\":1}", "{\"a\x00\":1}",
	// Literals.
	`[true]`, `[tru]`, `[truE]`, `{"a":nul}`, `{"a":null}`, `fals`, `falsee`, `nullnull`, `[null,]`,
	// JSON-RPC shapes.
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	accepted := 0
	for _, s := range validCases {
		got, want := Valid([]byte(s)), json.Valid([]byte(s))
		if got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", s, got, want)
		}
		if want {
			accepted++
		}
	}
	// The table must hold both sides of the grammar's edges.
	if accepted < 40 || len(validCases)-accepted < 100 {
		t.Errorf("%d accepted and %d rejected cases: the table lost its edges", accepted, len(validCases)-accepted)
	}
}

// TestValidNesting checks the nesting limit at encoding/json's
// maxNestingDepth (10000), around the 64 levels kept in one word, and for
// every mix of objects and arrays near it.
func TestValidNesting(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{1, 63, 64, 65, 127, 128, 129, 9999, 10000, 10001, 20000} {
		for _, open := range []string{"[", `{"k":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			b := []byte(strings.Repeat(open, depth) + "0" + strings.Repeat(close, depth))
			if got, want := Valid(b), json.Valid(b); got != want {
				t.Errorf("depth %d of %s: Valid = %v, encoding/json says %v", depth, open, got, want)
			}
		}
		// Alternating containers: the bit of each level must be kept.
		var open, close bytes.Buffer
		for i := range depth {
			if i%3 == 0 {
				open.WriteString(`{"k":`)
			} else {
				open.WriteString("[")
			}
		}
		for i := depth - 1; i >= 0; i-- {
			if i%3 == 0 {
				close.WriteString("}")
			} else {
				close.WriteString("]")
			}
		}
		b := append(append(open.Bytes(), '1'), close.Bytes()...)
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("mixed depth %d: Valid = %v, encoding/json says %v", depth, got, want)
		}
		// The wrong closer at the innermost level.
		if depth > 1 {
			bad := append([]byte(nil), b...)
			j := open.Len() + 1
			if bad[j] == '}' {
				bad[j] = ']'
			} else {
				bad[j] = '}'
			}
			if Valid(bad) || json.Valid(bad) {
				t.Errorf("mixed depth %d: a mismatched closer was accepted", depth)
			}
		}
	}
}

// TestValidAllocations: the first 64 levels of nesting cost nothing.
func TestValidAllocations(t *testing.T) {
	body := []byte(strings.Repeat(`{"a":[`, 32) + `"x"` + strings.Repeat(`]}`, 32))
	if !Valid(body) {
		t.Fatal("not valid")
	}
	if n := testing.AllocsPerRun(100, func() { Valid(body) }); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}

// FuzzValidDifferential checks that Valid accepts exactly what
// encoding/json.Valid accepts, which is what the request path relies on.
func FuzzValidDifferential(f *testing.F) {
	for _, s := range validCases {
		f.Add([]byte(s))
	}
	for _, b := range seedBodies(f) {
		f.Add(b)
	}
	for _, s := range hostileSeeds(f) {
		f.Add([]byte(s))
	}
	// Nesting around the 64 levels kept in one word (the limit of 10000,
	// tens of kilobytes, is TestValidNesting's: the fuzzer would spend its
	// time minimizing such inputs).
	for _, d := range []int{63, 64, 65, 128, 129, 200} {
		f.Add([]byte(strings.Repeat("[", d) + strings.Repeat("]", d)))
		f.Add([]byte(strings.Repeat(`{"":`, d) + "0" + strings.Repeat("}", d)))
		f.Add([]byte(strings.Repeat(`[{"a":`, d/2) + "[]" + strings.Repeat("}]", d/2)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":4294967297,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b.Run("jsonwire", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			Valid(body)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			json.Valid(body)
		}
	})
}
