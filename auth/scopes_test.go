package auth_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
)

// separators are the characters that are not the scope separator of RFC
// 6749 §3.3 (U+0020 only), although strings.Fields splits on them.
var separators = map[string]string{"tab": "\t", "newline": "\n", "vertical tab": "\v", "form feed": "\f",
	"carriage return": "\r", "no-break space": "\u00a0", "ideographic space": "\u3000", "next line": "\u0085"}

// TestScopeSeparator: scope tokens are separated by U+0020 alone, and a
// token that is not a scope-token (RFC 6749 §3.3: 1*( %x21 / %x23-5B /
// %x5D-7E )) grants nothing, in a JWT's scope string, in an array claim
// (scp) and in an introspection answer.
func TestScopeSeparator(t *testing.T) {
	t.Parallel()
	introAS := authtest.New(&authtest.Options{OpaqueTokens: true})
	t.Cleanup(introAS.Close)
	e := newEnv(t, envConfig{opts: func(o *auth.Options, as *authtest.Server, res string) {
		o.Issuers = append(o.Issuers, auth.Issuer{Issuer: introAS.Issuer, Introspection: &auth.Introspection{
			Endpoint: introAS.Issuer + "/introspect", ClientID: introAS.IntrospectionClientID, ClientSecret: introAS.IntrospectionSecret}})
	}})
	aud := []string{e.resource}
	jwt := func(scope string) string { return e.as.Mint(authtest.Claims{Audience: aud, Scope: scope}) }
	opaque := func(scope string) string { return introAS.Opaque(authtest.Claims{Audience: aud, Scope: scope}) }
	for name, sep := range separators {
		for kind, mint := range map[string]func(string) string{"jwt": jwt, "introspection": opaque} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				t.Parallel()
				// One token "mcp<sep>files:write": neither scope is granted.
				tok := mint("mcp" + sep + "files:write")
				check(t, e, e.do(t, tok, call("write")), want{status: 403, error: "insufficient_scope", scope: "mcp", code: core.CodeInvalidRequest})
				// Next to a valid token, the invalid one is ignored.
				tok = mint("mcp files:read" + sep + "files:write")
				check(t, e, e.do(t, tok, call("echo")), want{status: 200, text: "hello user-1 via client-1"})
				check(t, e, e.do(t, tok, call("write")), want{status: 403, error: "insufficient_scope", scope: "mcp files:write", code: core.CodeInvalidRequest})
			})
		}
	}
	t.Run("array claim", func(t *testing.T) {
		t.Parallel()
		tok := e.as.Mint(authtest.Claims{Audience: aud, Extra: map[string]any{"scope": []string{"mcp", "files:write\tx", "a\"b", ""}}})
		check(t, e, e.do(t, tok, call("echo")), want{status: 200, text: "hello user-1 via client-1"})
		check(t, e, e.do(t, tok, call("write")), want{status: 403, error: "insufficient_scope", scope: "mcp files:write", code: core.CodeInvalidRequest})
	})
	t.Run("spaces", func(t *testing.T) {
		t.Parallel()
		// Leading, trailing and repeated U+0020 separate nothing more.
		check(t, e, e.do(t, jwt("  mcp   files:write "), call("write")), want{status: 200, text: "written"})
	})
}

// TestScopesSeenByHandlers: the scopes a handler sees are the valid tokens
// only.
func TestScopesSeenByHandlers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{})
	core.AddTool(e.srv, &core.Tool{Name: "scopes", Description: "Lists the caller's scopes."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			b, _ := json.Marshal(auth.TokenInfoFromContext(ctx).Scopes)
			return string(b), nil
		})
	tok := e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp a\u00a0b c\td"})
	check(t, e, e.do(t, tok, call("scopes")), want{status: 200, text: `["mcp"]`})
}
