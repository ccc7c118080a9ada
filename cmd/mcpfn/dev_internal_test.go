package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseDevArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want devOptions
		err  string
	}{
		{nil, devOptions{addr: devDefaultAddr, dir: "."}, ""},
		{[]string{"fn", "-addr", "127.0.0.1:0", "-dynalite"}, devOptions{addr: "127.0.0.1:0", dir: "fn", dynalite: true}, ""},
		{[]string{"-target", "gcf", "dir"}, devOptions{addr: devDefaultAddr, dir: "dir", target: "gcf"}, ""},
		{[]string{"-target", "lambda", "-dynalite"}, devOptions{addr: devDefaultAddr, dir: ".", target: "lambda", dynalite: true}, ""},
		{[]string{"a", "b"}, devOptions{}, "one DIR"},
		{[]string{"-target", "azure"}, devOptions{}, "-target must be"},
		{[]string{"-target", "http", "-dynalite"}, devOptions{}, "-dynalite is for -target lambda"},
		{[]string{"-addr", "8080"}, devOptions{}, "-addr must be HOST:PORT"},
		{[]string{"-timeout", "1s"}, devOptions{}, "not defined"},
	} {
		o, err := parseDevArgs(c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseDevArgs(%q) = %v, want an error containing %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || *o != c.want {
			t.Errorf("parseDevArgs(%q) = %+v, %v; want %+v", c.args, o, err, c.want)
		}
	}
}

func TestDetectTarget(t *testing.T) {
	pkg := func(imports, deps []string) *goPackage {
		return &goPackage{ImportPath: "example.com/x", Imports: imports, Deps: deps}
	}
	m := mcpfnModule
	for _, c := range []struct {
		p        *goPackage
		explicit string
		want     string
		err      string
	}{
		{pkg([]string{m + "/deploy/lambdaenv", m + "/core"}, nil), "", "lambda", ""},
		{pkg([]string{m + "/adapters/lambda"}, nil), "", "lambda", ""},
		{pkg([]string{m + "/deploy/gcfenv"}, nil), "", "gcf", ""},
		{pkg([]string{m + "/adapters/gcf"}, nil), "", "gcf", ""},
		{pkg([]string{m + "/adapters/workers"}, nil), "", "workers", ""},
		{pkg([]string{m + "/adapters/nethttp"}, nil), "", "http", ""},
		// Direct imports decide before dependencies.
		{pkg([]string{m + "/adapters/nethttp"}, []string{m + "/adapters/lambda"}), "", "http", ""},
		{pkg([]string{"example.com/x/internal/fn"}, []string{m + "/deploy/lambdaenv"}), "", "lambda", ""},
		{pkg([]string{m + "/adapters/lambda", m + "/adapters/nethttp"}, nil), "", "", "several platforms (lambda, http)"},
		{pkg([]string{m + "/adapters/lambda", m + "/adapters/nethttp"}, nil), "http", "http", ""},
		{pkg([]string{"fmt"}, []string{"fmt"}), "", "", "-target"},
	} {
		got, err := detectTarget(c.p, c.explicit)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("detectTarget(%v, %q) = %q, %v; want an error containing %q", c.p.Imports, c.explicit, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("detectTarget(%v, %q) = %q, %v; want %q", c.p.Imports, c.explicit, got, err, c.want)
		}
	}
}

func TestWithEnv(t *testing.T) {
	got := withEnv([]string{"A=1", "AWS_PROFILE=p", "B=2", "A=3"}, []string{"AWS_PROFILE"}, "B=9", "C=4")
	if want := []string{"A=1", "A=3", "B=9", "C=4"}; !slices.Equal(got, want) {
		t.Errorf("withEnv = %q, want %q", got, want)
	}
	if v := getenv(got, "A"); v != "3" {
		t.Errorf("getenv A = %q, want the last value 3", v)
	}
}

func TestLambdaName(t *testing.T) {
	for in, want := range map[string]string{"x": "x", "my fn.v2": "my-fn-v2", "...": "function", strings.Repeat("a", 70): strings.Repeat("a", 64)} {
		if got := lambdaName(in); got != want {
			t.Errorf("lambdaName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDisplayAddr(t *testing.T) {
	for in, want := range map[string]string{"0.0.0.0:8080": "127.0.0.1:8080", "[::]:9": "127.0.0.1:9", "127.0.0.1:80": "127.0.0.1:80", "[::1]:80": "[::1]:80"} {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := displayAddr(a); got != want {
			t.Errorf("displayAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestWatch checks that the watcher reports a changed, an added and a
// removed Go file, and go.mod, once each, and ignores tests, other files
// and the directories the go command ignores.
func TestWatch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("main.go", "package main\n")
	write("sub/lib.go", "package sub\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan []string)
	go watch(ctx, root, takeSnapshot(root), changes)
	next := func() []string {
		t.Helper()
		select {
		case c := <-changes:
			for i := range c {
				c[i] = filepath.ToSlash(relPath(root, c[i]))
			}
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("no change reported")
			return nil
		}
	}
	// Ignored: tests, other files, testdata, _ and . directories; then
	// one that counts, which must come alone.
	write("main_test.go", "package main\n")
	write("README.md", "x")
	write("testdata/x.go", "package x\n")
	write("_gen/x.go", "package x\n")
	write(".git/x.go", "package x\n")
	write("sub/lib.go", "package sub // changed\n")
	if got := next(); !slices.Equal(got, []string{"sub/lib.go"}) {
		t.Errorf("changes = %q, want [sub/lib.go]", got)
	}
	write("new.go", "package main\n")
	if err := os.Remove(filepath.Join(root, "main.go")); err != nil {
		t.Fatal(err)
	}
	write("go.mod", "module x\n\ngo 1.26\n")
	if got := next(); !slices.Equal(got, []string{"go.mod", "main.go", "new.go"}) {
		t.Errorf("changes = %q, want [go.mod main.go new.go]", got)
	}
}

// TestWorkerdVersion checks that mcpfn dev runs the workerd the tests pin
// and docs/workers.md names.
func TestWorkerdVersion(t *testing.T) {
	root := repoDir(t)
	b, err := os.ReadFile(filepath.Join(root, "test", "workers", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^WORKERD_VERSION=(\S+)`).FindSubmatch(b)
	if m == nil || string(m[1]) != devWorkerdVersion {
		t.Errorf("test/workers/install.sh pins workerd %s, mcpfn dev runs %s", m, devWorkerdVersion)
	}
	b, err = os.ReadFile(filepath.Join(root, "test", "dynalite", "start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m = regexp.MustCompile(`(?m)^DYNALITE_VERSION=(\S+)`).FindSubmatch(b)
	if m == nil || string(m[1]) != dynaliteVersion {
		t.Errorf("test/dynalite/start.sh pins dynalite %s, mcpfn dev runs %s", m, dynaliteVersion)
	}
}

// TestProxyKeepAlive sends requests one after the other on one
// connection through the proxy of mcpfn dev to a server that streams its
// answer quickly, each closed once its last event is read: every answer
// must arrive whole. (A proxy whose transport read the end of a request
// body after its handler had returned cut the connection's next request
// short.)
func TestProxyKeepAlive(t *testing.T) {
	t.Parallel()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: progress\n\n")
		w.(http.Flusher).Flush()
		// The window in which the transport's goroutine has yet to read
		// the end of the body.
		time.Sleep(time.Millisecond)
		io.WriteString(w, "data: result\n\n")
	}))
	defer backend.Close()
	front := httptest.NewServer(newProxied(&program{}, strings.TrimPrefix(backend.URL, "http://")))
	defer front.Close()
	for i := range 300 {
		res, err := front.Client().Post(front.URL+"/mcp", "application/json", strings.NewReader(`{"i":1}`))
		if err != nil {
			t.Fatal(i, err)
		}
		br := bufio.NewReader(res.Body)
		var got string
		for !strings.HasSuffix(got, "data: result\n\n") {
			line, err := br.ReadString('\n')
			got += line
			if err != nil {
				t.Fatalf("request %d: %v after %q", i, err, got)
			}
		}
		res.Body.Close()
	}
}
