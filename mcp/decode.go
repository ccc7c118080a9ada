package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// The decoders a client runs on every result avoid encoding/json's
// reflection for the common shapes (CallToolResult.decodeFast, textFast)
// and fall back to it for everything else; fuzz targets compare the two.

// fastMembers walks the members of the valid JSON object data, calling fn
// with the index in known of each member it names and the member's raw
// value; other members are skipped, as encoding/json skips unknown ones,
// unless onlyKnown is set: then another member makes it report false.
// It reports false, for the caller to decode by encoding/json's rules
// instead, when a key needs those rules: it holds an escape, it equals a
// known name only case-insensitively (encoding/json would bind it), or a
// known name comes twice (encoding/json keeps the last); and when fn
// returns false.
func fastMembers(data []byte, known []string, onlyKnown bool, fn func(i int, v []byte) bool) bool {
	var seen uint64
	ok := true
	err := jsonwire.EachMember(data, func(k, v []byte) bool {
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

// eachElement calls fn with each element of the valid JSON array a.
func eachElement(a []byte, fn func(v []byte)) {
	i := jsonwire.SkipSpace(a, 1)
	for i < len(a) && a[i] != ']' {
		j := jsonwire.SkipValue(a, i)
		fn(a[i:j])
		i = jsonwire.SkipSpace(a, j)
		if i < len(a) && a[i] == ',' {
			i = jsonwire.SkipSpace(a, i+1)
		}
	}
}

var errMetaNotObject = errors.New("mcp: _meta is not a JSON object")

// decodeMeta decodes a _meta object as encoding/json decodes it into a
// Meta: by metaFast when it can, else through encoding/json's untyped path
// (fewer allocations than a typed map).
func decodeMeta(b []byte) (Meta, error) {
	if v, ok := valueFast(b, 0); ok {
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	switch m := v.(type) {
	case map[string]any:
		return m, nil
	case nil:
		return nil, nil
	}
	return nil, errMetaNotObject
}

// maxFastDepth bounds the nesting valueFast decodes itself; deeper values
// go to encoding/json.
const maxFastDepth = 16

// valueFast decodes the valid JSON value b as encoding/json decodes it into
// an any (objects as map[string]any, arrays as []any, numbers as float64),
// without reflection. It reports false when encoding/json's rules are
// needed: a string or key that is not valid UTF-8 as written (encoding/json
// replaces the bytes), a number out of float64's range (an error), nesting
// deeper than maxFastDepth.
func valueFast(b []byte, depth int) (any, bool) {
	if depth == 0 {
		b = bytes.TrimSpace(b) // members and elements come trimmed
	}
	if len(b) == 0 {
		return nil, false
	}
	switch b[0] {
	case '{':
		if depth >= maxFastDepth {
			return nil, false
		}
		m := map[string]any{}
		ok := true
		err := jsonwire.EachMember(b, func(k, v []byte) bool {
			key, kok := jsonwire.KeyString(k)
			val, vok := valueFast(v, depth+1)
			if !kok || !vok || !utf8.ValidString(key) {
				ok = false
				return false
			}
			m[key] = val
			return true
		})
		return m, ok && err == nil
	case '[':
		if depth >= maxFastDepth {
			return nil, false
		}
		a := []any{}
		ok := true
		eachElement(b, func(v []byte) {
			if !ok {
				return
			}
			val, vok := valueFast(v, depth+1)
			ok = vok
			a = append(a, val)
		})
		return a, ok
	case '"':
		s, ok := jsonwire.RawString(b)
		return s, ok && utf8.ValidString(s)
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}
