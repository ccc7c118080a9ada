package core

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// Authenticator plugs request authentication and authorization into the
// server, once for every platform adapter (ServerOptions.Authenticator).
// Package auth implements it as an OAuth 2.1 protected resource
// (2026-07-28 basic/authorization); core knows no OAuth types.
//
// The server calls the methods in this order:
//
//  1. Metadata, for GET and OPTIONS requests, after the Host check and
//     before the Origin check: a document the authenticator serves without
//     authentication (RFC 9728 protected resource metadata), with CORS "*".
//  2. Authenticate, after the Host and Origin checks and the CORS headers,
//     for every method but OPTIONS (preflights are answered unauthenticated),
//     before the request body is read.
//  3. Authorize, once per JSON-RPC request of either era, when the method and
//     its target are known: for tools/call, prompts/get and resources/read
//     after the unknown-target and header checks, before requestState is
//     verified, client capabilities are checked and the handler runs; for
//     completion/complete after its reference is checked, before the
//     handler runs; for other methods before the method runs. A 2025-03-26 batch is authorized
//     before any of its requests runs, and refused whole if one is refused.
//
// Errors returned by the methods are sent to the client: an *Error carrying an
// HTTP status and headers (Error.WithHTTP) chooses the response's status and
// headers (WWW-Authenticate, Retry-After) and its JSON-RPC error body. Any
// other error becomes a 500 with a generic -32603 and is logged.
//
// Implementations must be safe for concurrent use.
type Authenticator interface {
	// Metadata returns the document served for a GET of r's URL, or nil and
	// a nil error when r does not ask for one (the request then proceeds as
	// usual). The document is sent as application/json.
	Metadata(r *http.Request) ([]byte, error)
	// Authenticate checks the request's credentials and returns the context
	// the request continues with, carrying the caller (NewContextWithPrincipal
	// and whatever the implementation adds), or the error to answer with.
	Authenticate(r *http.Request) (context.Context, error)
	// Authorize decides whether the caller in ctx (from Authenticate) may
	// perform op. It returns nil or the error to answer with.
	Authorize(ctx context.Context, op Operation) error
}

// Operation is what a JSON-RPC request asks to do, as passed to
// Authenticator.Authorize.
type Operation struct {
	// Method is the JSON-RPC method, e.g. "tools/call" or "initialize".
	Method string
	// Name is the tool (tools/call) or prompt (prompts/get) name, or the
	// resource URI (resources/read). For completion/complete it is the
	// target of params.ref: the prompt's name or the resource template's
	// URI, as Ref says. Empty for other methods.
	Name string
	// Ref is the type of completion/complete's params.ref: "ref/prompt"
	// (Name is a prompt) or "ref/resource" (Name is a resource template or
	// URI). Empty for other methods. A completion reveals what its target
	// would, so authorize it as that target.
	Ref string
	// Arguments is the raw params.arguments object of tools/call (an empty
	// object when absent) and prompts/get (nil when absent), and the
	// params.argument object being completed ({"name":…,"value":…}) of
	// completion/complete.
	Arguments json.RawMessage
	// ProtocolVersion is the revision the request speaks.
	ProtocolVersion string
}

// Authenticator returns ServerOptions.Authenticator, or nil. Adapters use it
// to route the authenticator's metadata paths to the server.
func (s *Server) Authenticator() Authenticator { return s.opts.Authenticator }

// targetedMethods are authorized inside their handlers, once their target is
// known.
func targetedMethod(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "completion/complete":
		return true
	}
	return false
}

// completionOperation is the operation of completion/complete with params p:
// its reference, and the argument being completed.
func completionOperation(p *CompleteParams) Operation {
	op := Operation{Method: "completion/complete", Ref: p.Ref.Type, Name: p.Ref.Name}
	if p.Ref.Type == "ref/resource" {
		op.Name = p.Ref.URI
	}
	op.Arguments, _ = json.Marshal(p.Argument)
	return op
}

// authorize runs the authenticator's Authorize, if any.
func (s *Server) authorize(ctx context.Context, op Operation) error {
	a := s.opts.Authenticator
	if a == nil {
		return nil
	}
	return a.Authorize(ctx, op)
}

// messageOperation reads the operation of a JSON-RPC request from its params
// (for batches, authorized before any element runs).
func messageOperation(m *rpcMessage, version string) Operation {
	op := Operation{Method: m.method, ProtocolVersion: version}
	if !targetedMethod(m.method) || m.params == nil {
		return op
	}
	if m.method == "completion/complete" {
		// Read as the handler reads it (encoding/json), so that both see
		// the same reference.
		var p CompleteParams
		json.Unmarshal(m.params, &p)
		op = completionOperation(&p)
		op.ProtocolVersion = version
		return op
	}
	jsonwire.EachMember(m.params, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, "name") && m.method != "resources/read":
			op.Name, _ = jsonwire.RawString(v)
		case jsonwire.KeyIs(k, "uri") && m.method == "resources/read":
			op.Name, _ = jsonwire.RawString(v)
		case jsonwire.KeyIs(k, "arguments") && m.method != "resources/read" && !jsonwire.IsNull(v):
			op.Arguments = v
		}
		return true
	})
	if m.method == "tools/call" && op.Arguments == nil {
		op.Arguments = json.RawMessage(`{}`)
	}
	return op
}

// authorizeBatch authorizes every request of a batch before any runs.
func (s *Server) authorizeBatch(ctx context.Context, elems [][]byte, version string) error {
	a := s.opts.Authenticator
	if a == nil {
		return nil
	}
	for _, e := range elems {
		m, _, err := parseMessage(e)
		if err != nil || m.isResponse || m.isNotification() {
			continue
		}
		if err := a.Authorize(ctx, messageOperation(m, version)); err != nil {
			return err
		}
	}
	return nil
}

// sessionOwner reports whether p may own legacy sessions: anonymous callers
// (nil) share an anonymous pool, while an authenticated principal needs a
// client or a subject, or every caller of its issuer would share sessions.
func sessionOwner(p *Principal) bool {
	return p == nil || p.ClientID != "" || p.Subject != ""
}

// Principal identifies an authenticated caller: the token issuer, the OAuth
// client and the subject (user). Request state and legacy sessions are bound
// to it. The zero value is not a principal; anonymous requests have none.
type Principal struct {
	Issuer   string
	ClientID string
	Subject  string
	// Scopes granted to the caller, for handlers that check them.
	Scopes []string
}

// key returns a stable, fixed-size identifier of the principal (issuer,
// client and subject; not scopes), or "" for nil.
func (p *Principal) key() string {
	if p == nil {
		return ""
	}
	h := sha256.New()
	for _, s := range []string{p.Issuer, p.ClientID, p.Subject} {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(s)>>24), byte(len(s)>>16), byte(len(s)>>8), byte(len(s))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

type principalKey struct{}

// NewContextWithPrincipal returns a context carrying p. Authentication
// middleware calls it; the server reads it for every request.
func NewContextWithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFromContext returns the principal stored by NewContextWithPrincipal,
// or nil.
func PrincipalFromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
