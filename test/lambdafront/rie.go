package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpfn/mcpfn/lambdalocal"
	"github.com/mcpfn/mcpfn/test/internal/proc"
	"github.com/mcpfn/mcpfn/test/internal/rie"
)

// The emulator (aws-lambda-rie) runs one invocation at a time: a second
// concurrent invocation crashes it (nil dereference in rapidcore), and its
// managed-instances mode (AWS_LAMBDA_MAX_CONCURRENCY) only runs a bootstrap
// found at /var/runtime, /var/task or /opt, as another user. So concurrency
// comes from a pool of emulators, each running its own copy of the function,
// and each used by one invocation at a time.

const invokePath = "/2015-03-31/functions/function/invocations"

// poolConfig configures a pool of emulators.
type poolConfig struct {
	RIE       string        // path of aws-lambda-rie
	Bootstrap string        // path of the function's bootstrap
	Size      int           // number of emulators
	Timeout   time.Duration // function timeout (whole seconds)
	Env       []string      // the function's environment (the emulator forwards its own)
	Log       io.Writer     // the emulators' and functions' output
	Logger    *slog.Logger
}

// withDefaults returns cfg with its zero fields defaulted, or an error if
// the bootstrap is missing.
func (cfg poolConfig) withDefaults() (poolConfig, error) {
	if cfg.Size < 1 {
		cfg.Size = 1
	}
	if cfg.Timeout < time.Second {
		cfg.Timeout = time.Second
	}
	if _, err := os.Stat(cfg.Bootstrap); err != nil {
		return cfg, fmt.Errorf("bootstrap: %w", err)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return cfg, nil
}

// pool is a set of emulators; it implements lambdalocal.Invoker.
type pool struct {
	cfg    poolConfig
	client *http.Client
	free   chan *emulator

	mu     sync.Mutex
	all    map[*emulator]bool
	closed bool
}

// emulator is one aws-lambda-rie process and the function it runs.
type emulator struct {
	id   int
	cmd  *exec.Cmd
	url  string // the invoke endpoint
	done chan struct{}
}

// findRIE returns the path of aws-lambda-rie: explicit if set, else the
// one rie.Find finds.
func findRIE(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	p, err := rie.Find()
	if err != nil {
		return "", fmt.Errorf("%w, or -rie", err)
	}
	return p, nil
}

func newPool(ctx context.Context, cfg poolConfig) (*pool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &pool{
		cfg: cfg,
		client: &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 2,
			DisableCompression:  true,
		}},
		free: make(chan *emulator, cfg.Size),
		all:  make(map[*emulator]bool),
	}
	errs := make(chan error, cfg.Size)
	for i := range cfg.Size {
		go func() {
			e, err := p.start(ctx, i)
			if err == nil {
				p.free <- e
			}
			errs <- err
		}()
	}
	var startErr error
	for range cfg.Size {
		startErr = errors.Join(startErr, <-errs)
	}
	if startErr != nil {
		p.Close()
		return nil, startErr
	}
	return p, nil
}

// start launches emulator number id and waits until it accepts connections.
func (p *pool) start(ctx context.Context, id int) (*emulator, error) {
	var lastErr error
	for range 3 { // the free ports may be taken before the emulator binds them
		e, err := p.tryStart(ctx, id)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("emulator %d: %w", id, lastErr)
}

func (p *pool) tryStart(ctx context.Context, id int) (*emulator, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	cmd := exec.Command(p.cfg.RIE,
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		p.cfg.Bootstrap)
	cmd.Dir = filepath.Dir(p.cfg.Bootstrap)
	cmd.Env = emulatorEnv(p.cfg.Env, p.cfg.Timeout)
	out := &prefixWriter{w: p.cfg.Log, prefix: fmt.Sprintf("[rie %d] ", id)}
	cmd.Stdout, cmd.Stderr = out, out
	setProcAttr(cmd)

	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errors.New("pool closed")
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &emulator{id: id, cmd: cmd, url: "http://" + addr + invokePath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Flush()
		close(e.done)
	}()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		e.kill()
		return nil, errors.New("pool closed")
	}
	p.all[e] = true
	p.mu.Unlock()

	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			p.cfg.Logger.Debug("emulator ready", "id", id, "addr", addr, "pid", cmd.Process.Pid)
			return e, nil
		}
		select {
		case <-e.done:
			p.forget(e)
			return nil, fmt.Errorf("aws-lambda-rie exited: %v", cmd.ProcessState)
		case <-ctx.Done():
			p.discard(e)
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.discard(e)
			return nil, fmt.Errorf("aws-lambda-rie did not listen on %s", addr)
		}
	}
}

// emulatorEnv is the emulator's environment: the function's, with the
// timeout, and without AWS_LAMBDA_MAX_CONCURRENCY (which switches the
// emulator to managed-instances mode).
func emulatorEnv(env []string, timeout time.Duration) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "AWS_LAMBDA_MAX_CONCURRENCY" || k == "AWS_LAMBDA_FUNCTION_TIMEOUT" || k == "AWS_LAMBDA_RUNTIME_API" {
			continue
		}
		out = append(out, kv)
	}
	secs := int(math.Ceil(timeout.Seconds()))
	return append(out, "AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(secs))
}

// handedOut are the ports freePorts returned in this process: the kernel
// may give a port it gave a moment ago (the listener that found it free is
// closed before the emulator binds it), and emulators of a pool start
// concurrently, so two of them could be handed the same port and one would
// answer the other's invocations.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// freePorts returns n loopback ports that were free, none handed out
// before in this process.
func freePorts(n int) ([]int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			return nil, errors.New("no free port not handed out before")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		if handedOut.ports[port] {
			continue
		}
		handedOut.ports[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}

// Invoke runs one invocation on a free emulator. The emulator buffers
// the response and does not say whether it was streamed: the door looks.
func (p *pool) Invoke(ctx context.Context, event []byte) (*lambdalocal.Response, error) {
	payload, err := p.invoke(ctx, event)
	if err != nil {
		return nil, err
	}
	return &lambdalocal.Response{Body: io.NopCloser(bytes.NewReader(payload))}, nil
}

// invoke runs one invocation on a free emulator. An invocation the
// emulator refused before reading it (its address no longer listens: the
// emulator died, or another process held its port when it started) was
// never delivered and goes to the next free emulator, at most three times,
// as Lambda delivers an invocation its sandbox did not take.
func (p *pool) invoke(ctx context.Context, event []byte) ([]byte, error) {
	for attempt := 1; ; attempt++ {
		var e *emulator
		select {
		case e = <-p.free:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a free emulator: %w", ctx.Err())
		}
		payload, err := p.invokeOn(ctx, e, event)
		if err == nil || errors.Is(err, lambdalocal.ErrTimeout) { // the emulator recovers from timeouts
			p.free <- e
			return payload, err
		}
		// The emulator may be broken: replace it.
		p.cfg.Logger.Warn("restarting emulator", "id", e.id, "err", err)
		p.discard(e)
		go func() {
			ne, serr := p.start(context.Background(), e.id)
			if serr != nil {
				p.cfg.Logger.Error("restarting emulator failed", "id", e.id, "err", serr)
				return // the pool shrinks
			}
			p.free <- ne
		}()
		if !errors.Is(err, syscall.ECONNREFUSED) || attempt == 3 {
			return nil, err
		}
	}
}

func (p *pool) invokeOn(ctx context.Context, e *emulator, event []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(event))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	payload, err := io.ReadAll(io.LimitReader(res.Body, 4*maxPayload))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("emulator answered %s: %s", res.Status, truncateBytes(payload, 256))
	}
	if bytes.HasPrefix(payload, []byte("Task timed out after ")) {
		return nil, fmt.Errorf("%w: %s", lambdalocal.ErrTimeout, payload)
	}
	return payload, nil
}

// discard kills e and forgets it.
func (p *pool) discard(e *emulator) {
	e.kill()
	p.forget(e)
}

func (p *pool) forget(e *emulator) {
	p.mu.Lock()
	delete(p.all, e)
	p.mu.Unlock()
}

// Close kills every emulator and its function, and waits for them.
func (p *pool) Close() error {
	p.mu.Lock()
	p.closed = true
	all := make([]*emulator, 0, len(p.all))
	for e := range p.all {
		all = append(all, e)
	}
	clear(p.all)
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range all {
		wg.Go(e.kill)
	}
	wg.Wait()
	p.client.CloseIdleConnections()
	return nil
}

// kill stops the emulator and the function process it started. The
// emulator ignores SIGTERM, and runs the function in a process group of its
// own, so both are killed by process id.
func (e *emulator) kill() {
	children := proc.Children(e.cmd.Process.Pid)
	e.cmd.Process.Kill()
	for _, pid := range children {
		killPID(pid)
	}
	<-e.done
}

// prefixWriter writes whole lines, each with a prefix.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i+1])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *prefixWriter) emit(line []byte) {
	var b bytes.Buffer
	b.WriteString(w.prefix)
	b.Write(line)
	w.w.Write(b.Bytes())
}

// Flush writes a last, unterminated line.
func (w *prefixWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(append(w.buf, '\n'))
		w.buf = nil
	}
}

func truncateBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
