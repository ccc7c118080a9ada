package core_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
)

// tokenAndBinding runs a first round of "stateful" and returns the token.
func statefulToken(t *testing.T, h http.Handler, args map[string]any, ctx context.Context) string {
	t.Helper()
	r := callReq(1, "stateful", args).withCaps(allCaps)
	if ctx != nil {
		r.withContext(ctx)
	}
	s, ok := round1(t, h, r)["requestState"].(string)
	if !ok || s == "" {
		t.Fatal("no requestState")
	}
	return s
}

// wantInvalidState checks the one answer to a state that fails verification.
func wantInvalidState(t *testing.T, r *resp) {
	t.Helper()
	e := r.wantError(t, http.StatusOK, core.CodeInvalidParams)
	if str(e["message"]) != "Invalid or expired requestState" || str(at(e, "data", "reason")) != "invalid_request_state" {
		t.Errorf("error = %v, want the invalid state error", e)
	}
}

// TestRequestStateTampering changes every byte position of a sealed state
// in turn (to the next character of the base64url alphabet, or a dot to a
// letter): every variant must be rejected (2026-07-28 basic/patterns/mrtr).
func TestRequestStateTampering(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	args := map[string]any{"state": "plain", "x": 1}
	token := statefulToken(t, srv, args, nil)
	ok := retry(callReq(2, "stateful", args).withCaps(allCaps), 2, token, map[string]any{"k": accept(map[string]any{"ok": true})}).do(t, srv)
	wantText(t, ok.result(t), "state seen")
	var accepted []int
	for i := 0; i < len(token); i++ {
		b := []byte(token)
		c := b[i]
		if j := strings.IndexByte(b64url, c); j >= 0 {
			b[i] = b64url[(j+1)%len(b64url)]
		} else {
			b[i] = 'A'
		}
		r := retry(callReq(3, "stateful", args).withCaps(allCaps), 3, string(b), nil).do(t, srv)
		if has(r.final(t), "result") {
			accepted = append(accepted, i)
			continue
		}
		wantInvalidState(t, r)
	}
	if len(accepted) > 0 {
		t.Errorf("token of %d bytes: variants accepted at positions %v (the last is %d): e.g. %q",
			len(token), accepted, len(token)-1, token[:len(token)-1]+"*")
	}
	for _, bad := range []string{"", "v1", "v1...", token + "-TAMPERED", token + ".", "v2" + token[2:], strings.ToUpper(token),
		token[:len(token)/2], "x" + token} {
		wantInvalidState(t, retry(callReq(4, "stateful", args).withCaps(allCaps), 4, bad, nil).do(t, srv))
	}
}

// TestRequestStateBinding checks that a state only verifies for the call it
// was issued for: method, target, arguments (in any key order) and
// principal.
func TestRequestStateBinding(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, nil)
	args := map[string]any{"state": "s", "a": 1, "b": map[string]any{"c": []any{1, "x"}, "d": true}}
	token := statefulToken(t, srv, args, nil)
	answer := map[string]any{"k": accept(map[string]any{"ok": true})}

	// Same arguments, another key order and number spelling: accepted.
	reordered := `{"b":{"d":true,"c":[1.0,"x"]},"a":1,"state":"s"}`
	r := retry(callReq(2, "stateful", json.RawMessage(reordered)).withCaps(allCaps), 2, token, answer).do(t, srv)
	wantText(t, r.result(t), "state seen")

	for name, req := range map[string]*testReq{
		"other tool":         callReq(3, "stateful_twin", args),
		"other arguments":    callReq(3, "stateful", map[string]any{"state": "s", "a": 2, "b": args["b"]}),
		"extra argument":     callReq(3, "stateful", map[string]any{"state": "s", "a": 1, "b": args["b"], "z": 0}),
		"no arguments":       callReq(3, "stateful", nil),
		"other method":       mreq(3, "prompts/get", map[string]any{"name": "ask_prompt"}),
		"other method (uri)": mreq(3, "resources/read", map[string]any{"uri": "test://secret"}),
	} {
		t.Run(name, func(t *testing.T) {
			wantInvalidState(t, retry(req.withCaps(allCaps), 3, token, answer).do(t, srv))
		})
	}

	t.Run("principal", func(t *testing.T) {
		p1 := &core.Principal{Issuer: "https://issuer.example", ClientID: "c1", Subject: "alice", Scopes: []string{"read"}}
		ctx1 := core.NewContextWithPrincipal(context.Background(), p1)
		tok := statefulToken(t, srv, args, ctx1)
		same := &core.Principal{Issuer: p1.Issuer, ClientID: p1.ClientID, Subject: p1.Subject, Scopes: []string{"write"}}
		r := retry(callReq(2, "stateful", args).withCaps(allCaps), 2, tok, answer).withContext(core.NewContextWithPrincipal(context.Background(), same)).do(t, srv)
		wantText(t, r.result(t), "state seen")
		for name, p := range map[string]*core.Principal{
			"anonymous":     nil,
			"other subject": {Issuer: p1.Issuer, ClientID: p1.ClientID, Subject: "mallory"},
			"other client":  {Issuer: p1.Issuer, ClientID: "c2", Subject: p1.Subject},
			"other issuer":  {Issuer: "https://evil.example", ClientID: p1.ClientID, Subject: p1.Subject},
		} {
			ctx := context.Background()
			if p != nil {
				ctx = core.NewContextWithPrincipal(ctx, p)
			}
			r := retry(callReq(3, "stateful", args).withCaps(allCaps), 3, tok, answer).withContext(ctx).do(t, srv)
			if has(r.final(t), "result") {
				t.Errorf("%s: a state sealed for alice was accepted", name)
				continue
			}
			wantInvalidState(t, r)
		}
		// An anonymous state is not valid for an authenticated caller.
		r = retry(callReq(4, "stateful", args).withCaps(allCaps), 4, token, answer).withContext(ctx1).do(t, srv)
		wantInvalidState(t, r)
	})
}

// TestRequestStateContent checks that handlers see exactly the state they
// returned, and only the answers to the keys they asked.
func TestRequestStateContent(t *testing.T) {
	t.Parallel()
	srv, sn := newMRTRServer(t, nil)
	for _, st := range []string{"plain", "ünïcödé \"quoted\"\n\ttabs <>&", strings.Repeat("x", 4096), `{"json":[1,2]}`, "v1.a.b.c"} {
		args := map[string]any{"state": st}
		tok := statefulToken(t, srv, args, nil)
		r := retry(callReq(2, "stateful", args).withCaps(allCaps), 2, tok, map[string]any{
			"k": accept(map[string]any{"ok": true}), "x": "not asked", "unknown": map[string]any{"z": 1},
		}).do(t, srv)
		wantText(t, r.result(t), "state seen")
		gotState, visible := sn.get("stateful")
		if gotState != st {
			t.Errorf("handler saw state %q, want %q", gotState, st)
		}
		if strings.Join(visible, " ") != "k len=1" {
			t.Errorf("visible answers %v, want only k (the key asked)", visible)
		}
	}
	t.Run("answers without requestState are not visible", func(t *testing.T) {
		// No round asked for anything: there is nothing to answer.
		r := callReq(1, "form_ask", nil).withCaps(allCaps).withParam("inputResponses", map[string]any{
			"user_name": accept(map[string]any{"name": "Mallory"}), "extra": 1,
		}).do(t, srv)
		res := r.result(t)
		_, visible := sn.get("form_ask")
		if str(res["resultType"]) != "input_required" || strings.Join(visible, " ") != "len=0" {
			t.Errorf("a first round with unsolicited inputResponses: result %s, handler saw %v", r.Body, visible)
		}
	})
	t.Run("extra keys ignored", func(t *testing.T) {
		first := round1(t, srv, callReq(1, "form_ask", nil).withCaps(allCaps))
		r := retry(callReq(2, "form_ask", nil).withCaps(allCaps), 2, first["requestState"], map[string]any{
			"user_name": accept(map[string]any{"name": "Al"}), "extra": accept(nil), "other": 1,
		}).do(t, srv)
		wantText(t, r.result(t), "Hello, Al!")
		if _, visible := sn.get("form_ask"); strings.Join(visible, " ") != "user_name len=1" {
			t.Errorf("visible = %v", visible)
		}
	})
}

// TestRequestStateExpiry runs in a synctest bubble, whose clock the sleeps
// advance: a state is valid until its TTL has passed, and each round issues
// a fresh one.
func TestRequestStateExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, _ := newMRTRServer(t, &core.ServerOptions{StateTTL: time.Minute})
		caps := map[string]any{"elicitation": map[string]any{}}
		s1 := str(round1(t, srv, callReq(1, "multi_round", nil).withCaps(caps))["requestState"])
		time.Sleep(59 * time.Second)
		second := round1(t, srv, retry(callReq(2, "multi_round", nil).withCaps(caps), 2, s1,
			map[string]any{"step1": accept(map[string]any{"name": "Ann"})}))
		s2 := str(second["requestState"])
		time.Sleep(2 * time.Second) // s1 expired, s2 renewed
		wantInvalidState(t, retry(callReq(3, "multi_round", nil).withCaps(caps), 3, s1,
			map[string]any{"step1": accept(map[string]any{"name": "Ann"})}).do(t, srv))
		r := retry(callReq(4, "multi_round", nil).withCaps(caps), 4, s2, map[string]any{"step2": accept(map[string]any{"color": "red"})}).do(t, srv)
		wantText(t, r.result(t), "Ann likes red")
		time.Sleep(time.Minute)
		wantInvalidState(t, retry(callReq(5, "multi_round", nil).withCaps(caps), 5, s2,
			map[string]any{"step2": accept(map[string]any{"color": "red"})}).do(t, srv))
	})
}

// TestRequestStateKeyRotation rotates keys with store/memory.Keys.
func TestRequestStateKeyRotation(t *testing.T) {
	t.Parallel()
	old := core.Key{ID: "k-2026-07", Secret: []byte(strings.Repeat("o", 32))}
	next := core.Key{ID: "k-2026-08", Secret: []byte(strings.Repeat("n", 32))}
	keys, err := memory.NewKeys(old)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newMRTRServer(t, &core.ServerOptions{Keys: keys})
	args := map[string]any{"state": "s"}
	answer := map[string]any{"k": accept(map[string]any{"ok": true})}
	tokOld := statefulToken(t, srv, args, nil)
	if !strings.Contains(tokOld, "."+old.ID+".") {
		t.Fatalf("token %q does not name the signing key %s", tokOld, old.ID)
	}
	if err := keys.Put(next); err != nil {
		t.Fatal(err)
	}
	wantText(t, retry(callReq(2, "stateful", args).withCaps(allCaps), 2, tokOld, answer).do(t, srv).result(t), "state seen")
	tokNew := statefulToken(t, srv, args, nil)
	if !strings.Contains(tokNew, "."+next.ID+".") {
		t.Errorf("after rotation, token %q is not signed by %s", tokNew, next.ID)
	}
	keys.Remove(old.ID)
	wantInvalidState(t, retry(callReq(3, "stateful", args).withCaps(allCaps), 3, tokOld, answer).do(t, srv))
	wantText(t, retry(callReq(4, "stateful", args).withCaps(allCaps), 4, tokNew, answer).do(t, srv).result(t), "state seen")

	// Another server with the same keys verifies the state (replicas).
	replica, _ := newMRTRServer(t, &core.ServerOptions{Keys: keys})
	wantText(t, retry(callReq(5, "stateful", args).withCaps(allCaps), 5, tokNew, answer).do(t, replica).result(t), "state seen")
	// A server with other keys does not.
	stranger, _ := newMRTRServer(t, &core.ServerOptions{Keys: core.StaticKeys{{ID: next.ID, Secret: []byte(strings.Repeat("x", 32))}}})
	wantInvalidState(t, retry(callReq(6, "stateful", args).withCaps(allCaps), 6, tokNew, answer).do(t, stranger))

}

// badKeyLists are key lists that cannot seal requestState, by what is wrong.
var badKeyLists = map[string][]core.Key{
	"empty":        {},
	"short secret": {{ID: "short", Secret: []byte(strings.Repeat("x", core.MinKeyBytes-1))}},
	"bad id":       {{ID: "bad id!", Secret: make([]byte, core.MinKeyBytes)}},
	"no id":        {{Secret: make([]byte, core.MinKeyBytes)}},
	"long id":      {{ID: strings.Repeat("k", 65), Secret: make([]byte, core.MinKeyBytes)}},
	"duplicate id": {{ID: "k", Secret: make([]byte, core.MinKeyBytes)}, {ID: "k", Secret: []byte(strings.Repeat("y", core.MinKeyBytes))}},
}

// TestStaticKeysValidated checks that keys known when the server is built
// are checked then (secrets of at least MinKeyBytes bytes, ids of 1 to 64
// characters of A-Z, a-z, 0-9, '_' and '-', each id once): Validate returns
// the error and NewServer panics with it, instead of every request failing.
func TestStaticKeysValidated(t *testing.T) {
	t.Parallel()
	for name, keys := range badKeyLists {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := &core.ServerOptions{Keys: core.StaticKeys(keys)}
			err := o.Validate()
			if err == nil {
				t.Fatal("Validate accepted the keys")
			}
			if !strings.Contains(err.Error(), "Keys") {
				t.Errorf("Validate error %q does not name the option", err)
			}
			if msg := mustPanic(t, func() { core.NewServer(testImpl, o) }); msg != err.Error() {
				t.Errorf("NewServer panicked with %q, want Validate's %q", msg, err)
			}
			if len(keys) > 0 && name != "duplicate id" {
				if err := keys[0].Validate(); err == nil {
					t.Errorf("Key.Validate accepted %+v", keys[0])
				}
			}
		})
	}
	good := core.StaticKeys{core.NewRandomKey("k-2026_1"), {ID: strings.Repeat("k", 64), Secret: make([]byte, core.MinKeyBytes)}}
	if err := (&core.ServerOptions{Keys: good}).Validate(); err != nil {
		t.Errorf("valid keys refused: %v", err)
	}
}

// providedKeys is a KeyProvider whose keys are only known at run time.
type providedKeys struct {
	mu   sync.Mutex
	keys []core.Key
}

func (p *providedKeys) Keys(context.Context) ([]core.Key, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys, nil
}

func (p *providedKeys) set(keys []core.Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = keys
}

// TestProvidedKeysInvalidAtRunTime checks a KeyProvider that returns keys
// that cannot seal only when asked, after the server is built: the request
// that needs them gets a generic -32603 that names no key, the log says what
// is wrong, and the server keeps serving (with good keys, at once).
func TestProvidedKeysInvalidAtRunTime(t *testing.T) {
	t.Parallel()
	args := map[string]any{"state": "s"}
	for name, keys := range badKeyLists {
		if name == "duplicate id" {
			continue // at run time the first key of an id counts
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logs mcptest.LogBuffer
			kp := &providedKeys{keys: keys}
			s, _ := newMRTRServer(t, &core.ServerOptions{Keys: kp, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			r := callReq(1, "stateful", args).withCaps(allCaps).do(t, s)
			r.wantError(t, http.StatusOK, core.CodeInternalError)
			if strings.Contains(string(r.Body), "key") {
				t.Errorf("key detail leaked: %s", r.Body)
			}
			if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "signing key") {
				t.Errorf("the log does not say the signing keys are wrong:\n%s", l)
			}
			kp.set([]core.Key{core.NewRandomKey("fixed")})
			tok := statefulToken(t, s, args, nil)
			if !strings.Contains(tok, ".fixed.") {
				t.Errorf("after the provider's keys were fixed: token %q", tok)
			}
		})
	}
}
