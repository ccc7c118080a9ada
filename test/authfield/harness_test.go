package authfield_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

var bin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bin.dir != "" {
		os.RemoveAll(bin.dir)
	}
	os.Exit(code)
}

// moduleRoot returns the directory of the root module (github.com/mcpfn/mcpfn).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/mcpfn/mcpfn\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the mcpfn module")
		}
		dir = parent
	}
}

// notesBinary builds examples/auth once per test binary.
func notesBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds examples/auth and runs it as a process")
	}
	bin.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			bin.err = err
			return
		}
		if bin.dir, bin.err = os.MkdirTemp("", "mcpfn-authfield-"); bin.err != nil {
			return
		}
		bin.path = filepath.Join(bin.dir, "notes")
		cmd := exec.Command("go", "build", "-o", bin.path, "./examples/auth")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("go build ./examples/auth: %v\n%s", err, out)
		}
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}

// logBuffer collects a process's stderr, line by line.
type logBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced on each line
	closed  bool          // the process's stderr has ended
}

func newLogBuffer() *logBuffer { return &logBuffer{changed: make(chan struct{})} }

func (l *logBuffer) add(line string) {
	l.mu.Lock()
	l.b.WriteString(line)
	l.b.WriteByte('\n')
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *logBuffer) end() {
	l.mu.Lock()
	l.closed = true
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor reports whether a line containing s arrives (the process writes
// its log before answering, but the test reads it on another pipe), within
// a minute: a bound for a broken process, not a synchronisation.
func (l *logBuffer) waitFor(s string) bool {
	limit := time.After(time.Minute)
	for {
		l.mu.Lock()
		found, closed, changed := strings.Contains(l.b.String(), s), l.closed, l.changed
		l.mu.Unlock()
		if found || closed {
			return found
		}
		select {
		case <-changed:
		case <-limit:
			return false
		}
	}
}

// notes is a running examples/auth process.
type notes struct {
	endpoint string // http://127.0.0.1:PORT/mcp, also its resource
	addr     string
	log      *logBuffer
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
		n := &notes{endpoint: "http://" + addr + "/mcp", addr: addr, log: newLogBuffer()}
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
				n.log.add(sc.Text())
				if !announced && strings.Contains(sc.Text(), "serving MCP on") {
					announced = true
					ready <- true
				}
			}
			n.log.end()
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
