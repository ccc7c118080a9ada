package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func prepared(c Call) *Call {
	c.Prepare()
	return &c
}

func TestModernAddRequest(t *testing.T) {
	t.Parallel()
	c := prepared(Call{Kind: Add, Modern: true, A: 2, B: 3})
	got := string(c.AppendBody(nil, 7))
	want := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	wantHdr := "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n"
	if c.Headers() != wantHdr {
		t.Errorf("headers %q, want %q", c.Headers(), wantHdr)
	}
}

func TestDiscoverRequest(t *testing.T) {
	t.Parallel()
	c := prepared(Call{Kind: Discover, Modern: true})
	got := string(c.AppendBody(nil, 1))
	want := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if strings.Contains(c.Headers(), "Mcp-Name") {
		t.Errorf("discover has Mcp-Name: %q", c.Headers())
	}
}

func TestLegacyRequests(t *testing.T) {
	t.Parallel()
	ini := prepared(Call{Kind: Initialize})
	var m map[string]any
	if err := json.Unmarshal(ini.AppendBody(nil, 1), &m); err != nil {
		t.Fatal(err)
	}
	params := m["params"].(map[string]any)
	if params["protocolVersion"] != LegacyVersion || params["capabilities"] == nil || params["clientInfo"] == nil {
		t.Errorf("initialize params %v", params)
	}
	if ini.Headers() != "" {
		t.Errorf("initialize headers %q, want none", ini.Headers())
	}

	note := prepared(Call{Kind: Initialized})
	if got := string(note.AppendBody(nil, 99)); got != `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
		t.Errorf("notification body %s", got)
	}

	add := prepared(Call{Kind: Add, A: 1, B: 1})
	body := string(add.AppendBody(nil, 3))
	if strings.Contains(body, "_meta") {
		t.Errorf("legacy body has _meta: %s", body)
	}
	if add.Headers() != "MCP-Protocol-Version: 2025-11-25\r\n" {
		t.Errorf("legacy headers %q", add.Headers())
	}

	echo := prepared(Call{Kind: Echo, Modern: true, Text: DefaultEchoText})
	if err := json.Unmarshal(echo.AppendBody(nil, 5), &m); err != nil {
		t.Fatalf("echo body is not JSON: %v", err)
	}
	if got := m["params"].(map[string]any)["arguments"].(map[string]any)["text"]; got != DefaultEchoText {
		t.Errorf("echo text %q", got)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	body := ": comment\r\nevent: message\r\nid: 1\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n" +
		"event: ping\n\n" + // no data: skipped
		"data: last\n" // no final blank line
	var got []string
	for ev := range Events([]byte(body)) {
		got = append(got, string(ev))
	}
	want := []string{"{\"a\":\n1}", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
}

const addOK = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5},"resultType":"complete"}}`

func TestExtract(t *testing.T) {
	t.Parallel()
	msg, err := Extract("application/json", []byte(addOK), 7)
	if err != nil || string(msg) != addOK {
		t.Fatalf("json: %q, %v", msg, err)
	}
	sse := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\nid: 3\ndata: " + addOK + "\n\n"
	msg, err = Extract("text/event-stream; charset=utf-8", []byte(sse), 7)
	if err != nil || string(msg) != addOK {
		t.Fatalf("sse: %q, %v", msg, err)
	}
	if _, err := Extract("text/event-stream", []byte(sse), 8); err == nil {
		t.Error("sse with wrong id: no error")
	}
	if _, err := Extract("text/event-stream", []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n"), 7); err == nil {
		t.Error("sse without response: no error")
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	add := prepared(Call{Kind: Add, Modern: true, A: 2, B: 3})
	legacyAdd := prepared(Call{Kind: Add, A: 2, B: 3})
	echo := prepared(Call{Kind: Echo, Modern: true, Text: "hi"})
	payload := prepared(Call{Kind: Payload, Modern: true, N: 4})
	disc := prepared(Call{Kind: Discover, Modern: true})
	ini := prepared(Call{Kind: Initialize})
	tests := []struct {
		name string
		c    *Call
		msg  string
		ok   bool
	}{
		{"add", add, addOK, true},
		{"add id as string", add, strings.Replace(addOK, `"id":7`, `"id":"7"`, 1), false},
		{"add wrong id", add, strings.Replace(addOK, `"id":7`, `"id":8`, 1), false},
		{"add wrong sum", add, strings.Replace(addOK, `"structuredContent":{"sum":5}`, `"structuredContent":{"sum":6}`, 1), false},
		{"add wrong text", add, strings.Replace(addOK, `{\"sum\":5}`, `{\"sum\":4}`, 1), false},
		{"add no structuredContent", add, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}],"resultType":"complete"}}`, false},
		{"modern add without resultType", add, strings.Replace(addOK, `,"resultType":"complete"`, ``, 1), false},
		{"legacy add without resultType", legacyAdd, strings.Replace(addOK, `,"resultType":"complete"`, ``, 1), true},
		{"legacy add, text only", legacyAdd, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}]}}`, true},
		{"legacy add, text only, wrong sum", legacyAdd, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"sum\":6}"}]}}`, false},
		{"legacy add, wrong structuredContent", legacyAdd, strings.Replace(strings.Replace(addOK, `,"resultType":"complete"`, ``, 1), `"structuredContent":{"sum":5}`, `"structuredContent":{"sum":6}`, 1), false},
		{"add isError", add, strings.Replace(addOK, `"resultType"`, `"isError":true,"resultType"`, 1), false},
		{"error response", add, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}`, false},
		{"not json", add, `nope`, false},
		{"echo", echo, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`, true},
		{"echo wrong", echo, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ho"}],"resultType":"complete"}}`, false},
		{"payload", payload, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxxx"}],"resultType":"complete"}}`, true},
		{"payload short", payload, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxx"}],"resultType":"complete"}}`, false},
		{"discover", disc, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{}}}`, true},
		{"discover no modern", disc, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","supportedVersions":["2025-11-25"],"capabilities":{}}}`, false},
		{"initialize", ini, `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, true},
		{"initialize other version", ini, `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`, false},
	}
	for _, tt := range tests {
		err := tt.c.Verify([]byte(tt.msg), 7)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestChecker(t *testing.T) {
	t.Parallel()
	add := prepared(Call{Kind: Add, Modern: true, A: 2, B: 3})
	k := NewChecker(add)
	body := func(id string) []byte { return []byte(strings.Replace(addOK, `"id":7`, `"id":`+id, 1)) }
	if err := k.Check("application/json", body("4294967297"), 4294967297); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{4294967298, 4294967299, 12} {
		if err := k.Check("application/json", body(itoa(id)), id); err != nil {
			t.Fatalf("id %d: %v", id, err)
		}
	}
	// The length check allows for ids of other lengths, so 12 is a hit too.
	if k.Full != 1 || k.Fast != 3 {
		t.Errorf("full %d fast %d, want 1 and 3", k.Full, k.Fast)
	}
	// Wrong id in an otherwise identical body: fast path misses, full check fails.
	if err := k.Check("application/json", body("13"), 14); err == nil {
		t.Error("wrong id accepted")
	}
	// Different (wrong) content: full check fails.
	bad := strings.Replace(string(body("15")), `"sum":5}`, `"sum":6}`, 1)
	if err := k.Check("application/json", []byte(bad), 15); err == nil {
		t.Error("wrong sum accepted")
	}
	// Different content type: full check, still correct.
	full := k.Full
	if err := k.Check("application/json; charset=utf-8", body("16"), 16); err != nil || k.Full != full+1 {
		t.Errorf("content type change: err %v, full %d", err, k.Full)
	}
}

func TestCheckerIDTwice(t *testing.T) {
	t.Parallel()
	// The id also occurs in the text: no template may be learnt.
	echo := prepared(Call{Kind: Echo, Modern: true, Text: "77"})
	k := NewChecker(echo)
	msg := []byte(`{"jsonrpc":"2.0","id":77,"result":{"content":[{"type":"text","text":"77"}],"resultType":"complete"}}`)
	for range 2 {
		if err := k.Check("application/json", msg, 77); err != nil {
			t.Fatal(err)
		}
	}
	if k.Fast != 0 || k.Full != 2 {
		t.Errorf("fast %d full %d, want 0 and 2", k.Fast, k.Full)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
