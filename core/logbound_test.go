package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpfn/mcpfn/core"
)

// hostile is a client-chosen string of 900 KiB, the size of the log line
// one request produced before the log bounds.
var hostile = strings.Repeat("a", 900<<10)

// logCapture is a debug-level JSON logger whose lines a test reads.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logCapture) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&lockedWriter{w: &l.buf, mu: &l.mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// take returns the lines logged since the last take, decoded.
func (l *logCapture) take(t *testing.T) (lines [][]byte, recs []record) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range bytes.Split(bytes.TrimSpace(l.buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("log line %.200s: %v", line, err)
		}
		lines = append(lines, append([]byte(nil), line...))
		recs = append(recs, r)
	}
	l.buf.Reset()
	return lines, recs
}

// maxLogLine bounds every line a hostile request may cause: the longest
// bound of a value (an error text) plus the fixed attributes of a line.
const maxLogLine = 4 << 10

// checkBounded fails unless every line is at most maxLogLine bytes and
// the attribute key of the line with message msg is cut to at most bound
// bytes with the marker naming the original length n.
func checkBounded(t *testing.T, lc *logCapture, msg, key string, bound, n int) {
	t.Helper()
	lines, recs := lc.take(t)
	found := false
	for i, line := range lines {
		if len(line) > maxLogLine {
			t.Errorf("a log line of %d bytes (at most %d): %.300s", len(line), maxLogLine, line)
		}
		if recs[i]["msg"] != msg {
			continue
		}
		found = true
		v, _ := recs[i][key].(string)
		if len(v) > bound || !strings.HasSuffix(v, "[truncated from "+strconv.Itoa(n)+" bytes]") {
			t.Errorf("%q: %s is %d bytes (at most %d) ending %q, want the truncation marker with %d",
				msg, key, len(v), bound, v[max(0, len(v)-40):], n)
		}
	}
	if !found {
		t.Errorf("no line %q among %d lines", msg, len(lines))
	}
}

// TestLogBoundsHostileRequests sends requests carrying 900 KiB strings a
// client chooses (a tool, prompt or method name, a resource URI, a
// completion ref, a JSON-RPC id, the Origin and Host headers, the text of
// an error a tool builds from its arguments, a principal's subject) and
// checks that no log line they cause is longer than a few KiB, that each
// such value is cut to its bound with a marker naming its original
// length, and that the server goes on serving.
func TestLogBoundsHostileRequests(t *testing.T) {
	t.Parallel()
	var lc logCapture
	srv := newFixture(t, &core.ServerOptions{Logger: lc.logger()})
	core.AddTool(srv, &core.Tool{Name: "fail_with"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return "", errors.New("cannot use " + in.S)
	})
	n := len(hostile)

	// The request record: one line per round.
	callReq(1, hostile, nil).do(t, srv)
	checkBounded(t, &lc, "mcp request", "target", 1024, n)
	mreq(1, "prompts/get", map[string]any{"name": hostile}).do(t, srv)
	checkBounded(t, &lc, "mcp request", "target", 1024, n)
	mreq(1, "resources/read", map[string]any{"uri": "test://" + hostile}).do(t, srv)
	checkBounded(t, &lc, "mcp request", "target", 1024, n+len("test://"))
	mreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": hostile},
		"argument": map[string]any{"name": "who", "value": "a"}}).do(t, srv)
	checkBounded(t, &lc, "mcp request", "target", 1024, n)

	sid := initialize(t, srv, legacyVersion, nil, nil)
	lc.take(t)
	// A legacy method the server does not serve reaches the record.
	lreq(hostile[:200<<10], hostile, nil, legacyVersion, sid).do(t, srv)
	checkBounded(t, &lc, "mcp request", "method", 256, n)
	lreq(hostile[:200<<10], "tools/call", map[string]any{"name": hostile}, legacyVersion, sid).do(t, srv)
	checkBounded(t, &lc, "mcp request", "target", 1024, n)

	// Headers of a refused request.
	callReq(1, "add", map[string]any{"a": 1, "b": 2}).withHeader("Origin", "https://"+hostile).do(t, srv)
	checkBounded(t, &lc, "refused request from a foreign origin or host", "origin", 256, n+len("https://"))
	hosts := newFixture(t, &core.ServerOptions{Logger: lc.logger(), AllowedHosts: []string{"mcp.example"}})
	hr := callReq(1, "add", map[string]any{"a": 1, "b": 2}).httpRequest("/mcp")
	hr.Host = hostile
	rec := httptest.NewRecorder()
	hosts.ServeHTTP(rec, hr)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a foreign Host: HTTP %d, want 403", rec.Code)
	}
	checkBounded(t, &lc, "refused request from a foreign origin or host", "host", 256, n)

	// A tool's error built from its arguments: a -32603 logged at error.
	callReq(1, "fail_with", map[string]any{"s": hostile}).do(t, srv).wantError(t, http.StatusOK, core.CodeInternalError)
	checkBounded(t, &lc, "request failed", "error", 2048, n+len("cannot use "))
	assertServes(t, srv)

	// The same as an isError result (ToolErrorResults), logged at debug.
	var lc2 logCapture
	srv2 := newFixture(t, &core.ServerOptions{Logger: lc2.logger(), ToolErrorResults: true})
	core.AddTool(srv2, &core.Tool{Name: "fail_with"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return "", errors.New("cannot use " + in.S)
	})
	callReq(1, "fail_with", map[string]any{"s": hostile}).do(t, srv2).result(t)
	checkBounded(t, &lc2, "tool failed: reported as an isError result", "error", 2048, n+len("cannot use "))

	// An authenticator's refusal whose cause quotes the credential (a
	// token's kid or typ, as auth's do): logged at debug, bounded.
	var lc4 logCapture
	refuse := newFixture(t, &core.ServerOptions{Logger: lc4.logger(), Authenticator: refusing{cause: "kid " + hostile}})
	callReq(1, "add", map[string]any{"a": 1, "b": 2}).do(t, refuse).wantError(t, http.StatusUnauthorized, core.CodeInvalidRequest)
	checkBounded(t, &lc4, "request refused", "error", 2048, n+len("kid "))

	// A principal is logged too: its subject is bounded like a name.
	var lc3 logCapture
	srv3 := newFixture(t, &core.ServerOptions{Logger: lc3.logger(), Authenticator: fixedSubject{subject: hostile}})
	callReq(1, "add", map[string]any{"a": 1, "b": 2}).do(t, srv3).result(t)
	checkBounded(t, &lc3, "mcp request", "principal", 256, n)
	assertServes(t, srv3)
}

// fixedSubject authenticates every request as subject.
type fixedSubject struct{ subject string }

func (fixedSubject) Metadata(*http.Request) ([]byte, error) { return nil, nil }

func (a fixedSubject) Authenticate(r *http.Request) (context.Context, error) {
	return core.NewContextWithPrincipal(r.Context(), &core.Principal{Subject: a.subject}), nil
}

func (fixedSubject) Authorize(context.Context, core.Operation) error { return nil }

// TestTruncate: a short valid string is itself, without a copy or an
// allocation; a longer one is cut at a rune boundary to at most the bound,
// marker included, the marker naming the original length; bytes that are
// not UTF-8 become U+FFFD; a bound below 64 counts as 64.
func TestTruncate(t *testing.T) {
	// Not parallel: it counts allocations.
	for _, tc := range []struct {
		name, s string
		max     int
		want    string
	}{
		{"short", "tools/call", 256, "tools/call"},
		{"exact", strings.Repeat("x", 256), 256, strings.Repeat("x", 256)},
		{"empty", "", 256, ""},
		{"control characters kept", "a\nb\x00c", 256, "a\nb\x00c"},
		{"one over", strings.Repeat("x", 257), 256,
			strings.Repeat("x", 256-len("…[truncated from 257 bytes]")) + "…[truncated from 257 bytes]"},
		// é is two bytes; the marker is 29: 64 leaves 35 bytes of room,
		// which hold 17 of them, 65 leaves 36, which hold 18.
		{"rune boundary", strings.Repeat("é", 100), 64, strings.Repeat("é", 17) + "…[truncated from 200 bytes]"},
		{"rune boundary, even room", strings.Repeat("é", 100), 65, strings.Repeat("é", 18) + "…[truncated from 200 bytes]"},
		{"invalid UTF-8 replaced", "a\xffb", 256, "a\uFFFDb"},
		{"invalid UTF-8 that grows past the bound", strings.Repeat("\xff", 60), 64,
			strings.Repeat("\uFFFD", 12) + "…[truncated from 60 bytes]"},
		{"a cut rune at the end", "ab\xe2\x82", 256, "ab\uFFFD\uFFFD"},
		{"bound below the least", strings.Repeat("x", 100), 10,
			strings.Repeat("x", 64-len("…[truncated from 100 bytes]")) + "…[truncated from 100 bytes]"},
	} {
		got := core.Truncate(tc.s, tc.max)
		if got != tc.want {
			t.Errorf("%s: Truncate(%d bytes, %d) = %q, want %q", tc.name, len(tc.s), tc.max, got, tc.want)
		}
		if !utf8.ValidString(got) || len(got) > max(tc.max, 64) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", tc.name, len(got), utf8.ValidString(got))
		}
	}
	short := "tools/call lookup"
	if got := core.Truncate(short, core.LogNameBytes); unsafe.StringData(got) != unsafe.StringData(short) {
		t.Errorf("a short string was copied")
	}
	if n := testing.AllocsPerRun(100, func() { core.Truncate(short, core.LogNameBytes) }); n != 0 {
		t.Errorf("Truncate of a short string: %v allocations, want 0", n)
	}
	// A long one costs one allocation, of the bound, whatever its length.
	if n := testing.AllocsPerRun(100, func() { core.Truncate(hostile, core.LogNameBytes) }); n != 1 {
		t.Errorf("Truncate of %d bytes: %v allocations, want 1", len(hostile), n)
	}
}

// FuzzTruncate: the result is valid UTF-8 within the bound; it is the
// string itself when that fits and is valid, else ends with the marker
// naming the original length, after a prefix of the string (its invalid
// bytes replaced).
func FuzzTruncate(f *testing.F) {
	for _, s := range []string{"", "tools/call", strings.Repeat("é", 70), "a\xffb", strings.Repeat("\xe2\x82", 50), strings.Repeat("x", 300)} {
		f.Add(s, 64)
		f.Add(s, 256)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n%2048 + 1
		if n < 0 {
			n = -n
		}
		got := core.Truncate(s, n)
		bound := max(n, 64)
		if !utf8.ValidString(got) || len(got) > bound {
			t.Fatalf("Truncate(%q, %d) = %q: %d bytes, valid %v", s, n, got, len(got), utf8.ValidString(got))
		}
		valid := strings.ToValidUTF8(s, "\uFFFD")
		if len(s) <= n && utf8.ValidString(s) {
			if got != s {
				t.Fatalf("Truncate(%q, %d) = %q, want it unchanged", s, n, got)
			}
			return
		}
		marker := "…[truncated from " + strconv.Itoa(len(s)) + " bytes]"
		if head, ok := strings.CutSuffix(got, marker); ok {
			if !strings.HasPrefix(strings.ReplaceAll(valid, "\uFFFD", ""), strings.ReplaceAll(head, "\uFFFD", "")) {
				t.Fatalf("Truncate(%q, %d) = %q: not a prefix of the string", s, n, got)
			}
			return
		}
		// Kept whole, only its invalid bytes replaced.
		if strings.ReplaceAll(got, "\uFFFD", "") != strings.ReplaceAll(valid, "\uFFFD", "") {
			t.Fatalf("Truncate(%q, %d) = %q, want %q with its invalid bytes replaced", s, n, got, s)
		}
	})
}

// refusing refuses every request with a 401 whose cause is cause.
type refusing struct{ cause string }

func (refusing) Metadata(*http.Request) ([]byte, error) { return nil, nil }

func (a refusing) Authenticate(r *http.Request) (context.Context, error) {
	e := core.NewError(core.CodeInvalidRequest, "Unauthorized").WithHTTP(http.StatusUnauthorized, nil)
	e.Cause = errors.New(a.cause)
	return nil, e
}

func (refusing) Authorize(context.Context, core.Operation) error { return nil }

// An answer never multiplies what a request sent: the error of an unknown
// tool, prompt or method echoes the name cut to LogNameBytes (a tool name
// has at most 128 characters), not 900 KiB twice (message and data).
func TestUnknownNamesEchoedBounded(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "t", Version: "1"}, &core.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "", nil })
	srv.AddPrompt(&core.Prompt{Name: "p"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) { return nil, nil })
	for name, r := range map[string]*testReq{
		"tool":               callReq(1, hostile, map[string]any{}),
		"prompt":             mreq(1, "prompts/get", map[string]any{"name": hostile}),
		"method":             mreq(1, hostile, map[string]any{}),
		"mismatched tool":    callReq(1, hostile, map[string]any{}).withHeader(core.HeaderName, "x"),
		"mismatched method":  mreq(1, hostile, map[string]any{}).withHeader("Mcp-Method", "x"),
		"mismatched version": mreq(1, "tools/list", map[string]any{}).withMeta(core.MetaProtocolVersion, hostile),
	} {
		res := r.do(t, srv)
		if len(res.Body) > 4<<10 {
			t.Errorf("an unknown %s of 900 KiB: an answer of %d bytes", name, len(res.Body))
		}
	}
}
