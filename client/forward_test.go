package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

const forwardMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`

// TestForward: a request another client built reaches the server as it
// is, with the transport's headers added; the notifications of its stream
// and its result or error come back as received; input_required is not
// answered; x-mcp-header declarations are learnt and a -32020 refreshes
// them once.
func TestForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ended := make(chan struct{}, 1)
	started := make(chan struct{}, 1)
	url, rec := newServer(t, nil, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "progress"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			for i := 1; i <= 2; i++ {
				req.NotifyProgress(ctx, float64(i), 2, "")
			}
			return "done", nil
		})
		core.AddTool(s, &core.Tool{Name: "hdr", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
			func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
				return fmt.Sprint(in["region"]), nil
			})
		core.AddTool(s, &core.Tool{Name: "ask"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("name?", json.RawMessage(`{"type":"object","properties":{}}`))}, "")
		})
		core.AddTool(s, &core.Tool{Name: "block"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			ended <- struct{}{}
			return "", ctx.Err()
		})
	})
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}

	msg := json.RawMessage(`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"progress",` +
		`"_meta":{"progressToken":"tok","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var notes []client.Notification
	res, err := c.Forward(ctx, msg, func(n client.Notification) { notes = append(notes, n) })
	if err != nil || !bytes.Contains(res, []byte(`"text":"done"`)) || !bytes.Contains(res, []byte(`"resultType":"complete"`)) {
		t.Fatalf("progress: %s %v", res, err)
	}
	if len(notes) != 2 || notes[0].Method != "notifications/progress" || !bytes.Contains(notes[1].Params, []byte(`"progressToken":"tok","progress":2`)) {
		t.Fatalf("notifications %+v", notes)
	}
	s := rec.last("tools/call")
	if !bytes.Equal(s.Body, msg) {
		t.Fatalf("the body was changed:\n%s\n%s", s.Body, msg)
	}
	if s.Header.Get("Mcp-Protocol-Version") != "2026-07-28" || s.Header.Get("Mcp-Method") != "tools/call" || s.Header.Get("Mcp-Name") != "progress" {
		t.Fatalf("headers %v", s.Header)
	}

	// x-mcp-header: the declarations are read from tools/list first.
	res, err = c.Forward(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hdr","arguments":{"region":"Zürich"},`+forwardMeta+`}}}`), nil)
	if err != nil || !bytes.Contains(res, []byte("Zürich")) {
		t.Fatalf("hdr: %s %v", res, err)
	}
	if got := rec.last("tools/call").Header.Get("Mcp-Param-Region"); got != mcp.EncodeHeaderValue("Zürich") {
		t.Fatalf("Mcp-Param-Region %q", got)
	}
	// A -32020 refreshes the list and sends the request once more.
	lists := rec.count("tools/list")
	var once atomic.Bool
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if s.RPC != "tools/call" || !once.CompareAndSwap(false, true) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"Mcp-Param-Region does not match"}}`)
		return true
	}
	calls := rec.count("tools/call")
	res, err = c.Forward(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hdr","arguments":{"region":"eu"},`+forwardMeta+`}}}`), nil)
	if err != nil || rec.count("tools/call") != calls+2 || rec.count("tools/list") != lists+1 {
		t.Fatalf("after -32020: %s %v; calls %d lists %d", res, err, rec.count("tools/call")-calls, rec.count("tools/list")-lists)
	}
	rec.fault = nil

	// input_required comes back for the caller to answer.
	res, err = c.Forward(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask",`+forwardMeta+`}}}`), nil)
	if err != nil || !bytes.Contains(res, []byte(`"resultType":"input_required"`)) {
		t.Fatalf("ask: %s %v", res, err)
	}
	// A JSON-RPC error is an *mcp.Error.
	_, err = c.Forward(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope",`+forwardMeta+`}}}`), nil)
	var re *mcp.Error
	if !errors.As(err, &re) || re.Code != mcp.CodeInvalidParams {
		t.Fatalf("unknown tool: %v", err)
	}
	// Not a 2026-07-28 request: nothing is sent (a dual-era server would
	// take a request without _meta for a 2025-03-26 one).
	n := len(rec.all())
	for _, bad := range []string{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, `[1]`, `{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{}}}`} {
		if _, err := c.Forward(ctx, json.RawMessage(bad), nil); err == nil {
			t.Fatalf("Forward(%s) succeeded", bad)
		}
	}
	if len(rec.all()) != n {
		t.Fatal("a bad message was sent")
	}
	// Ending ctx closes the stream: the server's handler sees it.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Forward(cctx, json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block",`+forwardMeta+`}}}`), nil)
		errc <- err
	}()
	<-started
	cancel()
	<-ended
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestForwardLegacyConn: Forward needs a 2026-07-28 Conn.
func TestForwardLegacyConn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, nil, nil)
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeLegacy, NoInitialize: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Forward(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+forwardMeta+`}}}`), nil); err == nil {
		t.Fatal("Forward on a legacy Conn succeeded")
	}
	if len(rec.all()) != 0 {
		t.Fatal("a request was sent")
	}
}

// TestForwardAuthorization: a forwarded request is authorized like any
// other: a 401 is answered through the Challenger and the request sent
// again.
func TestForwardAuthorization(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newAuthServer(t, core.ModeAuto)
	ch := &challenger{good: "good", fix: true}
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern, TokenSource: ch})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Forward(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+forwardMeta+`}}}`), nil)
	if err != nil || !bytes.Contains(res, []byte(`"echo"`)) || ch.challenges != 1 {
		t.Fatalf("%s %v, challenges %d", res, err, ch.challenges)
	}
	if got := rec.last("tools/list").Header.Get("Authorization"); got != "Bearer good" {
		t.Fatalf("Authorization %q", got)
	}
}

// TestLegacyVersion: Options.LegacyVersion is the version initialize asks
// for, in ModeLegacy and after a probe; one that is not a 2025 revision
// fails every Connect.
func TestLegacyVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []core.Mode{core.ModeAuto, core.ModeLegacy} {
		url, rec := newServer(t, &core.ServerOptions{Mode: mode}, nil)
		for _, cm := range []client.Mode{client.ModeAuto, client.ModeLegacy} {
			cl := client.New(&client.Options{Mode: cm, LegacyVersion: mcp.ProtocolVersion20250618})
			connect := cl.InitializeLegacy
			if cm == client.ModeAuto && mode == core.ModeLegacy {
				connect = cl.Connect // the probe finds a 2025 server
			}
			c, err := connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if c.ProtocolVersion() != mcp.ProtocolVersion20250618 || !bytes.Contains(rec.last("initialize").Body, []byte(`"protocolVersion":"2025-06-18"`)) {
				t.Fatalf("server %v, client %v: version %s, initialize %s", mode, cm, c.ProtocolVersion(), rec.last("initialize").Body)
			}
			c.Close()
		}
	}
	url, rec := newServer(t, nil, nil)
	if _, err := client.New(&client.Options{LegacyVersion: mcp.ProtocolVersion20260728}).InitializeLegacy(ctx, url); err == nil || len(rec.all()) != 0 {
		t.Fatalf("LegacyVersion 2026-07-28: %v, %d requests", err, len(rec.all()))
	}
}
