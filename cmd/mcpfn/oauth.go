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
	return oauth.New(oauth.Config{
		RedirectURL:     lb.RedirectURL(),
		Authorize:       lb.Authorize,
		ClientName:      "mcpfn",
		ApplicationType: "native",
	}), nil
}
