package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpfn/mcpfn/test/bench/internal/httpc"
	"github.com/mcpfn/mcpfn/test/bench/internal/probe"
	"github.com/mcpfn/mcpfn/test/bench/internal/proc"
	"github.com/mcpfn/mcpfn/test/bench/internal/wire"
)

// server is one server under test.
type server struct {
	Name  string
	Descr string

	buildDir string // working directory of go build
	pkg      string // package to build

	Bin  string
	Size int64

	Skip string // why the server is not measured, if it is not

	Modern      bool           // answers 2026-07-28 requests
	Legacy      bool           // answers the 2025-11-25 handshake and tools/call
	Problems    []string       // conformance failures
	Samples     []probe.Sample // request/response pairs from the conformance check
	CleanExits  int            // SIGTERM -> exit status 0 within the grace period
	UncleanExit []string
}

func knownServers(benchDir, root string) []*server {
	return []*server{
		{Name: "floor", Descr: "bare net/http + encoding/json (CPU floor)", buildDir: benchDir, pkg: "./servers/floor"},
		{Name: "gosdk", Descr: "modelcontextprotocol/go-sdk " + modVersion(benchDir, "github.com/modelcontextprotocol/go-sdk") + ", stateless, JSON responses", buildDir: benchDir, pkg: "./servers/gosdk"},
		{Name: "mcpgo", Descr: "mark3labs/mcp-go " + modVersion(benchDir, "github.com/mark3labs/mcp-go") + ", stateless streamable HTTP", buildDir: benchDir, pkg: "./servers/mcpgo"},
		// examples/bench belongs to the examples module, whose go.mod
		// reaches the framework's modules in the working tree.
		{Name: "mcpfn", Descr: "mcpfn examples/bench (auto mode)", buildDir: filepath.Join(root, "examples"), pkg: "./bench"},
	}
}

// modVersion returns the version of module mod required by dir/go.mod.
func modVersion(dir, mod string) string {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == mod {
			return f[1]
		}
	}
	return "?"
}

// build compiles s into outDir, recording the binary and its size, or the
// reason to skip s. strip drops the symbol table and DWARF (-s -w), as
// deployments do; profiling (-perf) needs them.
func (s *server) build(outDir string, strip bool) {
	if s.Name == "mcpfn" {
		dir := filepath.Join(s.buildDir, "bench")
		goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(goFiles) == 0 {
			s.Skip = fmt.Sprintf("skipped: %s does not exist yet (no Go files); the harness measures it once examples/bench is written", dir)
			return
		}
	}
	bin := filepath.Join(outDir, s.Name)
	args := []string{"build", "-trimpath"}
	if strip {
		args = append(args, "-ldflags=-s -w")
	}
	cmd := exec.Command("go", append(args, "-o", bin, s.pkg)...)
	cmd.Dir = s.buildDir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.Skip = fmt.Sprintf("skipped: build failed (%v): %s", err, tail(string(out), 600))
		return
	}
	fi, err := os.Stat(bin)
	if err != nil {
		s.Skip = fmt.Sprintf("skipped: %v", err)
		return
	}
	s.Bin, s.Size = bin, fi.Size()
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return strings.ReplaceAll(s, "\n", " | ")
}

// freeAddr returns a currently free 127.0.0.1 TCP address.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}

// running is a started server process.
type running struct {
	srv   *server
	addr  string
	cmd   *exec.Cmd
	pid   int
	start time.Time

	stderr  *tailBuffer
	done    chan struct{}
	waitErr error
}

type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if t.buf.Len() > 64<<10 {
		b := t.buf.Bytes()
		keep := append([]byte(nil), b[len(b)-16<<10:]...)
		t.buf.Reset()
		t.buf.Write(keep)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// start launches s on a free port, pinned to serverCPU when pin is set.
func start(s *server, pin bool, serverCPU int) (*running, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{s.Bin, "-addr", addr}
	if pin {
		args = append([]string{"taskset", "-c", strconv.Itoa(serverCPU)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	r := &running{srv: s, addr: addr, cmd: cmd, stderr: &tailBuffer{}, done: make(chan struct{})}
	cmd.Stdout = r.stderr
	cmd.Stderr = r.stderr
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r.pid = cmd.Process.Pid
	go func() {
		r.waitErr = cmd.Wait()
		close(r.done)
	}()
	return r, nil
}

func (r *running) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// probeCall returns the request used to see whether the server is up:
// modern server/discover, or legacy initialize for legacy-only servers.
func probeCall(modern bool) *wire.Call {
	c := &wire.Call{Kind: wire.Discover, Modern: true}
	if !modern {
		c = &wire.Call{Kind: wire.Initialize}
	}
	c.Prepare()
	return c
}

// waitReady polls the server with pc until it answers correctly, and
// returns the time from exec to that answer.
func (r *running) waitReady(pc *wire.Call, timeout time.Duration) (time.Duration, error) {
	deadline := r.start.Add(timeout)
	body := pc.AppendBody(nil, 1)
	var lastErr error
	for {
		if r.exited() {
			return 0, fmt.Errorf("%s exited during start-up (%v): %s", r.srv.Name, r.waitErr, tail(r.stderr.String(), 400))
		}
		c := httpc.New(r.addr, "/mcp", 2*time.Second)
		resp, err := c.Do(pc.Headers(), body)
		c.Close()
		if err == nil {
			err = probe.CheckResponse(pc, resp, 1)
			if err == nil {
				return time.Since(r.start), nil
			}
			// The server answered, but wrongly: no point in retrying.
			return 0, err
		}
		lastErr = err
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s not ready after %v: %v", r.srv.Name, timeout, lastErr)
		}
		time.Sleep(250 * time.Microsecond)
	}
}

// stop sends SIGTERM and waits for the process; it kills it after grace. It
// reports whether the process exited with status 0 in time.
func (r *running) stop(grace time.Duration) (clean bool, why string) {
	if r.exited() {
		return false, fmt.Sprintf("exited before SIGTERM: %v", r.waitErr)
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(grace):
		_ = r.cmd.Process.Kill()
		<-r.done
		return false, fmt.Sprintf("still running %v after SIGTERM; killed", grace)
	}
	if r.waitErr != nil {
		return false, fmt.Sprintf("exit after SIGTERM: %v", r.waitErr)
	}
	return true, ""
}

// conformance sends each kind of request once and records which protocol
// eras the server answers, a few sample exchanges, and whether it stops
// cleanly.
func conformance(s *server, pin bool, serverCPU int, payloadN int) error {
	r, err := start(s, pin, serverCPU)
	if err != nil {
		return err
	}
	defer func() {
		if !r.exited() {
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	}()
	// Wait for the port: the server may answer only one protocol era.
	if err := waitListening(r, 20*time.Second); err != nil {
		return err
	}
	rep := probe.Conform(r.addr, payloadN)
	s.Modern, s.Legacy, s.Problems, s.Samples = rep.Modern, rep.Legacy, rep.Problems, rep.Samples
	if clean, why := r.stop(5 * time.Second); !clean {
		s.UncleanExit = append(s.UncleanExit, why)
	} else {
		s.CleanExits++
	}
	if !s.Modern && !s.Legacy {
		return fmt.Errorf("answers neither modern nor legacy requests: %s", strings.Join(s.Problems, "; "))
	}
	return nil
}

// waitListening waits until the server accepts TCP connections.
func waitListening(r *running, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if r.exited() {
			return fmt.Errorf("%s exited during start-up (%v): %s", r.srv.Name, r.waitErr, tail(r.stderr.String(), 400))
		}
		c, err := net.DialTimeout("tcp", r.addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening after %v: %v", r.srv.Name, timeout, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// coldStart measures exec to first correct answer to the probe, and the CPU
// time the process used until then.
func coldStart(s *server, pin bool, serverCPU int) (wall, cpu time.Duration, err error) {
	r, err := start(s, pin, serverCPU)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if clean, why := r.stop(5 * time.Second); !clean {
			s.UncleanExit = append(s.UncleanExit, why)
		} else {
			s.CleanExits++
		}
	}()
	wall, err = r.waitReady(probeCall(s.Modern), 20*time.Second)
	if err != nil {
		return 0, 0, err
	}
	cpu, err = processCPU(r.pid)
	return wall, cpu, err
}

var errNoCPU = errors.New("no CPU time available")

// processCPU returns the CPU time of pid with the best resolution available:
// summed per-thread schedstat (ns), else utime+stime (10 ms ticks).
func processCPU(pid int) (time.Duration, error) {
	if d, err := proc.SchedCPUTime(pid); err == nil && d > 0 {
		return d, nil
	}
	if d, err := proc.CPUTime(pid); err == nil {
		return d, nil
	}
	return 0, errNoCPU
}
