package mcp

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// The Base64 form of a mirrored header value (2026-07-28
// basic/transports/streamable-http §Encoding Header Values).
const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// EncodeHeaderValue encodes a value for Mcp-Name or an Mcp-Param-* header as
// clients must (2026-07-28 basic/transports/streamable-http §Encoding
// Header Values): as is when it is plain visible ASCII and spaces without
// surrounding spaces, otherwise in the =?base64?...?= form (the standard
// alphabet, with padding).
func EncodeHeaderValue(v string) string {
	safe := v == strings.TrimSpace(v) && !(strings.HasPrefix(v, b64Prefix) && strings.HasSuffix(v, b64Suffix))
	for i := 0; safe && i < len(v); i++ {
		if v[i] < 0x20 || v[i] >= 0x7f {
			safe = false
		}
	}
	if safe {
		return v
	}
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(v)) + b64Suffix
}

// DecodeHeaderValue decodes a mirrored header value, the server side of
// EncodeHeaderValue: the =?base64?...?= form (the standard alphabet with
// padding; a value without its padding is malformed, as SEP-2243's test
// cases require) or a plain value of visible ASCII and spaces. ok is false
// when the value is malformed, decodes to invalid UTF-8, or holds bytes a
// plain header value may not carry.
func DecodeHeaderValue(v string) (s string, ok bool) {
	if strings.HasPrefix(v, b64Prefix) && strings.HasSuffix(v, b64Suffix) && len(v) >= len(b64Prefix)+len(b64Suffix) {
		enc := v[len(b64Prefix) : len(v)-len(b64Suffix)]
		dec, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil || !utf8.Valid(dec) {
			return "", false
		}
		return string(dec), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return v, true
}
