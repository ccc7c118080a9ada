package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHeaderValue checks that EncodeHeaderValue and DecodeHeaderValue round
// trip every UTF-8 string through a valid header value, and that decoding
// arbitrary values never panics.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"", "plain", "Zürich", " lead", "trail ", "=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?=",
		"=?base64?", "?=", "=?base64?=", "a\r\nb", "\x00", "tab\there", "日本語", "\xff\xfe", "=?base64?WsO8cmljaA==?=", "=?base64?WsO8cmljaA?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dec, ok := DecodeHeaderValue(s)
		if ok && !strings.HasPrefix(s, b64Prefix) && dec != s {
			t.Fatalf("plain value %q decoded to %q", s, dec)
		}
		if ok && !utf8.ValidString(dec) {
			t.Fatalf("decoded %q to invalid UTF-8", s)
		}
		if !utf8.ValidString(s) {
			return
		}
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("encoded %q as %q, which is not a plain header value", s, enc)
			}
		}
		if enc != strings.TrimSpace(enc) {
			t.Fatalf("encoded %q with surrounding space: %q", s, enc)
		}
		back, ok := DecodeHeaderValue(enc)
		if !ok || back != s {
			t.Fatalf("round trip %q -> %q -> %q, %v", s, enc, back, ok)
		}
	})
}
