package oauth_test

import (
	"net/http"

	"github.com/mcpfn/mcpfn/client/oauth"
)

// The flows against a real authorization server (auth/authtest) and a
// protected MCP server are tested in test/oauthflow, in the test module:
// auth/authtest belongs to the auth module (it requires jwx), which the
// root module's tests must not require.

const redirect = "http://127.0.0.1:9/callback"

func codeConfig() *oauth.Config {
	return &oauth.Config{RedirectURL: redirect, Authorize: oauth.Headless(nil)}
}

// challenge401 is a 401 answer carrying header as WWW-Authenticate.
func challenge401(header string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", nil)
	h := http.Header{}
	if header != "" {
		h.Set("WWW-Authenticate", header)
	}
	return &http.Response{StatusCode: 401, Header: h, Request: req}
}
