package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Server text on the terminal. Anything a server controls (error messages
// and bodies, JSON-RPC error data, elicitation messages, URLs and form
// fields, tool names in warnings, the authorization URL) is printed so that
// a terminal shows it and acts on none of it: C0 controls, DEL, C1
// controls (U+0080-U+009F, among them the 8-bit CSI), invalid UTF-8 and the
// bidirectional controls of Unicode (UAX #9: U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069) are written as visible escapes (\x1b,
// \u202e). Single-line fields escape newlines too; a multi-line message
// keeps them, with each continuation line indented and marked "|", so that
// no server line can pass for one of the CLI's. Stdout stays one JSON
// document: the same characters become \u escapes inside its strings.

// unsafeRune reports whether a terminal may act on r rather than show it.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// appendEscaped appends s with every unsafe rune escaped; keep lists the
// control runes written as they are.
func appendEscaped(b []byte, s string, keep string) []byte {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = fmt.Appendf(b, `\x%02x`, s[i])
		case !unsafeRune(r) || strings.ContainsRune(keep, r):
			b = append(b, s[i:i+n]...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r < 0x80:
			b = fmt.Appendf(b, `\x%02x`, r)
		default:
			b = fmt.Appendf(b, `\u%04x`, r)
		}
		i += n
	}
	return b
}

// oneLine is server text for one line of the terminal.
func oneLine(s string) string { return string(appendEscaped(nil, s, "")) }

// multiLine is a server message of several lines: newlines (and tabs) kept,
// each line after the first indented and marked.
func multiLine(s string) string {
	s = strings.TrimRight(s, "\r\n")
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var b []byte
	for i, l := range lines {
		if i > 0 {
			b = append(b, "\n  | "...)
		}
		b = appendEscaped(b, l, "\t")
	}
	return string(b)
}

// compactJSON is raw server JSON for one line: compacted, then with its
// strings made terminal-safe; what is not JSON is shown as text.
func compactJSON(raw []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return oneLine(string(raw))
	}
	return string(safeJSON(buf.Bytes()))
}

// safeJSON rewrites a JSON document so that no byte of it is one a
// terminal acts on: unsafe runes become \u escapes (which can only stand
// inside strings, so the document keeps its value), invalid UTF-8 becomes
// \ufffd, tabs and newlines (whitespace) stay, and carriage returns
// (whitespace too, but able to overwrite what was printed) go.
func safeJSON(doc []byte) []byte {
	i := 0
	for i < len(doc) {
		c := doc[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' {
			i++
			continue
		}
		r, n := utf8.DecodeRune(doc[i:])
		if r != utf8.RuneError && !unsafeRune(r) {
			i += n
			continue
		}
		break
	}
	if i == len(doc) {
		return doc // the common case: nothing to rewrite
	}
	out := append(make([]byte, 0, len(doc)+32), doc[:i]...)
	for i < len(doc) {
		c := doc[i]
		if c == '\t' || c == '\n' || c == '\r' {
			if c != '\r' {
				out = append(out, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case unsafeRune(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, doc[i:i+n]...)
		}
		i += n
	}
	return out
}

// safeWriter is the CLI's stderr: a last guard that escapes whatever unsafe
// rune reaches it (newlines and tabs pass), should some path print server
// text without oneLine or multiLine.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			if _, err := s.w.Write(appendEscaped(nil, string(p), "\n\t")); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return s.w.Write(p)
}
