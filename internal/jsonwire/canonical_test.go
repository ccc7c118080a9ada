package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpfn/mcpfn/internal/testseeds"
)

// TestCanonicalJSONCost bounds the work of canonicalizing an object with
// 100,000 distinct keys (a hostile prompts/get) by counting key
// comparisons: a sort needs O(n log n), where a per-key scan over earlier
// members would need n²/2 = 5·10⁹.
func TestCanonicalJSONCost(t *testing.T) {
	const n = 100_000
	var calls int
	saved := cmpMember
	cmpMember = func(a, b member) int { calls++; return bytes.Compare(a.key, b.key) }
	defer func() { cmpMember = saved }()
	out, err := Canonical(testseeds.ManyKeys(n))
	if err != nil {
		t.Fatal(err)
	}
	if limit := int(2 * n * math.Log2(n)); calls > limit {
		t.Fatalf("%d comparisons for %d keys, want at most %d", calls, n, limit)
	}
	if !bytes.HasPrefix(out, []byte(`{"k0000000":"v","k0000001":"v",`)) {
		t.Fatalf("not sorted: %.60s", out)
	}
}

// TestCanonicalJSONDuplicates checks that the last of duplicate keys wins,
// as when decoding, wherever the duplicates are.
func TestCanonicalJSONDuplicates(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"a":2}`:                      `{"a":2}`,
		`{"b":0,"a":1,"b":3,"a":2}`:          `{"a":2,"b":3}`,
		`{"a":{"x":1,"x":[1.0]},"\u0061":5}`: `{"a":5}`,
		`{"a":{"x":1,"x":[1.0]}}`:            `{"a":{"x":[1]}}`,
	} {
		got, err := Canonical([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

// TestCanonicalJSONDepth checks the depth bound.
func TestCanonicalJSONDepth(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Canonical([]byte(ok)); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	deep := "[" + ok + "]"
	if _, err := Canonical([]byte(deep)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("depth %d: err %v, want ErrTooDeep", MaxDepth+1, err)
	}
}

// BenchmarkCanonicalJSON reports the cost per key of canonicalizing objects
// of growing size: it must stay flat (O(n log n) with a small log factor).
func BenchmarkCanonicalJSON(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		in := testseeds.ManyKeys(n)
		b.Run(fmt.Sprintf("keys=%dk", n/1000), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := Canonical(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}

// FuzzCanonicalJSONDifferential compares Canonical with what
// encoding/json makes of the same value: decode (the last duplicate wins),
// re-encode with sorted keys, and compare both as decoded values. It also
// checks checkArguments never panics and agrees with Canonical on depth.
func FuzzCanonicalJSONDifferential(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.0,2e0,{"c":null,"c":"x"}]}`, `{}`, `{"x":1e400}`, `{"n":-0}`,
		`{"\u00e9":"\ud800","é":"<&>"}`, `{"big":12345678901234567890,"f":0.1}`, `[[[[{"a":{"a":1}}]]]]`, `"s"`, `12.50`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		cerr := Check(data)
		got, err := Canonical(data)
		if err != nil {
			if !errors.Is(err, ErrTooDeep) || cerr == nil {
				t.Fatalf("Canonical: %v (checkArguments: %v)", err, cerr)
			}
			return
		}
		var v any
		if json.Unmarshal(data, &v) != nil {
			return // a number out of float64 range: Canonical keeps it as is
		}
		if data = bytes.TrimSpace(data); IsNull(data) {
			v = map[string]any{} // null arguments canonicalize to {}
		}
		want, err := json.Marshal(v)
		if err != nil {
			return // e.g. a number out of float64 range
		}
		var gv, wv any
		if err := json.Unmarshal(got, &gv); err != nil {
			t.Fatalf("canonical form %q is not JSON: %v", got, err)
		}
		json.Unmarshal(want, &wv)
		if !reflect.DeepEqual(gv, wv) {
			t.Fatalf("canonical %s, encoding/json %s", got, want)
		}
	})
}

// FuzzCheckArguments compares checkArguments's duplicate-key verdict with
// the go-json-experiment decoder's (which rejects duplicate names), within
// the limits, and checks that it never panics outside them.
func FuzzCheckArguments(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":{"a":2}}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":[{"y":1},{"y":1,"y":2}]}`,
		`{"Region":"us","region":"eu"}`, `{"a":"\ud800","\ud800":1,"\ufffd":2}`, `[[[[[]]]]]`, `{"é":1,"\u00e9":2}`} {
		f.Add([]byte(s))
	}
	opts := []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(false)}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		err := Check(data)
		if err != nil && (strings.Contains(err.Error(), "nested deeper") || strings.Contains(err.Error(), "members")) {
			return
		}
		if dup := !jsontext.Value(data).IsValid(opts...); (err != nil) != dup {
			t.Fatalf("checkArguments: %v; decoder finds duplicates: %v", err, dup)
		}
	})
}

// FuzzKeyIs compares KeyIs, which walks escapes without decoding, with
// encoding/json's decoding of the key, for the protocol's key names and a
// non-ASCII one.
func FuzzKeyIs(f *testing.F) {
	for _, s := range []string{`method`, `\u006dethod`, `\u006Dethod`, `meth\u006fd`, `\"`, `\u00e9`, `\ud83d\ude00`, `\/a`, `name\u0000`, "\xff", `\u12`, `arguments`} {
		f.Add([]byte(s))
	}
	names := []string{"method", "name", "arguments", "inputResponses", "_meta", "io.modelcontextprotocol/protocolVersion", "/a", "é", "😀", ""}
	f.Fuzz(func(t *testing.T, raw []byte) {
		q := append(append([]byte{'"'}, raw...), '"')
		var s string
		valid := json.Valid(q) && SkipString(q, 0) == len(q)
		if valid && json.Unmarshal(q, &s) != nil {
			t.Fatal("valid but not decodable")
		}
		for _, n := range names {
			if got := KeyIs(raw, n); valid && got != (s == n) {
				t.Fatalf("KeyIs(%q, %q) = %v, decoded %q", raw, n, got, s)
			}
		}
	})
}
