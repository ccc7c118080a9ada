package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is server text that would rewrite the terminal if printed raw:
// an OSC title change, a screen clear, an 8-bit CSI, a right-to-left
// override, an isolate, DEL, a carriage return and a backspace.
const hostile = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eevil\u2066x\u2069\x7f\r\bEND"

// hostileServer is a 2026-07-28 server that puts hostile text everywhere
// the CLI prints server text: tool descriptions and names (stdout, and the
// warning about a dropped tool), JSON-RPC error messages and data, HTTP
// error bodies, elicitation messages, URLs and form fields, tool results.
func hostileServer(t *testing.T) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name           string          `json:"name"`
				InputResponses json.RawMessage `json:"inputResponses"`
			} `json:"params"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		}
		done := `{"resultType":"complete","content":[{"type":"text","text":` + q(hostile) + `}]}`
		switch req.Method {
		case "server/discover":
			reply(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":` + q(hostile) + `}`)
		case "tools/list":
			// Raw C1, bidi and DEL bytes inside JSON strings are valid
			// JSON; so, to a lenient parser, is a lone 0x9b byte.
			reply(`{"resultType":"complete","tools":[` +
				`{"name":"form","description":"` + "\u009b31m\u202edesc\x7f\x9b" + `","inputSchema":{"type":"object"}},` +
				`{"name":` + q("bad"+hostile) + `,"inputSchema":{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}}]}`)
		case "tools/call":
			if req.Params.InputResponses != nil {
				reply(done)
				return
			}
			switch req.Params.Name {
			case "rpcerr":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s,"data":{"detail":%s,"raw":"%s"}}}`, req.ID, q(hostile), q(hostile), "\u009b\u202e")
			case "httperr":
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(500)
				io.WriteString(w, "line one\n"+hostile+"\nmcpfn: answered accept (--answer)\n")
			case "form":
				reply(`{"resultType":"input_required","requestState":"s","inputRequests":{"q":{"method":"elicitation/create","params":{"mode":"form","message":` + q("Approve?\n"+hostile) +
					`,"requestedSchema":{"type":"object","properties":{` + q("name"+hostile) + `:{"type":` + q("string"+hostile) + `,"description":` + q(hostile) +
					`,"enum":[` + q(hostile) + `],"default":` + q(hostile) + `}}}}}}}`)
			case "url":
				reply(`{"resultType":"input_required","requestState":"s","inputRequests":{"q":{"method":"elicitation/create","params":{"mode":"url","message":` + q(hostile) +
					`,"url":` + q("https://bank.example/\u202elivemoc.evil/"+hostile) + `}}}}`)
			default:
				reply(done)
			}
		case "resources/list":
			reply(`{"resultType":"complete","resources":[{"uri":` + q("test://"+hostile) + `,"name":` + q(hostile) + `,"mimeType":` + q(hostile) + `,"title":` + q(hostile) + `,"description":` + q(hostile) + `}]}`)
		case "resources/templates/list":
			reply(`{"resultType":"complete","resourceTemplates":[{"uriTemplate":` + q("test://{x}"+hostile) + `,"name":` + q(hostile) + `,"description":` + q(hostile) + `}]}`)
		case "resources/read":
			reply(`{"resultType":"complete","contents":[{"uri":` + q(hostile) + `,"mimeType":` + q(hostile) + `,"text":` + q(hostile+"\n"+hostile) + `},{"uri":` + q(hostile) + `,"blob":"AAAA"}]}`)
		case "prompts/list":
			reply(`{"resultType":"complete","prompts":[{"name":` + q(hostile) + `,"description":` + q(hostile) + `,"arguments":[{"name":` + q(hostile) + `,"required":true}]}]}`)
		case "prompts/get":
			reply(`{"resultType":"complete","description":` + q(hostile) + `,"messages":[{"role":` + q(hostile) + `,"content":{"type":"text","text":` + q(hostile) + `}},` +
				`{"role":"user","content":{"type":"image","mimeType":` + q(hostile) + `,"data":"AAAA"}}]}`)
		default:
			http.Error(w, "no", 400)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// unsafe returns the first thing in b a terminal would act on rather than
// show: C0 controls but newline and tab, DEL, invalid UTF-8, C1 controls,
// and the bidirectional controls of Unicode (UAX #9: ALM, LRM, RLM,
// LRE..RLO, LRI..PDI).
func unsafe(b []byte) string {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("invalid byte %#x at %d", b[i], i)
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("%U at %d", r, i)
		}
		i += n
	}
	return ""
}

// TestHostileText: nothing a server sends reaches the terminal as a
// control: stderr shows it escaped, stdout stays one JSON document whose
// strings carry such characters as \u escapes.
func TestHostileText(t *testing.T) {
	t.Parallel()
	url := hostileServer(t)
	cases := []struct {
		stdin string
		args  []string
		code  int
	}{
		{"", []string{"discover", url}, 0},
		{"", []string{"tools", url}, 0},
		{"", []string{"call", url, "rpcerr"}, exitFailure},
		{"", []string{"call", url, "httperr"}, exitFailure},
		{"y\nAda\n", []string{"call", url, "form"}, 0},
		{"", []string{"call", url, "form", "--answer", `{"x":1}`}, 0},
		{"y\n", []string{"call", url, "url"}, 0},
		{"", []string{"call", url, "url", "--answer", "accept"}, 0},
		{"", []string{"resources", url}, 0},
		{"", []string{"read", url, "test://x"}, 0},
		{"", []string{"prompts", url}, 0},
		{"", []string{"get", url, "p", "a=b"}, 0},
	}
	// check holds the assertions on one run.
	check := func(args []string, code, want int, out, errs string) {
		t.Helper()
		if code != want {
			t.Errorf("%v: exit %d, want %d; stderr %s", args, code, want, errs)
		}
		if u := unsafe([]byte(out)); u != "" {
			t.Errorf("%v: stdout has %s: %q", args, u, out)
		}
		if u := unsafe([]byte(errs)); u != "" {
			t.Errorf("%v: stderr has %s: %q", args, u, errs)
		}
		if !strings.Contains(out+errs, "pwned") && !strings.Contains(out+errs, "desc") {
			t.Errorf("%v: the server's text is not shown at all: %q %q", args, out, errs)
		}
		// A server's newline cannot start a line that looks like the
		// CLI's own.
		for _, l := range strings.Split(errs, "\n") {
			if strings.HasPrefix(l, "mcpfn: answered") && !strings.Contains(strings.Join(args, " "), "--answer") {
				t.Errorf("%v: a server line passes for the CLI's: %q", args, l)
			}
		}
	}
	for _, tc := range cases {
		code, out, errs := mcpfn(t, tc.stdin, append(tc.args, "--mode", "modern")...)
		check(tc.args, code, tc.code, out, errs)
		// The text output for people: tables, results, the discover summary.
		var o, e strings.Builder
		code = runEnv(context.Background(), append(tc.args, "--mode", "modern"), &env{stdin: strings.NewReader(tc.stdin), stdout: &o, stderr: &e, tty: true})
		check(append([]string{"(text)"}, tc.args...), code, tc.code, o.String(), e.String())
	}
}

// TestHostileTable: server text cannot break a table's layout: every row
// of the tools table is one line, its cells escaped.
func TestHostileTable(t *testing.T) {
	t.Parallel()
	url := hostileServer(t)
	var o, e strings.Builder
	if code := runEnv(context.Background(), []string{"tools", url, "--mode", "modern"}, &env{stdin: strings.NewReader(""), stdout: &o, stderr: &e, tty: true, width: 200}); code != 0 {
		t.Fatalf("exit %d %s", code, e.String())
	}
	lines := strings.Split(strings.TrimSuffix(o.String(), "\n"), "\n")
	// The header and the tool "form" (the other one is dropped for its
	// invalid x-mcp-header, with a warning on stderr). The lone 0x9b byte
	// was U+FFFD once decoded.
	if len(lines) != 2 || !strings.HasPrefix(lines[1], `form  `) || !strings.HasSuffix(lines[1], `\u009b31m\u202edesc\x7f`+"\ufffd") {
		t.Errorf("table %q", lines)
	}
	var r strings.Builder
	if code := runEnv(context.Background(), []string{"resources", url, "--mode", "modern"}, &env{stdin: strings.NewReader(""), stdout: &r, stderr: &e, tty: true, width: 500}); code != 0 {
		t.Fatalf("exit %d %s", code, e.String())
	}
	// Header, row, blank line, header, row; the escaped text in place.
	rows := strings.Split(strings.TrimSuffix(r.String(), "\n"), "\n")
	if len(rows) != 5 || !strings.HasPrefix(rows[1], `test://\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eevil\u2066x\u2069\x7f\r\x08END  `) {
		t.Errorf("resources table %q", rows)
	}
}
