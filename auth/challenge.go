package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

// Authorize implements [core.Authenticator]: the caller must hold every
// scope the operation needs (Required, ToolScopes or PromptScopes, and
// Scopes), or it gets 403 insufficient_scope naming all of them. A
// completion/complete of a prompt's argument needs the prompt's
// PromptScopes. The operation's scopes are kept with the caller's token for
// RequireScopes.
func (rs *ProtectedResource) Authorize(ctx context.Context, op core.Operation) error {
	info := TokenInfoFromContext(ctx)
	if info == nil || info.state == nil {
		return errors.New("auth: Authorize without Authenticate")
	}
	var extra []string
	switch op.Method {
	case "tools/call":
		extra = rs.toolScopes[op.Name]
	case "prompts/get":
		extra = rs.promptScopes[op.Name]
	case "completion/complete":
		if op.Ref == "ref/prompt" {
			extra = rs.promptScopes[op.Name]
		}
	}
	var dyn []string
	if rs.scopesFn != nil {
		dyn = rs.scopesFn(ctx, op)
	}
	// core authorizes each operation just before its handler runs, and the
	// operations of one HTTP request one after another: the last operation
	// authorized is the one whose handler may call RequireScopes.
	if len(extra) > 0 || len(dyn) > 0 {
		info.state.op.Store(&opScopes{static: extra, dynamic: dyn})
	} else {
		info.state.op.Store(nil)
	}
	if hasAll(info.Scopes, extra) && hasAll(info.Scopes, dyn) {
		return nil
	}
	need := union(rs.required, extra, dyn)
	return rs.challengeFor(info.entry, info.DPoPThumbprint != "", http.StatusForbidden, "insufficient_scope",
		"the operation needs scopes the access token lacks", need, ErrInsufficientScope, "")
}

// ListFilter implements [core.ListAuthorizer]: with
// Options.HideUnauthorized, it reports whether the caller's token grants
// the ToolScopes of a tool or the PromptScopes of a prompt; otherwise it
// returns nil (lists are the same for every caller).
func (rs *ProtectedResource) ListFilter() func(ctx context.Context, op core.Operation) bool {
	if !rs.hide {
		return nil
	}
	return func(ctx context.Context, op core.Operation) bool {
		info := TokenInfoFromContext(ctx)
		if info == nil {
			return false
		}
		switch op.Method {
		case "tools/call":
			return hasAll(info.Scopes, rs.toolScopes[op.Name])
		case "prompts/get":
			return hasAll(info.Scopes, rs.promptScopes[op.Name])
		}
		return true
	}
}

// RequireScopes returns nil when the caller's token grants every scope of
// scopes (directly or implied), and otherwise the 403 insufficient_scope
// error a tool handler returns to ask the client for a step-up
// authorization (2026-07-28 basic/authorization §Scope Challenge Handling).
// The challenge names every scope the call needs, so that a token granting
// exactly those passes: the Required scopes, those of the operation
// (ToolScopes or PromptScopes, and Options.Scopes) and scopes. Return it
// before sending any notification, or it cannot carry its HTTP status.
// Without a token in ctx (no ProtectedResource in front of the handler) it returns
// an error.
func RequireScopes(ctx context.Context, scopes ...string) error {
	info := TokenInfoFromContext(ctx)
	if info == nil || info.state == nil {
		return core.NewError(core.CodeInternalError, "Internal error: no authenticated caller")
	}
	if hasAll(info.Scopes, scopes) {
		return nil
	}
	rs := info.state.res
	need := rs.required
	if op := info.state.op.Load(); op != nil {
		need = union(need, op.static, op.dynamic)
	}
	return rs.challengeFor(info.entry, info.DPoPThumbprint != "", http.StatusForbidden, "insufficient_scope",
		"the operation needs scopes the access token lacks", union(need, scopes), ErrInsufficientScope, "")
}

// Sentinel errors, the Cause of the *core.Error answers (errors.Is).
var (
	// ErrNoToken: the request carried no bearer token.
	ErrNoToken = errors.New("auth: no bearer token")
	// ErrInvalidToken: the token failed verification.
	ErrInvalidToken = errors.New("auth: invalid token")
	// ErrInsufficientScope: the token lacks scopes the operation needs.
	ErrInsufficientScope = errors.New("auth: insufficient scope")
	// ErrUnavailable: the authorization server (JWKS, metadata,
	// introspection) could not be reached.
	ErrUnavailable = errUnavailable
)

// challenge builds the error answered with status and a Bearer challenge
// (RFC 6750 §3; 2026-07-28 basic/authorization §Error Handling), or the
// challenges of every scheme the resource accepts (see challengeFor).
func (rs *ProtectedResource) challenge(e *resourceEntry, status int, code, desc string, scopes []string, cause error) *core.Error {
	return rs.challengeFor(e, false, status, code, desc, scopes, cause, "")
}

// challengeFor builds the error answered with status and a challenge per
// accepted scheme: Bearer (unless DPoP is required) and, with
// Options.DPoP, DPoP with algs (RFC 9449 §7.1). Each names the resource
// metadata and the scopes; the error code goes in the challenge of the
// scheme the request used (dpop), or of the only one. nonce, when set, is
// sent as DPoP-Nonce (RFC 9449 §9).
func (rs *ProtectedResource) challengeFor(e *resourceEntry, dpop bool, status int, code, desc string, scopes []string, cause error, nonce string) *core.Error {
	base := []mcp.AuthParam{{Name: "resource_metadata", Value: e.metaURL}}
	if len(scopes) > 0 {
		base = append(base, mcp.AuthParam{Name: "scope", Value: strings.Join(scopes, " ")})
	}
	var errp []mcp.AuthParam
	if code != "" {
		errp = []mcp.AuthParam{{Name: "error", Value: code}, {Name: "error_description", Value: desc}}
	}
	var vals []string
	if rs.dpop == nil || !rs.dpop.required {
		p := append([]mcp.AuthParam(nil), base...)
		if !dpop || rs.dpop == nil {
			p = append(p, errp...)
		}
		vals = append(vals, mcp.FormatChallenge("Bearer", p...))
	}
	if rs.dpop != nil {
		p := append(append([]mcp.AuthParam(nil), base...), mcp.AuthParam{Name: "algs", Value: rs.dpop.algsList})
		if dpop || rs.dpop.required {
			p = append(p, errp...)
		}
		vals = append(vals, mcp.FormatChallenge("DPoP", p...))
	}
	msg := "Unauthorized"
	switch status {
	case http.StatusBadRequest:
		msg = "Bad Request: " + desc
	case http.StatusForbidden:
		msg = "Forbidden: " + desc
	}
	h := http.Header{"Www-Authenticate": vals}
	if nonce != "" {
		h["Dpop-Nonce"] = []string{nonce}
	}
	ce := &core.Error{Code: core.CodeInvalidRequest, Message: msg, Cause: cause}
	return ce.WithHTTP(status, h)
}

// unavailable is the 503 answer when the authorization server fails.
func (rs *ProtectedResource) unavailable(cause error) *core.Error {
	ce := &core.Error{Code: core.CodeInternalError, Message: "Service Unavailable: the authorization server cannot be reached", Cause: cause}
	return ce.WithHTTP(http.StatusServiceUnavailable, http.Header{"Retry-After": {rs.retryAfter}})
}
