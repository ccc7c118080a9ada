package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
)

func init() { OAuth = browserOAuth }

// openBrowser starts the system browser on u without waiting for it.
var openBrowser = func(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// browserOAuth is --oauth: the authorization code flow with the browser as
// user agent and a loopback redirect listener (RFC 8252 §7.3), registered
// as a native client. The URL is also printed, for when no browser starts.
// The listener lives as long as the process.
//
// The login is kept in the token cache (tokencache.go): the next process
// for the same protected resource and authorization server uses the saved
// access token without a browser, refreshes it when it has expired
// (RFC 6749 §6) with the client it registered before, and opens the
// browser only when the refresh token is refused too. Tokens obtained
// later in a long-lived process (mcpfn stdio: a refresh, a step-up to more
// scopes after insufficient_scope) replace the saved ones, as MCP
// 2025-11-25 basic/authorization has clients keep and refresh tokens.
// MCPFN_OAUTH_CACHE=off turns the cache off; logoutCmd forgets the
// login of one URL.
func browserOAuth(ctx context.Context, endpoint string, stderr io.Writer) (client.TokenSource, error) {
	lb, err := oauth.NewLoopback(func(u string) error {
		// The URL is the authorization server's: shown, like all server
		// text, without controls.
		fmt.Fprintf(stderr, "mcpfn: authorize in your browser: %s\n", oneLine(u))
		if err := openBrowser(u); err != nil {
			fmt.Fprintln(stderr, "mcpfn: could not start a browser; open the URL yourself:", oneLine(err.Error()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cfg := oauth.Config{
		RedirectURL:     lb.RedirectURL(),
		Authorize:       lb.Authorize,
		ClientName:      "mcpfn",
		ApplicationType: "native",
	}
	// A cache that cannot be located (no home directory, a bad
	// MCPFN_OAUTH_CACHE) costs a browser login per process, not the
	// command.
	if dir, err := tokenCacheDir(); err != nil {
		fmt.Fprintln(stderr, "mcpfn: OAuth token cache off:", err)
	} else if dir != "" {
		cfg.Store = &tokenCache{dir: dir, endpoint: endpoint, warn: stderr}
	}
	return oauth.New(&cfg), nil
}

// logoutCmd is mcpfn logout URL: it deletes the saved --oauth logins of
// URL (every entry saved for that endpoint, or for a protected resource
// that covers it) from the token cache. Nothing is sent: the tokens stay
// valid at the authorization server until they expire.
func logoutCmd(cfg *config, stderr io.Writer, bad func(string) int) int {
	for _, f := range serverFlags {
		if cfg.set[f] {
			return bad("--" + f + " is not a flag of logout")
		}
	}
	a := cfg.args
	if len(a) != 2 {
		return bad("logout takes one URL")
	}
	if _, err := checkEndpoint(a[1]); err != nil {
		return bad(err.Error())
	}
	dir, err := tokenCacheDir()
	if err != nil {
		return failure(stderr, err)
	}
	if dir == "" {
		fmt.Fprintln(stderr, "mcpfn: the OAuth token cache is off ("+tokenCacheEnv+"=off): nothing to remove")
		return exitOK
	}
	n, err := removeLogins(dir, a[1])
	if err != nil {
		return failure(stderr, err)
	}
	switch n {
	case 0:
		fmt.Fprintf(stderr, "mcpfn: no saved login for %s in %s\n", oneLine(a[1]), dir)
	default:
		fmt.Fprintf(stderr, "mcpfn: removed %d saved login(s) for %s from %s\n", n, oneLine(a[1]), dir)
	}
	return exitOK
}
