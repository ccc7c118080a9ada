package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// devWorkerdVersion is the workerd mcpfn dev runs with npx when none is
// installed: the one the tests pin (test/workers/install.sh) and
// docs/workers.md names.
const devWorkerdVersion = "1.20261117.1"

// workersTarget runs `mcpfn package workers -dev-key` in workerd.
type workersTarget struct {
	s *devSession
	// workerd is the command that runs workerd: its binary, or npx and
	// its arguments.
	workerd []string
	npx     bool
}

// newWorkersTarget finds workerd: $MCPFN_WORKERD, the one
// test/workers/install.sh installs (${MCPFN_TOOLS:-~/.cache/mcpfn}), one
// on PATH, else npx workerd@devWorkerdVersion.
func newWorkersTarget(s *devSession) (devTarget, error) {
	t := &workersTarget{s: s}
	if p := getenv(s.environ, "MCPFN_WORKERD"); p != "" {
		t.workerd = []string{p}
		return t, nil
	}
	tools := getenv(s.environ, "MCPFN_TOOLS")
	if tools == "" {
		if home, err := os.UserHomeDir(); err == nil {
			tools = filepath.Join(home, ".cache", "mcpfn")
		}
	}
	if tools != "" {
		p := filepath.Join(tools, "workerd-"+devWorkerdVersion, "node_modules", ".bin", "workerd")
		if fileExists(p) || fileExists(resolveLink(p)) {
			t.workerd = []string{p}
			return t, nil
		}
	}
	if p := lookPathIn(s.environ, "workerd"); p != "" {
		t.workerd = []string{p}
		return t, nil
	}
	if p := lookPathIn(s.environ, "npx"); p != "" {
		fmt.Fprintf(s.stderr, "mcpfn dev: workerd is not installed: running npx --yes workerd@%s\n", devWorkerdVersion)
		t.workerd, t.npx = []string{p, "--yes", "workerd@" + devWorkerdVersion}, true
		return t, nil
	}
	return nil, fmt.Errorf("workerd is not installed and npx is not on PATH: install Node.js (then mcpfn dev runs npx --yes workerd@%s), or install workerd (npm install workerd@%s) and set MCPFN_WORKERD to its binary", devWorkerdVersion, devWorkerdVersion)
}

func resolveLink(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

func (t *workersTarget) build(ctx context.Context, out string, diag io.Writer) error {
	_, err := packageWorkers(ctx, workersPackage{
		Out: out, DevKey: true, Dir: t.s.pkg.Dir, GoCmd: t.s.goPath, Stderr: diag,
		Env: withEnv(t.s.environ, []string{"GOOS", "GOARCH"}),
	})
	return err
}

func (t *workersTarget) start(ctx context.Context, artefact string) (devInstance, error) {
	capnp := filepath.Join(artefact, "workerd.capnp")
	if t.npx {
		// npx does not pass on a control descriptor: a port of our own.
		return t.s.startServer(ctx, "workerd", "[workerd] ", t.workerd[0],
			func(addr string) []string {
				return append(append([]string{}, t.workerd[1:]...), "serve", capnp, "--socket-addr", "http="+addr)
			},
			func(int) []string { return t.s.environ })
	}
	// workerd says on its control descriptor which port it listens on.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(t.workerd[0], "serve", capnp, "--socket-addr", "http=127.0.0.1:0", "--control-fd", "3")
	cmd.Dir = artefact
	cmd.Env = t.s.environ
	cmd.ExtraFiles = []*os.File{w}
	prog, err := startProgram(cmd, t.s.stderr, "[workerd] ", t.s.exitNotice("workerd"))
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	// The descriptor is read until workerd closes it (it exits), so that
	// its later events never meet a closed pipe.
	ports := make(chan int, 1)
	go func() {
		defer r.Close()
		sent := false
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var ev struct {
				Event  string `json:"event"`
				Socket string `json:"socket"`
				Port   int    `json:"port"`
			}
			if !sent && json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "listen" && ev.Socket == "http" {
				ports <- ev.Port
				sent = true
			}
		}
		io.Copy(io.Discard, r)
		if !sent {
			close(ports)
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, devStartTimeout)
	defer cancel()
	select {
	case port, ok := <-ports:
		if ok {
			return newProxied(prog, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))), nil
		}
		err = errors.New("workerd closed its control descriptor without listening")
	case <-prog.done:
		err = fmt.Errorf("workerd exited (%v) before it listened", prog.err)
	case <-wctx.Done():
		err = fmt.Errorf("workerd did not listen: %w", wctx.Err())
	}
	prog.stop()
	return nil, err
}

func (t *workersTarget) close() {}
