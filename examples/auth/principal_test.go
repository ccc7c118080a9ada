package main

import (
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
	mcpclient "github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcptest"
)

// notesCall calls tool on c with tok and returns the result's text (and
// structured content), and whether it is an error result.
func notesCall(t *testing.T, c *mcpclient.Conn, tok, tool string, args map[string]any) (string, bool) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.CallTool(t.Context(), tool, args, &mcpclient.CallOptions{Token: tok})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return text(res), res.IsError
}

// TestNotesPerPrincipal: notes belong to the principal (issuer, client and
// subject): the same sub at the other issuer, and another client's tokens
// without sub, see none of them; a token naming neither sub nor client is
// refused.
func TestNotesPerPrincipal(t *testing.T) {
	t.Parallel()
	jwtAS := authtest.New(nil)
	defer jwtAS.Close()
	introAS := authtest.New(&authtest.Options{OpaqueTokens: true, IssuerPath: "/idp"})
	defer introAS.Close()
	cfg := config{jwtIssuer: jwtAS.Issuer, introIssuer: introAS.Issuer, introEndpoint: introAS.Issuer + "/introspect",
		introID: introAS.IntrospectionClientID, introSK: introAS.IntrospectionSecret}
	cfg.resource = mcptest.DefaultURL
	srv, err := newServer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each call carries its caller's token (mcpclient.WithAuthorization).
	c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mcpclient.ModeModern, URL: cfg.resource})
	aud := []string{cfg.resource}
	rw := "notes:read notes:write"

	alice := jwtAS.Mint(authtest.Claims{Audience: aud, Scope: rw, Subject: "alice", ClientID: "app"})
	if out, isErr := notesCall(t, c, alice, "write_note", map[string]any{"text": "alice's secret"}); isErr || !strings.Contains(out, "1 notes") {
		t.Fatalf("alice writes: %v %s", isErr, out)
	}
	// The same sub and client at the other issuer is another principal.
	otherAlice := introAS.Opaque(authtest.Claims{Audience: aud, Scope: rw, Subject: "alice", ClientID: "app"})
	if out, isErr := notesCall(t, c, otherAlice, "list_notes", nil); isErr || strings.Contains(out, "secret") {
		t.Fatalf("alice at the other issuer reads: %v %s", isErr, out)
	}
	// The same sub through another client is another principal too.
	viaOther := jwtAS.Mint(authtest.Claims{Audience: aud, Scope: rw, Subject: "alice", ClientID: "other-app"})
	if out, isErr := notesCall(t, c, viaOther, "list_notes", nil); isErr || strings.Contains(out, "secret") {
		t.Fatalf("alice through another client reads: %v %s", isErr, out)
	}
	if out, isErr := notesCall(t, c, alice, "list_notes", nil); isErr || !strings.Contains(out, "alice's secret") {
		t.Fatalf("alice reads her notes: %v %s", isErr, out)
	}

	// Client-credentials tokens (no sub): each client has its own notes.
	svc1 := jwtAS.Mint(authtest.Claims{Audience: aud, Scope: rw, ClientID: "svc-1", Extra: map[string]any{"sub": nil}})
	svc2 := jwtAS.Mint(authtest.Claims{Audience: aud, Scope: rw, ClientID: "svc-2", Extra: map[string]any{"sub": nil}})
	if out, isErr := notesCall(t, c, svc1, "write_note", map[string]any{"text": "svc-1 data"}); isErr || !strings.Contains(out, "1 notes") {
		t.Fatalf("svc-1 writes: %v %s", isErr, out)
	}
	if out, isErr := notesCall(t, c, svc2, "list_notes", nil); isErr || strings.Contains(out, "svc-1 data") {
		t.Fatalf("svc-2 reads svc-1's notes: %v %s", isErr, out)
	}

	// Neither sub nor client_id: no principal to own notes.
	nobody := jwtAS.Mint(authtest.Claims{Audience: aud, Scope: rw, Extra: map[string]any{"sub": nil, "client_id": nil}})
	for tool, args := range map[string]map[string]any{"list_notes": nil, "write_note": {"text": "x"}} {
		out, isErr := notesCall(t, c, nobody, tool, args)
		if !isErr || !strings.Contains(out, "names no subject or client") {
			t.Fatalf("%s without sub or client_id: %v %s", tool, isErr, out)
		}
	}
}
