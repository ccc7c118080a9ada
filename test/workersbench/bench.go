package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/test/workers/workerdtest"
)

// The pinned npm packages of the TypeScript anchor.
const (
	sdkVersion      = "1.32.2" // the newest 1.x; exports WebStandardStreamableHTTPServerTransport
	zodVersion      = "4.6.7"
	cfworkerVersion = "4.1.6"
	esbuildVersion  = "0.28.2"
)

// config is the size of a run.
type config struct {
	Rounds  int // interleaved rounds; each is one cold start and one warm window per server
	Warmup  int // calls before the measured window
	Calls   int // calls in the measured window
	RSSCall int // calls before RSS is read
}

var (
	fullConfig  = config{Rounds: 7, Warmup: 500, Calls: 2000, RSSCall: 20000}
	quickConfig = config{Rounds: 2, Warmup: 50, Calls: 200, RSSCall: 1000}
)

// root is the repository's root directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// errMissing marks a tool (workerd, npm) that could not be installed.
type errMissing struct{ err error }

func (e errMissing) Error() string { return e.err.Error() }

// request is one tools/call of add(1, 2) and what its answer holds.
type request struct {
	headers map[string]string
	body    string
	answer  string
}

var (
	mcpfnRequest = request{
		headers: map[string]string{
			"Content-Type":         "application/json",
			"Accept":               "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28",
			"Mcp-Method":           "tools/call",
			"Mcp-Name":             "add",
		},
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"left":1,"right":2},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		answer: `"structuredContent":3`,
	}
	// The SDK's stateless transport takes a tools/call without initialize.
	tsRequest = request{
		headers: map[string]string{
			"Content-Type":         "application/json",
			"Accept":               "application/json, text/event-stream",
			"MCP-Protocol-Version": "2025-11-25",
		},
		body:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"left":1,"right":2}}}`,
		answer: `"structuredContent":{"result":3}`,
	}
)

// server is one of the compared servers.
type server struct {
	Name  string
	Desc  string
	start func() (*proc, error) // returns once the server listens
	req   request
}

// proc is a running server process.
type proc struct {
	cmd    *exec.Cmd
	url    string
	logs   *mcptest.LogBuffer
	client *http.Client
	done   func()
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) stop() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
	p.client.CloseIdleConnections()
	if p.done != nil {
		p.done()
	}
}

// call sends one request and checks the answer.
func (p *proc) call(r request) error {
	hr, err := http.NewRequest("POST", p.url, strings.NewReader(r.body))
	if err != nil {
		return err
	}
	for k, v := range r.headers {
		hr.Header.Set(k, v)
	}
	resp, err := p.client.Do(hr)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(r.answer)) {
		return fmt.Errorf("status %d, answer %.300q", resp.StatusCode, b)
	}
	return nil
}

func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}, Timeout: 30 * time.Second}
}

// startWorkerd runs the workerd config conf (written into dir) with its
// socket "http" on a free loopback port; it returns once workerd reports
// the socket listening on its control fd.
func startWorkerd(bin, dir, conf string) (*proc, error) {
	f, err := os.CreateTemp(dir, "bench-*.capnp")
	if err != nil {
		return nil, err
	}
	f.WriteString(conf)
	f.Close()
	logs := &mcptest.LogBuffer{}
	cmd, port, err := workerdtest.Serve(bin, f.Name(), logs)
	if cmd == nil {
		return nil, err
	}
	p := &proc{cmd: cmd, logs: logs, client: newClient(), done: func() { os.Remove(f.Name()) }}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("%v; its output:\n%s", err, logs.String())
	}
	p.url = fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	return p, nil
}

var servingLine = regexp.MustCompile(`serving MCP on (http://\S+)`)

// startNative runs the native calculator on a free port; it returns once
// the calculator prints its URL.
func startNative(bin string) (*proc, error) {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	logs := &mcptest.LogBuffer{}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, logs: logs, client: newClient()}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		logs.Write(append(sc.Bytes(), '\n'))
		if m := servingLine.FindSubmatch(sc.Bytes()); m != nil {
			p.url = string(m[1])
			go io.Copy(logs, stderr)
			return p, nil
		}
	}
	p.stop()
	return nil, fmt.Errorf("the calculator did not print its URL; its output:\n%s", logs.String())
}

// artifacts are what the servers are built from.
type artifacts struct {
	workerd    string
	workerDir  string   // examples/workers packaged (test/workers/package.sh)
	wasmFull   string   // the same wasm without -s -w, for its symbol sizes
	wasmDeps   []string // the packages linked into it
	nativeBin  string   // examples/calculator
	tsDir      string   // the anchor's bundle and workerd config
	tsBundle   string
	tmp        string
	esbuildOut string
}

// prepare installs workerd and the npm packages and builds everything.
func prepare(log io.Writer) (*artifacts, error) {
	r := root()
	a := &artifacts{}
	tmp, err := os.MkdirTemp("", "workersbench-")
	if err != nil {
		return nil, err
	}
	a.tmp = tmp
	out, err := exec.Command(filepath.Join(r, "test/workers/install.sh")).Output()
	if err != nil {
		return a, errMissing{fmt.Errorf("test/workers/install.sh: %v%s", err, stderrOf(err))}
	}
	a.workerd = strings.TrimSpace(string(out))

	tools := os.Getenv("MCPFN_TOOLS")
	if tools == "" {
		home, _ := os.UserHomeDir()
		tools = filepath.Join(home, ".cache", "mcpfn")
	}
	npmDir := filepath.Join(tools, fmt.Sprintf("workersbench-sdk%s-zod%s-cfworker%s-esbuild%s", sdkVersion, zodVersion, cfworkerVersion, esbuildVersion))
	out, err = exec.Command(filepath.Join(r, "test/node/install.sh"), npmDir,
		"@modelcontextprotocol/sdk@"+sdkVersion, "zod@"+zodVersion,
		"@cfworker/json-schema@"+cfworkerVersion, "esbuild@"+esbuildVersion).Output()
	if err != nil {
		return a, errMissing{fmt.Errorf("test/node/install.sh: %v%s", err, stderrOf(err))}
	}
	mods := strings.TrimSpace(string(out))

	fmt.Fprintln(log, "building: examples/workers (js/wasm), examples/calculator (native), the TypeScript anchor (esbuild)")
	a.workerDir = filepath.Join(tmp, "worker")
	if out, err := runIn(r, nil, filepath.Join(r, "test/workers/package.sh"), a.workerDir, "./examples/workers"); err != nil {
		return a, fmt.Errorf("package.sh: %v\n%s", err, out)
	}
	a.wasmFull = filepath.Join(tmp, "full.wasm")
	if out, err := runIn(r, []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}, "go", "build", "-trimpath", "-buildvcs=false", "-o", a.wasmFull, "./examples/workers"); err != nil {
		return a, fmt.Errorf("go build (wasm with symbols): %v\n%s", err, out)
	}
	deps, err := runIn(r, []string{"GOOS=js", "GOARCH=wasm"}, "go", "list", "-deps", "./examples/workers")
	if err != nil {
		return a, fmt.Errorf("go list -deps: %v\n%s", err, deps)
	}
	a.wasmDeps = strings.Fields(string(deps))
	a.nativeBin = filepath.Join(tmp, "calculator")
	if out, err := runIn(r, []string{"CGO_ENABLED=0"}, "go", "build", "-trimpath", "-ldflags=-s -w", "-buildvcs=false", "-o", a.nativeBin, "./examples/calculator"); err != nil {
		return a, fmt.Errorf("go build (calculator): %v\n%s", err, out)
	}

	// The anchor is bundled next to its node_modules, so that esbuild
	// resolves the packages from there.
	src, err := os.ReadFile(filepath.Join(r, "test/workersbench/ts/worker.ts"))
	if err != nil {
		return a, err
	}
	srcDir, err := os.MkdirTemp(filepath.Dir(mods), ".bench-src-")
	if err != nil {
		return a, err
	}
	defer os.RemoveAll(srcDir)
	if err := os.WriteFile(filepath.Join(srcDir, "worker.ts"), src, 0o644); err != nil {
		return a, err
	}
	a.tsDir = filepath.Join(tmp, "ts")
	a.tsBundle = filepath.Join(a.tsDir, "worker.mjs")
	// As wrangler bundles a Worker: platform neutral with the workerd,
	// worker and browser conditions; node: built-ins stay imports
	// (nodejs_compat, on by default since the compatibility date
	// 2026-08-04, provides them); not minified.
	out2, err := runIn(srcDir, nil, filepath.Join(mods, ".bin", "esbuild"), "worker.ts", "--bundle", "--format=esm",
		"--platform=neutral", "--target=es2022", "--conditions=workerd,worker,browser",
		"--main-fields=browser,module,main", "--external:node:*", "--log-level=error", "--outfile="+a.tsBundle)
	if err != nil {
		return a, fmt.Errorf("esbuild: %v\n%s", err, out2)
	}
	capnp, err := os.ReadFile(filepath.Join(r, "test/workersbench/ts/workerd.capnp"))
	if err != nil {
		return a, err
	}
	if err := os.WriteFile(filepath.Join(a.tsDir, "workerd.capnp"), capnp, 0o644); err != nil {
		return a, err
	}
	return a, nil
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

func runIn(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// servers returns the four compared servers, in the order of a round.
func (a *artifacts) servers() ([]server, error) {
	conf, err := os.ReadFile(filepath.Join(a.workerDir, "workerd.capnp"))
	if err != nil {
		return nil, err
	}
	// examples/workers keeps its state in Durable Objects and needs the
	// key that seals request state.
	key := `(name = "MCPFN_STATE_KEY", text = "YmVuY2gta2V5LW9mLXRoZS13b3JrZXJzLWJlbmNobWFyaw=="), `
	lazy := strings.Replace(string(conf), "# extra bindings", key, 1)
	eager := strings.Replace(string(conf), "# extra bindings", key+`(name = "MCPFN_EAGER_START", text = "1"),`, 1)
	ts, err := os.ReadFile(filepath.Join(a.tsDir, "workerd.capnp"))
	if err != nil {
		return nil, err
	}
	return []server{
		{Name: "A workers-lazy", Desc: "examples/workers in workerd, Go started in the first request (default)",
			start: func() (*proc, error) { return startWorkerd(a.workerd, a.workerDir, lazy) }, req: mcpfnRequest},
		{Name: "B workers-eager", Desc: "the same with MCPFN_EAGER_START=1 (Go started at isolate start-up)",
			start: func() (*proc, error) { return startWorkerd(a.workerd, a.workerDir, eager) }, req: mcpfnRequest},
		{Name: "C native", Desc: "examples/calculator, native net/http",
			start: func() (*proc, error) { return startNative(a.nativeBin) }, req: mcpfnRequest},
		{Name: "D ts-anchor", Desc: fmt.Sprintf("TypeScript SDK %s, WebStandardStreamableHTTPServerTransport (stateless, JSON) in workerd", sdkVersion),
			start: func() (*proc, error) { return startWorkerd(a.workerd, a.tsDir, string(ts)) }, req: tsRequest},
	}, nil
}

// sample is what one round measured of one server.
type sample struct {
	startCPU, startWall time.Duration // exec → listening
	firstCPU, firstWall time.Duration // the first request, after start-up
	warmCPU             time.Duration // per call, over the measured window
	p50                 time.Duration // warm latency
}

// results holds every sample and the RSS of each server.
type results struct {
	servers []server
	samples map[string][]sample
	rss     map[string]int64 // bytes, after cfg.RSSCall calls
}

// measure runs cfg.Rounds interleaved rounds (A B C D A B C D ...), then
// reads each server's RSS after cfg.RSSCall calls.
func measure(cfg config, srvs []server, log io.Writer) (*results, error) {
	res := &results{servers: srvs, samples: map[string][]sample{}, rss: map[string]int64{}}
	for round := 1; round <= cfg.Rounds; round++ {
		for _, s := range srvs {
			sm, err := measureOnce(cfg, s)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", round, s.Name, err)
			}
			res.samples[s.Name] = append(res.samples[s.Name], sm)
			fmt.Fprintf(log, "round %d %-16s start %6.1f ms CPU, first call %7.2f ms (%6.2f ms CPU), warm %.3f ms CPU/call, p50 %.3f ms\n",
				round, s.Name, ms(sm.startCPU), ms(sm.firstWall), ms(sm.firstCPU), ms(sm.warmCPU), ms(sm.p50))
		}
	}
	for _, s := range srvs {
		p, err := s.start()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		for i := 0; i < cfg.RSSCall; i++ {
			if err := p.call(s.req); err != nil {
				p.stop()
				return nil, fmt.Errorf("%s, call %d: %w\n%s", s.Name, i, err, p.logs.String())
			}
		}
		res.rss[s.Name] = rss(p.pid())
		p.stop()
		fmt.Fprintf(log, "%-16s RSS after %d calls: %.1f MiB\n", s.Name, cfg.RSSCall, float64(res.rss[s.Name])/(1<<20))
	}
	return res, nil
}

func measureOnce(cfg config, s server) (sm sample, err error) {
	t0 := time.Now()
	p, err := s.start()
	if err != nil {
		return sm, err
	}
	defer p.stop()
	sm.startWall = time.Since(t0)
	c0 := cpu(p.pid())
	sm.startCPU = c0
	t1 := time.Now()
	if err := p.call(s.req); err != nil {
		return sm, fmt.Errorf("first call: %w\n%s", err, p.logs.String())
	}
	sm.firstWall = time.Since(t1)
	sm.firstCPU = cpu(p.pid()) - c0
	for i := 0; i < cfg.Warmup; i++ {
		if err := p.call(s.req); err != nil {
			return sm, fmt.Errorf("warm-up call %d: %w\n%s", i, err, p.logs.String())
		}
	}
	lat := make([]time.Duration, cfg.Calls)
	c1 := cpu(p.pid())
	for i := range lat {
		t := time.Now()
		if err := p.call(s.req); err != nil {
			return sm, fmt.Errorf("call %d: %w\n%s", i, err, p.logs.String())
		}
		lat[i] = time.Since(t)
	}
	sm.warmCPU = (cpu(p.pid()) - c1) / time.Duration(cfg.Calls)
	slices.Sort(lat)
	sm.p50 = lat[len(lat)/2]
	return sm, nil
}

// cpu returns the CPU time (user and system) a process has used: the sum
// of its threads' /proc schedstat run times (nanoseconds), or utime+stime
// from /proc/PID/stat (10 ms ticks, but counting threads that ended) when
// that is larger.
func cpu(pid int) time.Duration {
	var sched time.Duration
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sched += time.Duration(n)
		}
	}
	var stat time.Duration
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 13 { // fields 14 and 15 of stat: utime, stime
				u, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				stat = time.Duration(u+st) * 10 * time.Millisecond // USER_HZ is 100
			}
		}
	}
	return max(sched, stat)
}

// rss returns a process's resident set size (VmRSS) in bytes.
func rss(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fileSizes returns a file's size raw and gzipped (best compression).
func fileSizes(path string) (raw, gz int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return int64(len(b)), int64(buf.Len()), nil
}
