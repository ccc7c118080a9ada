package core

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestParseAccept pins what each Accept header allows (RFC 9110 §12.5.1:
// a q of 0 refuses a type).
func TestParseAccept(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		h         string
		json, sse bool
	}{
		{"", true, true},
		{"  ", true, true},
		{"application/json", true, false},
		{"text/event-stream", false, true},
		{"application/json, text/event-stream", true, true},
		{"Application/JSON ,TEXT/Event-Stream", true, true},
		{"*/*", true, true},
		{"application/*", true, false},
		{"text/*", false, true},
		{"text/html", false, false},
		{",", false, false},
		{"application/json,", true, false},
		{",,text/event-stream,,", false, true},
		{"application/json;q=0, text/event-stream", false, true},
		{"application/json; q=0.000", false, false},
		{"application/json;q=0.5", true, false},
		{"text/event-stream;q=0.01", false, true},
		{"application/json;charset=utf-8", true, false},
	} {
		if got := parseAccept(c.h); got.json != c.json || got.sse != c.sse {
			t.Errorf("parseAccept(%q) = %+v, want json %v sse %v", c.h, got, c.json, c.sse)
		}
	}
}

// TestHeaderGet: headerGet is http.Header.Get for the canonical names the
// server reads, whatever case the client sent them in, and costs no
// allocation.
func TestHeaderGet(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("mcp-protocol-version", "2025-11-25")
	h.Set("MCP-SESSION-ID", "abc")
	h.Add("Mcp-Method", "tools/call")
	h.Add("Mcp-Method", "other")
	for _, name := range []string{HeaderProtocolVersion, HeaderSessionID, HeaderMethod, HeaderName, "Origin", "Accept", "Content-Type"} {
		canon := canonicalHeader(name)
		if got, want := headerGet(h, canon), h.Get(name); got != want {
			t.Errorf("headerGet(%s) = %q, Header.Get says %q", canon, got, want)
		}
	}
	for _, canon := range []string{canonProtocolVersion, canonSessionID, canonMethod, canonName} {
		if canon != canonicalHeader(strings.ToLower(canon)) {
			t.Errorf("%q is not canonical", canon)
		}
	}
	if headerGet(nil, canonSessionID) != "" {
		t.Error("a nil header has no values")
	}
}

// TestDoorAllocations: reading the headers the door reads costs no
// allocation (AllocsPerRun cannot run in parallel tests).
func TestDoorAllocations(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderProtocolVersion, "2025-11-25")
	if n := testing.AllocsPerRun(100, func() { headerGet(h, canonProtocolVersion) }); n != 0 {
		t.Errorf("headerGet: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { parseAccept("application/json, text/event-stream") }); n != 0 {
		t.Errorf("parseAccept: %v allocations", n)
	}
}

// TestIsLoopbackHost: isLoopbackHost answers as net.ParseIP's IsLoopback
// for every form a Host header can take.
func TestIsLoopbackHost(t *testing.T) {
	t.Parallel()
	old := func(host string) bool {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if strings.EqualFold(host, "localhost") {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	for _, h := range []string{"127.0.0.1", "127.1.2.3", "127.0.0.01", "127.000.000.001", "0177.0.0.1", "127.1", "2130706433",
		"::1", "[::1]", "[::1", "::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "::1%lo",
		"[::1%25lo]", "::1%25lo", "fe80::1", "::", "0.0.0.0", "128.0.0.1", "10.0.0.1", "localhost", "LOCALHOST", "localhost.",
		"example.com", "", "[]", " 127.0.0.1", "127.0.0.1 ", "127.0.0.1:80", "::1:80", "1.2.3.4.5", "127.0.0.256", "::ffff:10.0.0.1",
		"64:ff9b::7f00:1", "::127.0.0.1", "0:0:0:0:0:ffff:127.0.0.1", "0::1", "00::1", "1::", "a::1", "::FFFF:127.0.0.1",
		"0:0:0:0:0:FFFF:7F00:1", "mcp.example.com", "x.lambda-url.us-east-1.on.aws"} {
		if got, want := isLoopbackHost(h), old(h); got != want {
			t.Errorf("isLoopbackHost(%q) = %v, net.ParseIP says %v", h, got, want)
		}
	}
}

// TestEnvelopedResult: a result encoded in the buffer resultBuffer returned
// is sent where it was encoded, behind the response's head; any other
// result (another buffer, another id, one that outgrew the room) is not.
func TestEnvelopedResult(t *testing.T) {
	t.Parallel()
	id := []byte(`"req-1"`)
	want := func(res string) string { return `{"jsonrpc":"2.0","id":"req-1","result":` + res + `}` }
	encode := func(x *exchange, id []byte, res string, room int) []byte {
		r := &Request{ID: id, x: x}
		b := r.resultBuffer(room)
		b = append(b, res...)
		return b[:len(b):len(b)]
	}

	x := &exchange{}
	res := encode(x, id, `{"content":[]}`, 64)
	msg, ok := x.enveloped(id, res)
	if !ok || string(msg) != want(`{"content":[]}`) {
		t.Fatalf("enveloped = %q, %v; want %q", msg, ok, want(`{"content":[]}`))
	}
	if &msg[len(msg)-len(res)-1] != &res[0] {
		t.Error("the result was copied")
	}
	if _, ok := x.enveloped(id, res); ok {
		t.Error("the head served twice")
	}

	// A shorter result from the same buffer (a middleware's slice of it)
	// is copied: the closing brace would land inside the longer result.
	x = &exchange{}
	full := encode(x, id, `{"content":[],"isError":true}`, 64)
	if msg, ok := x.enveloped(id, full[:len(`{"content":[]`)]); ok {
		t.Errorf("a prefix enveloped: %q", msg)
	}
	if string(full) != `{"content":[],"isError":true}` {
		t.Errorf("the longer result changed: %q", full)
	}

	for _, c := range []struct {
		name string
		res  func(x *exchange) []byte
		id   []byte
	}{
		{"another buffer", func(x *exchange) []byte { encode(x, id, `{}`, 64); return []byte(`{}`) }, id},
		{"another id", func(x *exchange) []byte { return encode(x, id, `{}`, 64) }, []byte(`"req-2"`)},
		{"same length id", func(x *exchange) []byte { return encode(x, id, `{}`, 64) }, []byte(`"req-9"`)},
		{"outgrew the room", func(x *exchange) []byte { return encode(x, id, `{"content":[{"type":"text","text":"long"}]}`, 4) }, id},
		{"empty", func(x *exchange) []byte { encode(x, id, `{}`, 64); return nil }, id},
		{"no head", func(x *exchange) []byte { return []byte(`{}`) }, id},
	} {
		x := &exchange{}
		if msg, ok := x.enveloped(c.id, c.res(x)); ok {
			t.Errorf("%s: enveloped %q", c.name, msg)
		}
	}
}
