package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds a small, case-sensitive scanner for JSON objects. The request
// path uses it instead of reflection-based decoding: it finds the members of an
// object without allocating, and it matches keys exactly (encoding/json would
// accept "Method" for "method", which a protocol decoder must not).
//
// All functions here assume their input is valid JSON (checked once with
// Valid on the whole body) and only ever return sub-slices of it.

// ErrNotObject is EachMember's error for a value that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// SkipSpace returns the index of the first non-space byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString returns the index just past the string starting at b[i] == '"'.
// It jumps from quote to quote (bytes.IndexByte is vectorized): a quote is
// the end unless an odd number of backslashes precedes it.
func SkipString(b []byte, i int) int {
	i++
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return i
}

// SkipValue returns the index just past the value starting at b[i].
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// EachMember calls fn for each member of the object in b, with the raw key
// (without quotes, escapes not decoded) and the raw value. It stops early when
// fn returns false.
func EachMember(b []byte, fn func(key, value []byte) bool) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrNotObject
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return ErrNotObject
		}
		end := SkipString(b, i)
		key := b[i+1 : end-1]
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return ErrNotObject
		}
		i = SkipSpace(b, i+1)
		vend := SkipValue(b, i)
		if !fn(key, b[i:vend]) {
			return nil
		}
		i = SkipSpace(b, vend)
		if i >= len(b) {
			break
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return ErrNotObject
		}
		i = SkipSpace(b, i+1)
	}
	return ErrNotObject
}

// EachKnownMember walks the members of the valid JSON object data for a
// decoder that reads the members named in known (at most 64) by its own
// rules and wants encoding/json's results: it calls fn with the index in
// known of each member it names and the member's raw value; other members
// are skipped, as encoding/json skips unknown ones, unless onlyKnown is
// set: then another member makes it report false. It also reports false,
// for the caller to decode by encoding/json's rules instead, when a key
// needs them: it holds an escape, it equals a known name only
// case-insensitively (encoding/json would bind it), or a known name comes
// twice (encoding/json keeps the last); and when fn returns false.
func EachKnownMember(data []byte, known []string, onlyKnown bool, fn func(i int, v []byte) bool) bool {
	var seen uint64
	ok := true
	err := EachMember(data, func(k, v []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			ok = false
			return false
		}
		for i, name := range known {
			if string(k) == name {
				if seen&(1<<i) != 0 || !fn(i, v) {
					ok = false
					return false
				}
				seen |= 1 << i
				return true
			}
			if strings.EqualFold(string(k), name) {
				ok = false
				return false
			}
		}
		if onlyKnown {
			ok = false
			return false
		}
		return true
	})
	return ok && err == nil
}

// EachElement calls fn with each element of the valid JSON array a.
func EachElement(a []byte, fn func(v []byte)) {
	i := SkipSpace(a, 1)
	for i < len(a) && a[i] != ']' {
		j := SkipValue(a, i)
		fn(a[i:j])
		i = SkipSpace(a, j)
		if i < len(a) && a[i] == ',' {
			i = SkipSpace(a, i+1)
		}
	}
}

// KeyIs reports whether the raw key equals name. Keys containing escapes are
// decoded first, so "\u006dethod" matches "method" as JSON says it must.
// The comparison walks the escapes without allocating: a request whose
// params hold many escaped keys costs a scan, not a decode per key and name.
func KeyIs(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	j := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c >= 0x80 || j >= len(name) || name[j] != c {
				return keyIsSlow(raw, name)
			}
			i++
			j++
			continue
		}
		if i+1 >= len(raw) {
			return false
		}
		switch e := raw[i+1]; e {
		case '"', '\\', '/':
			c = e
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			if i+6 > len(raw) {
				return false
			}
			r, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
			if err != nil || r >= 0x80 {
				return keyIsSlow(raw, name) // not ASCII: decode fully
			}
			c = byte(r)
			i += 4
		default:
			return false
		}
		if j >= len(name) || name[j] != c {
			return keyIsSlow(raw, name)
		}
		i += 2
		j++
	}
	return j == len(name)
}

// keyIsSlow decodes raw with encoding/json and compares. KeyIs falls back
// to it only on non-ASCII content, which no protocol key name has: it
// returns false at once for ASCII names.
func keyIsSlow(raw []byte, name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			var s string
			q := make([]byte, 0, len(raw)+2)
			q = append(append(append(q, '"'), raw...), '"')
			if json.Unmarshal(q, &s) != nil {
				return false
			}
			return s == name
		}
	}
	return false
}

// interned holds strings that recur in every request (methods, the
// protocol version, common keys): decoding them allocates nothing.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"2.0", "2026-07-28", "2025-11-25", "2025-06-18",
		"2025-03-26", "server/discover", "tools/list", "tools/call", "resources/list",
		"resources/templates/list", "resources/read", "prompts/list", "prompts/get", "completion/complete",
		"subscriptions/listen", "initialize", "ping", "notifications/initialized", "notifications/cancelled",
		"logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		m[s] = s
	}
	return m
}()

// RawString decodes a JSON string value. ok is false when v is not a string.
func RawString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if s, ok := interned[string(inner)]; ok {
		return s, true
	}
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			return unquote(v)
		}
	}
	return string(inner), true
}

// unquote decodes the JSON string v with encoding/json. It is a function of
// its own so that only strings with escapes pay for the decoder's target,
// which escapes to the heap.
func unquote(v []byte) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// KeyString decodes a raw member key (as EachMember passes it, without
// quotes).
func KeyString(k []byte) (string, bool) {
	for _, c := range k {
		if c == '\\' || c < 0x20 {
			q := make([]byte, 0, len(k)+2)
			q = append(append(append(q, '"'), k...), '"')
			return RawString(q)
		}
	}
	if s, ok := interned[string(k)]; ok {
		return s, true
	}
	return string(k), true
}

// IsObject reports whether v is a JSON object.
func IsObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }

// IsNull reports whether v is the JSON literal null.
func IsNull(v []byte) bool { return len(v) == 4 && string(v) == "null" }

// IsEmptyObject reports whether v is an object without members.
func IsEmptyObject(v []byte) bool {
	if !IsObject(v) {
		return false
	}
	return v[SkipSpace(v, 1)] == '}'
}

// plainASCII marks the bytes a JSON string holds as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendString appends s as a JSON string, escaping as encoding/json does
// (including <, > and & as \u escapes, so output is HTML-safe), except that
// a U+FFFD in s is written \ufffd, as invalid UTF-8 is: the same string
// once decoded, not the same bytes.
func AppendString(b []byte, s string) []byte {
	b = slices.Grow(b, len(s)+2)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip the plain ASCII run with one table lookup per byte.
		for i < len(s) && plainASCII[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < 0x80 {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				const hex = "0123456789abcdef"
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		// Multi-byte. Invalid UTF-8 and U+FFFD itself become \ufffd (so
		// that decoding and encoding again is stable), U+2028 and U+2029
		// are escaped as encoding/json does.
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || r == 0x2028 || r == 0x2029 {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else if r == 0x2028 {
				b = append(b, `\u2028`...)
			} else {
				b = append(b, `\u2029`...)
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
