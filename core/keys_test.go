package core_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// warnLines returns the lines of a text log at level WARN.
func warnLines(log string) []string {
	var out []string
	for l := range strings.Lines(log) {
		if strings.Contains(l, "level=WARN") {
			out = append(out, l)
		}
	}
	return out
}

// TestUnknownKeyIDWarns seals a state on one server and retries the call on
// another, as a retry that lands on another serverless instance does: the
// wire answer is the one invalid-state error, and the instance that does
// not have the key logs one warning saying so and naming the likely cause.
func TestUnknownKeyIDWarns(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		a, b  core.KeyProvider
		cause string
	}{
		// Two instances built without keys: each seals with its own.
		"per-process keys": {nil, nil, "several instances"},
		// Two instances configured with different keys (a rotation that
		// has not reached one, or a misconfiguration).
		"different keys": {core.StaticKeys{core.NewRandomKey("key-a")}, core.StaticKeys{core.NewRandomKey("key-b")}, "rotat"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logA, logB mcptest.LogBuffer
			a, _ := newMRTRServer(t, &core.ServerOptions{Keys: c.a, Logger: slog.New(slog.NewTextHandler(&logA, nil))})
			b, _ := newMRTRServer(t, &core.ServerOptions{Keys: c.b, Logger: slog.New(slog.NewTextHandler(&logB, nil))})
			args := map[string]any{"state": "s"}
			token := statefulToken(t, a, args, nil)
			answer := map[string]any{"k": accept(map[string]any{"ok": true})}
			wantInvalidState(t, retry(callReq(2, "stateful", args).withCaps(allCaps), 2, token, answer).do(t, b))

			warns := warnLines(logB.String())
			if len(warns) != 1 {
				t.Fatalf("the other instance logged %d warnings, want 1 about the unknown key:\n%s", len(warns), logB.String())
			}
			id := strings.Split(token, ".")[1]
			for _, want := range []string{"requestState", id, c.cause} {
				if !strings.Contains(warns[0], want) {
					t.Errorf("the warning does not mention %q: %s", want, warns[0])
				}
			}
			if w := warnLines(logA.String()); len(w) != 0 {
				t.Errorf("the sealing instance warned: %v", w)
			}
			// The instance that sealed it still opens it.
			ok := retry(callReq(3, "stateful", args).withCaps(allCaps), 3, token, answer).do(t, a)
			wantText(t, ok.result(t), "state seen")
		})
	}
}

// TestUnknownKeyIDWarnBounded checks that the warning cannot be turned into
// a flood by a client that sends states naming made-up key ids: one warning
// per minute, the rest at debug level.
func TestUnknownKeyIDWarnBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var logA, logB mcptest.LogBuffer
		a, _ := newMRTRServer(t, &core.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logA, nil))})
		b, _ := newMRTRServer(t, &core.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logB, nil))})
		args := map[string]any{"state": "s"}
		retryOn := func(token string) {
			wantInvalidState(t, retry(callReq(2, "stateful", args).withCaps(allCaps), 2, token, nil).do(t, b))
		}
		token := statefulToken(t, a, args, nil)
		for range 5 {
			retryOn(token)
		}
		if n := len(warnLines(logB.String())); n != 1 {
			t.Errorf("5 states of an unknown key: %d warnings, want 1", n)
		}
		time.Sleep(time.Minute)
		retryOn(statefulToken(t, a, args, nil))
		if n := len(warnLines(logB.String())); n != 2 {
			t.Errorf("a minute later: %d warnings in all, want 2", n)
		}
	})
}

// TestBadSignatureNoWarn: a state naming this instance's key with a wrong
// signature is a forgery or corruption, not a deployment problem: it is not
// logged as a warning.
func TestBadSignatureNoWarn(t *testing.T) {
	t.Parallel()
	var logs mcptest.LogBuffer
	srv, _ := newMRTRServer(t, &core.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	args := map[string]any{"state": "s"}
	token := statefulToken(t, srv, args, nil)
	bad := token[:len(token)-2] + "AA"
	if bad == token {
		bad = token[:len(token)-2] + "BB"
	}
	wantInvalidState(t, retry(callReq(2, "stateful", args).withCaps(allCaps), 2, bad, nil).do(t, srv))
	if w := warnLines(logs.String()); len(w) != 0 {
		t.Errorf("a bad signature was logged as a warning: %v", w)
	}
}

// TestNilLoggerIsDefault checks that a server built without a Logger logs
// to slog.Default() rather than nowhere: a plain error of a tool handler is
// logged at level Error. It replaces the default logger, so it is not
// parallel.
func TestNilLoggerIsDefault(t *testing.T) {
	logs := mcptest.DefaultLogs(t)

	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "fail", Description: "Fails."},
		func(context.Context, *core.CallToolRequest, struct{}) (string, error) {
			return "", errors.New("the database is down")
		})
	callReq(1, "fail", map[string]any{}).do(t, srv)
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "the database is down") {
		t.Errorf("a server without a Logger did not log the handler's error to slog.Default():\n%q", l)
	}
}

// TestPerProcessKeys: a server without Keys reports that its keys are its
// own; one with configured keys does not.
func TestPerProcessKeys(t *testing.T) {
	t.Parallel()
	if !core.NewServer(testImpl, nil).PerProcessKeys() {
		t.Error("a server without Keys: PerProcessKeys() = false")
	}
	if core.NewServer(testImpl, &core.ServerOptions{Keys: core.StaticKeys{core.NewRandomKey("k")}}).PerProcessKeys() {
		t.Error("a server with StaticKeys: PerProcessKeys() = true")
	}
	l := slog.New(slog.DiscardHandler)
	if got := core.NewServer(testImpl, &core.ServerOptions{Logger: l}).Logger(); got != l {
		t.Errorf("Logger() = %p, want the configured %p", got, l)
	}
}

// keysThatRotate is a KeyProvider whose Keys still return the old list
// until RefreshKeys is called (an instance that has not seen a rotation).
type keysThatRotate struct {
	mu        sync.Mutex
	cached    []core.Key
	fresh     []core.Key
	refreshes int
}

// State sealed by an instance with a new key verifies on one that has not
// loaded it yet: the unknown key id makes it refresh.
func TestUnknownKeyIDRefreshesKeys(t *testing.T) {
	t.Parallel()
	oldKey, newKey := core.NewRandomKey("old"), core.NewRandomKey("new")
	ahead := core.StaticKeys{newKey, oldKey}
	behind := &keysThatRotate{cached: []core.Key{oldKey}, fresh: []core.Key{newKey, oldKey}}
	register := func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "ask", Description: "Asks."},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				if req.Input.State() == "s1" {
					return "verified", nil
				}
				return "", core.InputRequired(nil, "s1")
			})
	}
	a := core.NewServer(core.Implementation{Name: "a", Version: "1"}, &core.ServerOptions{Keys: ahead})
	b := core.NewServer(core.Implementation{Name: "b", Version: "1"}, &core.ServerOptions{Keys: behind})
	register(a)
	register(b)
	ta, tb := httptest.NewServer(a), httptest.NewServer(b)
	defer ta.Close()
	defer tb.Close()
	r1, err := (&mcptest.Client{URL: ta.URL}).Call(context.Background(), "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		RequestState string `json:"requestState"`
	}
	if err := r1.Decode(&first); err != nil || !strings.HasPrefix(first.RequestState, "v1.new.") {
		t.Fatalf("round 1 on A: %v %s", err, r1.Messages)
	}
	r2, err := (&mcptest.Client{URL: tb.URL}).Call(context.Background(), "tools/call",
		map[string]any{"name": "ask", "arguments": map[string]any{}, "requestState": first.RequestState}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Error != nil || !bytes.Contains(r2.Result, []byte("verified")) {
		t.Fatalf("round 2 on B: %s", r2.Messages)
	}
	if behind.refreshes != 1 {
		t.Fatalf("%d refreshes, want 1", behind.refreshes)
	}
	// A state naming a key nobody has is still rejected.
	bad := strings.Replace(first.RequestState, "v1.new.", "v1.nokey.", 1)
	r3, _ := (&mcptest.Client{URL: tb.URL}).Call(context.Background(), "tools/call",
		map[string]any{"name": "ask", "arguments": map[string]any{}, "requestState": bad}, nil)
	if r3.Error == nil || r3.Error.Code != core.CodeInvalidParams {
		t.Fatalf("unknown key: %s", r3.Messages)
	}
}

func (k *keysThatRotate) Keys(context.Context) ([]core.Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cached, nil
}

func (k *keysThatRotate) RefreshKeys(context.Context) ([]core.Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refreshes++
	k.cached = k.fresh
	return k.cached, nil
}
