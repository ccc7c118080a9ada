package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// The decoders a client runs on every result avoid encoding/json's
// reflection for the common shapes (CallToolResult.decodeFast, textFast,
// Tool.decodeFast, valueFast for _meta) and fall back to it for everything
// else; fuzz targets compare the two. jsonwire.EachKnownMember says when a
// member needs encoding/json's rules.

var errMetaNotObject = errors.New("mcp: _meta is not a JSON object")

// decodeMeta decodes a _meta object as encoding/json decodes it into a
// Meta: by metaFast when it can, else through encoding/json's untyped path
// (fewer allocations than a typed map).
func decodeMeta(b []byte) (Meta, error) {
	if v, ok := valueFast(b, 0); ok {
		if m, ok := v.(map[string]any); ok {
			return Meta(m), nil
		}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	switch m := v.(type) {
	case map[string]any:
		return Meta(m), nil
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
			key, kok := metaKey(k)
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
		jsonwire.EachElement(b, func(v []byte) {
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

// metaKey decodes a raw member key as jsonwire.KeyString does, without
// allocating for the keys every result's _meta repeats.
func metaKey(k []byte) (string, bool) {
	switch string(k) {
	case MetaServerInfo:
		return MetaServerInfo, true
	case MetaSubscriptionID:
		return MetaSubscriptionID, true
	case "name":
		return "name", true
	case "version":
		return "version", true
	case "title":
		return "title", true
	case "progressToken":
		return "progressToken", true
	}
	return jsonwire.KeyString(k)
}
