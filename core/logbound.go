package core

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds, in bytes, of the strings a client chooses that the server writes
// to its logs and a tracing middleware writes to span names and attributes
// (see Truncate). A request body may hold up to MaxRequestBytes (4 MiB by
// default) and a header line up to the HTTP server's header limit (1 MiB
// in net/http), and every string in them is the client's choice: without
// a bound one request makes a log line or span of that size.
const (
	// LogNameBytes bounds a name: a method, a tool or prompt name, a
	// JSON-RPC id, a header value (Origin, Host), the protocol version, an
	// authenticated subject or client id. The specification's names are
	// short (a tool name has 1 to 128 characters, 2025-11-25
	// server/tools §Tool names), so the names of a server's own tools and
	// prompts are never cut.
	LogNameBytes = 256
	// LogURIBytes bounds a resource URI, or a target that may be one (the
	// request record's target, a completion ref).
	LogURIBytes = 1024
	// LogErrorBytes bounds the text of an error, which may quote what the
	// client sent (a handler's error built from its arguments).
	LogErrorBytes = 2048
)

// minTruncateBytes is the least bound Truncate applies: room for the
// marker with the largest length and some of the string.
const minTruncateBytes = 64

// Truncate bounds a string a client chose before it is logged or recorded
// in a span: s itself when it is at most max bytes of valid UTF-8, which
// costs no allocation; otherwise at most max bytes of valid UTF-8: the
// longest prefix of s that fits, cut at a rune boundary, followed by the
// marker "…[truncated from N bytes]" with N the length of s. Bytes that are
// not valid UTF-8 become U+FFFD, so that the result is a valid string for
// every log handler and span exporter (OTLP's protobuf strings must be
// UTF-8, and an exporter drops the whole batch of a span that is not). A
// max below 64 counts as 64. The work is bounded by max, not by len(s).
//
// Control characters are kept: slog's handlers quote or escape them, and
// a span attribute is data, not text a terminal interprets.
func Truncate(s string, max int) string {
	if len(s) <= max && utf8.ValidString(s) {
		return s
	}
	return truncate(s, max)
}

// truncate is Truncate of a string longer than n bytes or not valid UTF-8.
func truncate(s string, n int) string {
	n = max(n, minTruncateBytes)
	var b strings.Builder
	b.Grow(n)
	if len(s) <= n && validLen(s) <= n {
		writeValid(&b, s, n)
		return b.String()
	}
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(len(s)), 10)
	writeValid(&b, s, n-len(markerHead)-len(d)-len(markerTail))
	b.WriteString(markerHead)
	b.Write(d)
	b.WriteString(markerTail)
	return b.String()
}

// The marker of a truncated string: markerHead, the original length in
// decimal, markerTail.
const (
	markerHead = "…[truncated from "
	markerTail = " bytes]"
)

// replacement is U+FFFD, which stands for each byte of s that is not
// part of valid UTF-8.
const replacement = "\uFFFD"

// validLen is the length of s once its invalid bytes are replaced.
func validLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += len(replacement)
		} else {
			n += size
		}
		i += size
	}
	return n
}

// writeValid writes to b the longest prefix of s, its invalid bytes
// replaced, that keeps b within n bytes.
func writeValid(b *strings.Builder, s string, n int) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+size]
		if r == utf8.RuneError && size == 1 {
			piece = replacement
		}
		if b.Len()+len(piece) > n {
			return
		}
		b.WriteString(piece)
		i += size
	}
}

// errText is the text of err as the server logs it: bounded, since an
// error may quote what the client sent.
func errText(err error) string { return Truncate(err.Error(), LogErrorBytes) }
