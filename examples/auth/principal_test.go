package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/oauthtest"
)

// notesCall calls tool on endpoint with tok and returns the HTTP status and
// the result's text (or the error's message).
func notesCall(t *testing.T, endpoint, tok, tool string, args map[string]any) (int, string) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	c := &mcptest.Client{URL: endpoint, Header: http.Header{"Authorization": {"Bearer " + tok}}}
	res, err := c.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": args}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		return res.Status, res.Error.Message
	}
	return res.Status, string(res.Result)
}

// TestNotesPerPrincipal: notes belong to the principal (issuer, client and
// subject): the same sub at the other issuer, and another client's tokens
// without sub, see none of them; a token naming neither sub nor client is
// refused.
func TestNotesPerPrincipal(t *testing.T) {
	t.Parallel()
	jwtAS := oauthtest.New(nil)
	defer jwtAS.Close()
	introAS := oauthtest.New(&oauthtest.Options{OpaqueTokens: true, IssuerPath: "/idp"})
	defer introAS.Close()
	cfg := config{jwtIssuer: jwtAS.Issuer, introIssuer: introAS.Issuer, introEndpoint: introAS.Issuer + "/introspect",
		introID: introAS.IntrospectionClientID, introSK: introAS.IntrospectionSecret}
	endpoint := startExample(t, cfg)
	aud := []string{endpoint}
	rw := "notes:read notes:write"

	alice := jwtAS.Mint(oauthtest.Claims{Audience: aud, Scope: rw, Subject: "alice", ClientID: "app"})
	if st, out := notesCall(t, endpoint, alice, "write_note", map[string]any{"text": "alice's secret"}); st != 200 || !strings.Contains(out, "1 notes") {
		t.Fatalf("alice writes: %d %s", st, out)
	}
	// The same sub and client at the other issuer is another principal.
	otherAlice := introAS.Opaque(oauthtest.Claims{Audience: aud, Scope: rw, Subject: "alice", ClientID: "app"})
	if st, out := notesCall(t, endpoint, otherAlice, "list_notes", nil); st != 200 || strings.Contains(out, "secret") {
		t.Fatalf("alice at the other issuer reads: %d %s", st, out)
	}
	// The same sub through another client is another principal too.
	viaOther := jwtAS.Mint(oauthtest.Claims{Audience: aud, Scope: rw, Subject: "alice", ClientID: "other-app"})
	if st, out := notesCall(t, endpoint, viaOther, "list_notes", nil); st != 200 || strings.Contains(out, "secret") {
		t.Fatalf("alice through another client reads: %d %s", st, out)
	}
	if st, out := notesCall(t, endpoint, alice, "list_notes", nil); st != 200 || !strings.Contains(out, "alice's secret") {
		t.Fatalf("alice reads her notes: %d %s", st, out)
	}

	// Client-credentials tokens (no sub): each client has its own notes.
	svc1 := jwtAS.Mint(oauthtest.Claims{Audience: aud, Scope: rw, ClientID: "svc-1", Extra: map[string]any{"sub": nil}})
	svc2 := jwtAS.Mint(oauthtest.Claims{Audience: aud, Scope: rw, ClientID: "svc-2", Extra: map[string]any{"sub": nil}})
	if st, out := notesCall(t, endpoint, svc1, "write_note", map[string]any{"text": "svc-1 data"}); st != 200 || !strings.Contains(out, "1 notes") {
		t.Fatalf("svc-1 writes: %d %s", st, out)
	}
	if st, out := notesCall(t, endpoint, svc2, "list_notes", nil); st != 200 || strings.Contains(out, "svc-1 data") {
		t.Fatalf("svc-2 reads svc-1's notes: %d %s", st, out)
	}

	// Neither sub nor client_id: no principal to own notes.
	nobody := jwtAS.Mint(oauthtest.Claims{Audience: aud, Scope: rw, Extra: map[string]any{"sub": nil, "client_id": nil}})
	for tool, args := range map[string]map[string]any{"list_notes": nil, "write_note": {"text": "x"}} {
		st, out := notesCall(t, endpoint, nobody, tool, args)
		if st != 200 || !strings.Contains(out, `"isError":true`) || !strings.Contains(out, "names no subject or client") {
			t.Fatalf("%s without sub or client_id: %d %s", tool, st, out)
		}
	}
}
