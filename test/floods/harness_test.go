//go:build linux

package floods

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/test/internal/proc"
	"github.com/mcpfn/mcpfn/test/internal/repo"
)

var bin = &repo.Binaries{Pattern: "mcpfn-floods-", Packages: []string{"./examples/everything"}}

func TestMain(m *testing.M) { bin.Main(m) }

// everything is a running process of examples/everything.
type everything struct {
	URL string
	cmd *exec.Cmd
	log *lockedLog
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) add(s string) {
	l.mu.Lock()
	l.b.WriteString(s)
	l.b.WriteByte('\n')
	l.mu.Unlock()
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var serving = regexp.MustCompile(`serving MCP on (http://\S+)`)

// startEverything builds examples/everything once and starts it on a free
// loopback port with env added to a clean environment (no AWS or MCPFN
// variables of the caller's: the in-memory stores unless env says
// otherwise). The process is killed when the test ends; on failure its log
// is shown.
func startEverything(t *testing.T, env ...string) *everything {
	t.Helper()
	cmd := exec.Command(bin.Path(t, "everything"), "-addr", "127.0.0.1:0", "-log", "warn")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "MCPFN_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e := &everything{cmd: cmd, log: &lockedLog{}}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	proc.StopAtEnd(t, cmd, "examples/everything's log", e.log)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			e.log.add(sc.Text())
		}
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			e.log.add(sc.Text())
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case e.URL = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("examples/everything did not start:\n%s", e.log)
	}
	return e
}

// rss is the process's resident memory in bytes (VmRSS).
func (e *everything) rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// ctx is the test's context.
func ctx(t *testing.T) context.Context { return t.Context() }
