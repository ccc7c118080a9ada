package jsonwire

import (
	"bytes"
	"math"
	"slices"
	"strconv"
)

// Canonical re-encodes a valid JSON value (every caller passes request
// bytes the server validated, or encoding/json output) with sorted object keys (duplicate
// keys: the last wins, as when decoding), strings re-escaped and numbers in a
// canonical form, so that equal arguments hash equally whatever their key
// order or spelling. Absent or null arguments canonicalize to {}. Objects
// are sorted, not scanned per key, so the cost is O(n log n) in the number of
// members; a value nested deeper than MaxDepth is an error.
func Canonical(raw []byte) ([]byte, error) {
	if len(raw) == 0 || IsNull(raw) || IsEmptyObject(raw) {
		return []byte("{}"), nil
	}
	raw = raw[SkipSpace(raw, 0):]
	return appendCanonical(make([]byte, 0, len(raw)), raw[:SkipValue(raw, 0)], 0)
}

// member is an object member: its decoded key (a sub-slice of the input
// unless the key has escapes) and its raw value.
type member struct {
	key []byte
	val []byte
}

// cmpMember orders members by key (a variable so that tests can count the
// comparisons).
var cmpMember = func(a, b member) int { return bytes.Compare(a.key, b.key) }

// appendCanonical appends the canonical form of the valid JSON value v,
// found at the given nesting depth.
func appendCanonical(dst, v []byte, depth int) ([]byte, error) {
	var err error
	switch v[0] {
	case '{', '[':
		if depth >= MaxDepth {
			return nil, ErrTooDeep
		}
	}
	switch v[0] {
	case '{':
		var ms []member
		EachMember(v, func(k, val []byte) bool {
			ms = append(ms, member{DecodedKey(k), val})
			return true
		})
		// A stable sort keeps duplicates in document order: the last of a
		// run is the one a decoder keeps.
		slices.SortStableFunc(ms, cmpMember)
		dst = append(dst, '{')
		n := 0
		for i, m := range ms {
			if i+1 < len(ms) && bytes.Equal(ms[i+1].key, m.key) {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(AppendString(dst, string(m.key)), ':')
			if dst, err = appendCanonical(dst, m.val, depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case '[':
		dst = append(dst, '[')
		i, n := SkipSpace(v, 1), 0
		for i < len(v) && v[i] != ']' {
			end := SkipValue(v, i)
			if n > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendCanonical(dst, v[i:end], depth+1); err != nil {
				return nil, err
			}
			n++
			i = SkipSpace(v, end)
			if i < len(v) && v[i] == ',' {
				i = SkipSpace(v, i+1)
			}
		}
		return append(dst, ']'), nil
	case '"':
		s, _ := RawString(v)
		return AppendString(dst, s), nil
	case 't', 'f', 'n':
		return append(dst, v...), nil
	}
	return appendCanonicalNumber(dst, string(v)), nil
}

// HasControl reports whether b holds a control character.
func HasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

func appendCanonicalNumber(dst []byte, n string) []byte {
	if i, err := strconv.ParseInt(n, 10, 64); err == nil {
		return strconv.AppendInt(dst, i, 10)
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || math.IsInf(f, 0) {
		return append(dst, n...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}
