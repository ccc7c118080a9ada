// Package workerdtest runs Workers built with the adapter inside workerd,
// the open-source Workers runtime, for the tests of test/workers.
package workerdtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/test/internal/proc"
)

var (
	installOnce sync.Once
	workerdPath string
	installErr  error
)

// root is the repository's root directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Binary returns the path of the pinned workerd, installing it once; a
// failed install ends the test as testenv.Workerd.Missing does.
func Binary(t testing.TB) string {
	t.Helper()
	testenv.Workerd.SkipShort(t)
	installOnce.Do(func() {
		out, err := exec.Command(filepath.Join(root(), "test/workers/install.sh")).Output()
		if err != nil {
			installErr = fmt.Errorf("test/workers/install.sh: %v", err)
			return
		}
		workerdPath = strings.TrimSpace(string(out))
	})
	if installErr != nil {
		testenv.Workerd.Missing(t, installErr.Error())
	}
	return workerdPath
}

var packages sync.Map // package path → *pkgResult

type pkgResult struct {
	once sync.Once
	dir  string
	err  error
}

// Package builds pkg (an import path or ./dir relative to the repository
// root) into a Worker directory with test/workers/package.sh, once per test
// process, and returns the directory.
func Package(t testing.TB, pkg string) string {
	t.Helper()
	v, _ := packages.LoadOrStore(pkg, &pkgResult{})
	r := v.(*pkgResult)
	r.once.Do(func() {
		dir, err := os.MkdirTemp("", "workerdtest-")
		if err != nil {
			r.err = err
			return
		}
		cmd := exec.Command(filepath.Join(root(), "test/workers/package.sh"), dir, pkg)
		cmd.Dir = root()
		if out, err := cmd.CombinedOutput(); err != nil {
			r.err = fmt.Errorf("package.sh %s: %v\n%s", pkg, err, out)
			return
		}
		r.dir = dir
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.dir
}

// Worker is a running workerd.
type Worker struct {
	// URL is the base URL of its HTTP socket, as http://127.0.0.1:PORT.
	URL  string
	logs *mcptest.LogBuffer
	cmd  *exec.Cmd
}

// Logs returns what workerd printed so far (the Worker's console).
func (w *Worker) Logs() string { return w.logs.String() }

// Start runs the Worker directory dir (from Package) in workerd, with the
// given text bindings added, until the test ends.
func Start(t testing.TB, dir string, bindings map[string]string) *Worker {
	t.Helper()
	bin := Binary(t)
	cfg, err := os.ReadFile(filepath.Join(dir, "workerd.capnp"))
	if err != nil {
		t.Fatal(err)
	}
	var extra strings.Builder
	for k, v := range bindings {
		q, _ := json.Marshal(v)
		fmt.Fprintf(&extra, "(name = %q, text = %s),\n    ", k, q)
	}
	conf := strings.Replace(string(cfg), "# extra bindings", extra.String(), 1)
	f, err := os.CreateTemp(dir, "test-*.capnp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	f.WriteString(conf)
	f.Close()

	w := &Worker{logs: &mcptest.LogBuffer{}}
	cmd, port, err := Serve(bin, f.Name(), w.logs)
	if cmd == nil {
		t.Fatal(err)
	}
	w.cmd = cmd
	proc.StopAtEnd(t, cmd, "workerd output", w.logs)
	if err != nil {
		t.Fatalf("%v; its output:\n%s", err, w.Logs())
	}
	w.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	return w
}

// Serve starts bin (workerd) on the config file conf, with the socket
// "http" on a free loopback port and its output written to out, and
// returns once workerd reports, on its control fd, that the socket
// listens: the running command and the port. When workerd never listens
// it returns the command, still to be stopped, and an error; when it does
// not start, a nil command.
func Serve(bin, conf string, out io.Writer) (*exec.Cmd, int, error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(bin, "serve", conf, "--socket-addr", "http=127.0.0.1:0", "--control-fd", "3")
	cmd.ExtraFiles = []*os.File{ctlW}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Start()
	ctlW.Close()
	if err != nil {
		ctlR.Close()
		return nil, 0, err
	}
	// The events end when workerd exits; reading them to the end keeps
	// workerd from blocking on a full pipe.
	sc := bufio.NewScanner(ctlR)
	for sc.Scan() {
		var ev struct {
			Event, Socket string
			Port          int
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "listen" && ev.Socket == "http" {
			go func() {
				for sc.Scan() {
				}
				ctlR.Close()
			}()
			return cmd, ev.Port, nil
		}
	}
	ctlR.Close()
	return cmd, 0, errors.New("workerd did not listen")
}

// PID returns workerd's process id.
func (w *Worker) PID() int { return w.cmd.Process.Pid }
