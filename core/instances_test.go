package core_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
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
