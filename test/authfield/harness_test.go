package authfield_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/test/internal/repo"
)

var bin = &repo.Binaries{Pattern: "mcpfn-authfield-", Packages: []string{"./examples/auth"}}

func TestMain(m *testing.M) { bin.Main(m) }

// notesBinary builds examples/auth once per test binary.
func notesBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds examples/auth and runs it as a process")
	}
	return bin.Path(t, "auth")
}

// waitLog reports whether a line containing s reaches the log of a
// process (which writes it before answering, but the test reads it on
// another pipe) within a minute: a bound for a broken process, not a
// synchronisation.
func waitLog(log *mcptest.LogBuffer, s string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return log.WaitFor(ctx, s)
}

// notes is a running examples/auth process.
type notes struct {
	endpoint string // http://127.0.0.1:PORT/mcp, also its resource
	addr     string
	log      *mcptest.LogBuffer // its stderr
}

// jwtNotes starts an authorization server issuing JWTs, closed when the
// test ends, and examples/auth trusting it (startNotes); aud is the
// audience the server's tokens must name.
func jwtNotes(t *testing.T) (as *authtest.Server, n *notes, aud []string) {
	t.Helper()
	as = authtest.New(nil)
	t.Cleanup(as.Close)
	n = startNotes(t, nil, "-jwt-issuer", as.Issuer)
	return as, n, []string{n.endpoint}
}

// startNotes runs examples/auth on a free loopback port with flags (and
// extra environment variables), waits until it serves, and stops it when
// the test ends; its stderr is shown when the test fails.
func startNotes(t *testing.T, env []string, flags ...string) *notes {
	t.Helper()
	path := notesBinary(t)
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		n := &notes{endpoint: "http://" + addr + "/mcp", addr: addr, log: &mcptest.LogBuffer{}}
		cmd := exec.Command(path, append([]string{"-addr", addr, "-resource", n.endpoint}, flags...)...)
		cmd.Env = append(os.Environ(), env...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			announced := false
			for sc.Scan() {
				fmt.Fprintln(n.log, sc.Text())
				if !announced && strings.Contains(sc.Text(), "serving MCP on") {
					announced = true
					ready <- true
				}
			}
			n.log.Close()
			if !announced {
				ready <- false
			}
		}()
		if <-ready {
			t.Cleanup(func() {
				cmd.Process.Signal(syscall.SIGTERM)
				cmd.Wait()
				if t.Failed() {
					t.Logf("examples/auth stderr:\n%s", n.log.String())
				}
			})
			return n
		}
		cmd.Wait()
		if attempt < 3 && strings.Contains(n.log.String(), "address already in use") {
			continue // the port was taken between probe and start
		}
		t.Fatalf("examples/auth did not start:\n%s", n.log.String())
	}
}

// try sends a 2026-07-28 request with tok as the bearer token (from any
// goroutine).
func (n *notes) try(tok, method string, params map[string]any) (*mcptest.Response, error) {
	c := &mcptest.Client{URL: n.endpoint, Header: http.Header{"Authorization": {"Bearer " + tok}}}
	return c.Call(context.Background(), method, params, nil)
}

// call is try from the test's goroutine, failing the test on a transport
// error.
func (n *notes) call(t *testing.T, tok, method string, params map[string]any) *mcptest.Response {
	t.Helper()
	res, err := n.try(tok, method, params)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// tool calls a tool with tok.
func (n *notes) tool(t *testing.T, tok, name string, args map[string]any) *mcptest.Response {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return n.call(t, tok, "tools/call", map[string]any{"name": name, "arguments": args})
}

// abort sends GET /mcp with tok on a raw connection, then, once arrived
// fires (the authorization-server request the token causes is in flight),
// closes its sending side, as a client that goes away does, and reads until
// the server closes the connection: the server has then finished with the
// request.
func (n *notes) abort(t *testing.T, tok string, arrived <-chan struct{}) {
	t.Helper()
	c, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nAuthorization: Bearer %s\r\n\r\n", n.addr, tok)
	<-arrived
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a bound for a broken server, not a synchronisation
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("reading the aborted request's connection: %v", err)
	}
}

// challenge returns the WWW-Authenticate header of res.
func challenge(res *mcptest.Response) string {
	return res.Header.Get("WWW-Authenticate")
}
