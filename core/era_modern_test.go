package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// confirmForm is a one-boolean form elicitation.
func confirmForm(msg string) *core.InputRequest {
	return core.ElicitForm(msg, json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`))
}

// TestDiscover checks server/discover: the versions per mode and the
// capabilities following what is registered.
func TestDiscover(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode core.Mode
		want []string
	}{
		{core.ModeAuto, []string{modernVersion, core.ProtocolVersion20251125, core.ProtocolVersion20250618, core.ProtocolVersion20250326}},
		{core.ModeModern, []string{modernVersion}},
	} {
		srv := core.NewServer(testImpl, &core.ServerOptions{Mode: c.mode, Instructions: "Be nice."})
		r := mreq("d", "server/discover", nil).do(t, srv)
		res := r.result(t)
		var got []string
		for _, v := range res["supportedVersions"].([]any) {
			got = append(got, str(v))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: supportedVersions = %v, want %v", c.mode, got, c.want)
		}
		if str(res["instructions"]) != "Be nice." || str(at(res, "_meta", core.MetaServerInfo, "name")) != testImpl.Name {
			t.Errorf("discover: %s", r.Body)
		}
		if has(res, "capabilities", "tools") || has(res, "capabilities", "prompts") || has(res, "capabilities", "resources") {
			t.Errorf("capabilities advertised for an empty server: %v", res["capabilities"])
		}
		validateSpec(t, modernVersion, "DiscoverResult", r.resultRaw(t))
		// Unadvertised capabilities answer -32601 / 404.
		for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
			mreq(1, m, nil).do(t, srv).wantError(t, http.StatusNotFound, core.CodeMethodNotFound)
		}
		core.AddTool(srv, &core.Tool{Name: "add"}, add)
		res = mreq("d", "server/discover", nil).do(t, srv).result(t)
		if at(res, "capabilities", "tools", "listChanged") != true {
			t.Errorf("tools capability not advertised after AddTool: %v", res["capabilities"])
		}
	}
	// A legacy-only server answers a modern request with the versions it speaks.
	srv := core.NewServer(testImpl, &core.ServerOptions{Mode: core.ModeLegacy})
	e := mreq("d", "server/discover", nil).do(t, srv).wantError(t, http.StatusBadRequest, core.CodeUnsupportedProtocolVersion)
	if got := toJSON(t, at(e, "data", "supported")); string(got) != `["2025-11-25","2025-06-18","2025-03-26"]` {
		t.Errorf("data.supported = %s", got)
	}
}

// TestClientInfoPerRequest: the clientInfo a client sends on every request
// is decoded once per server, but each request gets its own: a handler that
// changes it changes nothing another request sees.
func TestClientInfoPerRequest(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, quietBench())
	core.AddTool(srv, &core.Tool{Name: "rename"}, func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
		if req.ClientInfo == nil {
			return "", errors.New("no clientInfo")
		}
		seen := req.ClientInfo.Name + " " + req.ClientInfo.Version
		req.ClientInfo.Name, req.ClientInfo.Version = "changed", "0"
		return seen, nil
	})
	for i := range 3 {
		res := callReq(i+1, "rename", nil).do(t, srv).result(t)
		if got := fmt.Sprint(res["content"]); !strings.Contains(got, "test-client 1.0.0") {
			t.Fatalf("call %d saw %s", i+1, got)
		}
	}
}

// TestClientClosedRequest: a 2026-07-28 client cancels by closing its
// request (basic/utilities/cancellation). The handler's context.Canceled
// that follows is no fault: no -32603 is written and nothing is logged
// at ERROR, on a stream that has started and on one that has not.
func TestClientClosedRequest(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			t.Parallel()
			var logs strings.Builder
			var mu sync.Mutex
			srv := core.NewServer(core.Implementation{Name: "t", Version: "1"}, &core.ServerOptions{
				Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil)),
			})
			defer srv.Close()
			ctx, cancel := context.WithCancel(t.Context())
			core.AddTool(srv, &core.Tool{Name: "block"}, func(hctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				if streaming {
					req.NotifyProgress(hctx, 1, 0, "")
				}
				cancel() // the client goes away
				<-hctx.Done()
				return "", hctx.Err()
			})
			r := callReq(1, "block", map[string]any{}).withContext(ctx)
			if streaming {
				r = r.withMeta("progressToken", "p")
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, r.httpRequest("/mcp"))
			if b := rec.Body.String(); strings.Contains(b, "-32603") || strings.Contains(b, `"error"`) {
				t.Errorf("status %d, body %s: an error answered a request the client closed", rec.Code, b)
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("logged as a fault:\n%s", logs.String())
			}
		})
	}
}
