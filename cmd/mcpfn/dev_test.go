package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/mcp"
)

// The tests of mcpfn dev run it, in process, on small modules outside the
// repository written as the docs' tutorials are, which get the repository's
// modules through replace directives; they call a tool with package
// client, check that its progress notification reaches the client while the
// tool is still running, change the tool's answer in a .go file, wait for
// the restart line, and call again.

// devSlow is how long a test waits for a build and start: a cold build of
// a Lambda bootstrap compiles the AWS SDK.
const devSlow = 5 * time.Minute

// devModules maps the path of every module of the repository to its
// directory, from go.work.
func devModules(t *testing.T) map[string]string {
	t.Helper()
	root := repoDir(t)
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]string{}
	for _, line := range strings.Split(string(work), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, ".") {
			continue
		}
		dir := filepath.Join(root, line)
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(b); m != nil {
			mods[string(m[1])] = dir
		}
	}
	if mods[mcpfnModule] == "" {
		t.Fatalf("go.work does not list the root module")
	}
	return mods
}

// devGoEnv is the environment of the go command (and of mcpfn dev) for a
// module outside the repository: no workspace, the module cache's
// downloads as the first proxy (third-party modules without the network),
// no checksum database for them, the local toolchain.
func devGoEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	proxy := "file://" + filepath.Join(f[0], "cache", "download")
	if len(f) > 1 && f[1] != "" && f[1] != "off" {
		proxy += "," + f[1]
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "AWS_") && k != "GOFLAGS" && k != "GOWORK" && k != "GOPROXY" {
			env = append(env, kv)
		}
	}
	return append(env, "GOWORK=off", "GOFLAGS=", "GOPROXY="+proxy, "GOSUMDB=off", "GOTOOLCHAIN=local")
}

// devModule writes a module example.com/x with files into a new directory
// and tidies it.
func devModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "x")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var mod strings.Builder
	mod.WriteString("module example.com/x\n\ngo 1.26\n\n")
	for path, d := range devModules(t) {
		fmt.Fprintf(&mod, "replace %s => %s\n", path, d)
	}
	files["go.mod"] = mod.String()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = devGoEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	return dir
}

// The tool every test module serves: a progress notification, then, when
// DEVTEST_RELEASE_URL is set, a GET of it that the test answers once its
// client has received the notification, which proves that the
// notification left before the tool finished; the answer is the constant
// answer (answer.go, which the tests change) and what the GET said.
const devStepGo = `package main

import (
	"context"
	"io"
	"net/http"
	"os"

	"github.com/mcpfn/mcpfn/core"
)

// StepArgs are the arguments of the step tool (none).
type StepArgs struct{}

func step(ctx context.Context, req *core.CallToolRequest, _ StepArgs) (string, error) {
	if err := req.NotifyProgress(ctx, 1, 2, "halfway"); err != nil {
		return "", err
	}
	seen := "unchecked"
	if u := os.Getenv("DEVTEST_RELEASE_URL"); u != "" {
		res, err := http.Get(u)
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		seen = string(b)
	}
	return answer + " " + seen, nil
}

func addStep(s *core.Server) {
	core.AddTool(s, &core.Tool{Name: "step", Description: "One step, with progress."}, step)
}
`

func devAnswer(a string) string { return "package main\n\nconst answer = \"" + a + "\"\n" }

// devFiles are the files of a module of each target, as the docs write
// them (the tool aside).
func devFiles(target string) map[string]string {
	files := map[string]string{"step.go": devStepGo, "answer.go": devAnswer("first")}
	switch target {
	case "lambda": // docs/lambda.md
		files["main.go"] = `package main

import (
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

func main() {
	lambdaenv.Start(core.Implementation{Name: "x", Version: "1.0.0"}, addStep)
}
`
	case "gcf": // docs/gcf.md: a package at the root of its module
		for name, src := range files {
			files[name] = strings.Replace(src, "package main", "package x", 1)
		}
		files["function.go"] = `package x

import (
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/gcfenv"
)

func init() {
	gcfenv.Start("MCP", core.Implementation{Name: "x", Version: "1.0.0"}, addStep)
}
`
	case "workers": // docs/workers.md
		for name, src := range files {
			files[name] = "//go:build js && wasm\n\n" + src
		}
		files["main.go"] = `//go:build js && wasm

package main

import (
	"github.com/mcpfn/mcpfn/adapters/workers"
	"github.com/mcpfn/mcpfn/core"
)

func main() {
	srv := core.NewServer(core.Implementation{Name: "x", Version: "1.0.0"}, workers.ServerOptions(nil))
	addStep(srv)
	workers.Serve(srv, nil)
}
`
	case "http": // examples/calculator
		files["main.go"] = `package main

import (
	"context"
	"flag"
	"log"
	"net"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	srv := core.NewServer(core.Implementation{Name: "x", Version: "1.0.0"}, nil)
	addStep(srv)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("x: serving MCP on http://%s/mcp", ln.Addr())
	if err := nethttp.ServeListener(context.Background(), ln, srv, nil); err != nil {
		log.Fatal(err)
	}
}
`
	}
	return files
}

// devLog collects mcpfn dev's stderr and hands its lines to waiters.
type devLog struct {
	mu    sync.Mutex
	all   strings.Builder
	lines []string
	more  chan struct{} // closed and replaced at each line
}

func (l *devLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.WriteString(time.Now().Format("15:04:05.000 ") + line + "\n")
	l.lines = append(l.lines, line)
	close(l.more)
	l.more = make(chan struct{})
}

func (l *devLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}

// devRun is a running mcpfn dev.
type devRun struct {
	t    *testing.T
	url  string
	log  *devLog
	next int // the first line waitFor looks at
}

// startDev runs mcpfn dev -addr 127.0.0.1:0 in dir until the test ends,
// and returns once it has printed its URL.
func startDev(t *testing.T, dir string, extraEnv []string, args ...string) *devRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	d := &devRun{t: t, log: &devLog{more: make(chan struct{})}}
	urls := make(chan string, 1)
	var readers sync.WaitGroup
	readers.Go(func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "mcpfn dev: serving "); ok {
				urls <- u
			} else {
				t.Errorf("stdout holds more than the serving line: %q", sc.Text())
			}
		}
	})
	readers.Go(func() {
		sc := bufio.NewScanner(errR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			d.log.add(sc.Text())
		}
	})
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, append([]string{"dev", "-addr", "127.0.0.1:0"}, args...),
			&env{stdin: strings.NewReader(""), stdout: outW, stderr: errW, dir: dir, environ: append(devGoEnv(t), extraEnv...)})
		outW.Close()
		errW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("mcpfn dev exited with %d", code)
		}
		readers.Wait()
		if t.Failed() {
			t.Logf("mcpfn dev's stderr:\n%s", d.log.String())
		}
	})
	select {
	case d.url = <-urls:
	case code := <-done:
		t.Fatalf("mcpfn dev exited (%d) before it served:\n%s", code, d.log.String())
	case <-time.After(devSlow):
		t.Fatalf("mcpfn dev did not serve within %v:\n%s", devSlow, d.log.String())
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*/mcp$`).MatchString(d.url) {
		t.Fatalf("mcpfn dev serves %q, want http://127.0.0.1:PORT/mcp", d.url)
	}
	return d
}

// waitFor waits for a line of mcpfn dev's stderr, after those waited for
// before, that contains s, and returns it.
func (d *devRun) waitFor(s string) string {
	d.t.Helper()
	deadline := time.After(devSlow)
	for {
		d.log.mu.Lock()
		lines, more := d.log.lines, d.log.more
		d.log.mu.Unlock()
		for ; d.next < len(lines); d.next++ {
			if strings.Contains(lines[d.next], s) {
				d.next++
				return lines[d.next-1]
			}
		}
		select {
		case <-more:
		case <-deadline:
			d.t.Fatalf("mcpfn dev did not print %q within %v", s, devSlow)
		}
	}
}

// releaser is the URL the step tool GETs: it answers "early" once the
// test's client has received the tool's progress notification, "late" if
// that does not happen within ten seconds. A client outside the test says
// it has with a GET of /seen.
type releaser struct {
	*httptest.Server
	mu   sync.Mutex
	seen chan struct{}
	tell func() // closes seen, once
}

// expect starts a call, and returns the function that says its progress
// notification has arrived.
func (r *releaser) expect() func() {
	seen := make(chan struct{})
	tell := sync.OnceFunc(func() { close(seen) })
	r.mu.Lock()
	r.seen, r.tell = seen, tell
	r.mu.Unlock()
	return tell
}

func newReleaser(t *testing.T) *releaser {
	r := &releaser{seen: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		seen, tell := r.seen, r.tell
		r.mu.Unlock()
		if req.URL.Path == "/seen" {
			if tell != nil {
				tell()
			}
			return
		}
		select {
		case <-seen:
			io.WriteString(w, "early")
		case <-time.After(10 * time.Second):
			io.WriteString(w, "late")
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// call calls the step tool at url with package client (in mode) and
// checks that the progress notification came before the result, and the
// answer.
func callStep(t *testing.T, url string, mode client.Mode, rel *releaser, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tell := func() {}
	if rel != nil {
		tell = rel.expect()
	}
	c, err := client.Connect(ctx, url, &client.Options{Mode: mode})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	var progressed atomic.Bool
	res, err := c.CallTool(ctx, "step", nil, &client.CallOptions{Progress: func(p client.Progress) {
		progressed.Store(true)
		tell()
	}})
	if err != nil {
		t.Fatalf("tools/call step: %v", err)
	}
	if !progressed.Load() {
		t.Errorf("no progress notification before the result")
	}
	var text string
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if text != want {
		t.Errorf("step answered %+v, want %q", res.Content, want)
	}
}

// TestDev runs mcpfn dev on a module of each target: call, change, restart,
// call (and for http, a change that does not build).
func TestDev(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs modules")
	}
	t.Parallel()
	for _, target := range []string{"lambda", "gcf", "http", "workers"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			var env []string
			if target == "workers" {
				env = append(env, "MCPFN_WORKERD="+devWorkerd(t))
			}
			rel := newReleaser(t)
			env = append(env, "DEVTEST_RELEASE_URL="+rel.URL)
			dir := devModule(t, devFiles(target))
			d := startDev(t, dir, env)
			if line := d.waitFor("mcpfn dev: example.com/x ("); !strings.Contains(line, "("+target+")") {
				t.Errorf("mcpfn dev found %q, want target %s", line, target)
			}
			// Where the tool can reach the release URL, the progress
			// notification must arrive before the tool ends; a Worker's
			// program sees only its bindings.
			answer := " early"
			if target == "workers" {
				answer = " unchecked"
			}
			callStep(t, d.url, client.ModeAuto, rel, "first"+answer)

			second := strings.Replace(devFiles(target)["answer.go"], `"first"`, `"second"`, 1)
			if err := os.WriteFile(filepath.Join(dir, "answer.go"), []byte(second), 0o644); err != nil {
				t.Fatal(err)
			}
			d.waitFor("mcpfn dev: answer.go changed: rebuilding")
			d.waitFor("mcpfn dev: restarted")
			callStep(t, d.url, client.ModeAuto, rel, "second"+answer)
			callStep(t, d.url, client.ModeLegacy, rel, "second"+answer)

			switch target {
			case "lambda":
				tsClient(t, d.url, rel)
			case "http":
				// A build that fails prints the compiler's errors and
				// leaves the last good build serving; the next good
				// change restarts.
				if err := os.WriteFile(filepath.Join(dir, "answer.go"), []byte("package main\n\nconst answer = undefinedName\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				d.waitFor("undefined: undefinedName")
				d.waitFor("mcpfn dev: build failed")
				callStep(t, d.url, client.ModeAuto, rel, "second"+answer)
				if err := os.WriteFile(filepath.Join(dir, "answer.go"), []byte(devAnswer("third")), 0o644); err != nil {
					t.Fatal(err)
				}
				d.waitFor("mcpfn dev: restarted")
				callStep(t, d.url, client.ModeAuto, rel, "third"+answer)
			}
		})
	}
}

// devWorkerd returns the workerd test/workers/install.sh installs, or
// skips (fails with MCPFN_REQUIRE_WORKERD=1).
func devWorkerd(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoDir(t), "test", "workers", "install.sh")).Output()
	if err != nil {
		testenv.Workerd.Missing(t, fmt.Sprintf("test/workers/install.sh: %v", err))
	}
	return strings.TrimSpace(string(out))
}

// tsClient calls the step tool at url with the official TypeScript SDK
// client (@modelcontextprotocol/sdk 1.x: a legacy session), as the MCP
// Inspector does.
func tsClient(t *testing.T, url string, rel *releaser) {
	t.Helper()
	root := repoDir(t)
	install := func(args ...string) string {
		out, err := exec.Command(filepath.Join(root, "test", "node", "install.sh"), args...).Output()
		if err != nil {
			msg := fmt.Sprintf("test/node/install.sh %s: %v", strings.Join(args, " "), err)
			if os.Getenv("MCPFN_REQUIRE_NODE") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		return strings.TrimSpace(string(out))
	}
	node := install()
	tools := os.Getenv("MCPFN_TOOLS")
	if tools == "" {
		home, _ := os.UserHomeDir()
		tools = filepath.Join(home, ".cache", "mcpfn")
	}
	// The SDK test/interop/run.sh installs, in the same place.
	mods := install(filepath.Join(tools, "interop-1.32.2"), "@modelcontextprotocol/sdk@1.32.2")
	script, err := os.CreateTemp(filepath.Dir(mods), "devclient-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(script.Name())
	script.WriteString(`import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const client = new Client({ name: 'mcpfn-dev-test', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
await client.connect(transport);
const { tools } = await client.listTools();
const progress = [];
const res = await client.callTool({ name: 'step', arguments: {} }, undefined, {
  onprogress: (p) => { progress.push(p.progress); fetch(process.argv[3] + '/seen'); },
});
console.log(JSON.stringify({ session: typeof transport.sessionId, tools: tools.map((t) => t.name), progress, text: res.content[0].text }));
await client.close();
`)
	script.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rel.expect()
	out, err := exec.CommandContext(ctx, node, script.Name(), url, rel.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript SDK client: %v\n%s", err, out)
	}
	if want := `{"session":"string","tools":["step"],"progress":[1],"text":"second early"}`; strings.TrimSpace(string(out)) != want {
		t.Errorf("the TypeScript SDK client printed %s, want %s", out, want)
	}
}

// TestDevDynalite checks -dynalite with the test suite's dynalite
// (AWS_ENDPOINT_URL_DYNAMODB): a legacy session opened before a restart
// goes on after it, as it lives in the table, not in the function.
func TestDevDynalite(t *testing.T) {
	endpoint := testenv.DynamoEndpoint(t)
	t.Parallel()
	files := devFiles("lambda")
	// A tool that runs as a task (the Tasks extension): the kit's Lambda
	// runner starts it in an asynchronous invocation of the function, through
	// the Invoke API mcpfn dev serves, and keeps it in the table.
	files["main.go"] = strings.Replace(files["main.go"], "lambdaenv.Start(core.Implementation{Name: \"x\", Version: \"1.0.0\"}, addStep)",
		`lambdaenv.Start(core.Implementation{Name: "x", Version: "1.0.0"}, func(s *core.Server) {
		addStep(s)
		core.AddTool(s, &core.Tool{Name: "later", Description: "Answers as a task."},
			func(ctx context.Context, req *core.CallToolRequest, _ StepArgs) (string, error) { return "later " + req.TaskID(), nil },
			&core.ToolOptions{TaskSupport: core.TaskRequired})
	})`, 1)
	files["main.go"] = strings.Replace(files["main.go"], "import (", "import (\n\t\"context\"\n", 1)
	dir := devModule(t, files)
	d := startDev(t, dir, []string{"AWS_ENDPOINT_URL_DYNAMODB=" + endpoint}, "-dynalite")
	d.waitFor("mcpfn dev: sessions and tasks in the table mcpfn-dev-x-")
	ctx, cancel := context.WithTimeout(context.Background(), devSlow)
	defer cancel()
	c, err := client.Connect(ctx, d.url, &client.Options{Mode: client.ModeLegacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(want string) {
		t.Helper()
		res, err := c.CallTool(ctx, "step", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != want {
			t.Errorf("step answered %+v, want %q", res.Content, want)
		}
	}
	call("first unchecked")
	sid := c.SessionID()
	tc, err := client.Connect(ctx, d.url, &client.Options{Tasks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	var task string
	res, err := tc.CallTool(ctx, "later", nil, &client.CallOptions{TaskStatus: func(dt *mcp.DetailedTask) { task = dt.TaskID }})
	if err != nil {
		t.Fatalf("the task tool: %v", err)
	}
	if text, ok := res.Content[0].(*mcp.TextContent); !ok || task == "" || text.Text != "later "+task {
		t.Errorf("the task tool answered %+v (task %q), want \"later <its task id>\"", res.Content, task)
	}
	if err := os.WriteFile(filepath.Join(dir, "answer.go"), []byte(devAnswer("second")), 0o644); err != nil {
		t.Fatal(err)
	}
	d.waitFor("mcpfn dev: restarted")
	call("second unchecked")
	if now := c.SessionID(); now != sid || sid == "" {
		t.Errorf("the session was %q before the restart and %q after: it did not survive in the table", sid, now)
	}
}

// TestDevInterrupt runs the mcpfn command, stops it with SIGINT (Ctrl-C),
// and checks that no process it started outlives it.
func TestDevInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs modules")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("lists processes through /proc")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "mcpfn")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := devModule(t, devFiles("http"))
	cmd := exec.Command(bin, "dev", "-addr", "127.0.0.1:0")
	cmd.Dir = dir
	// Its temporary directory inside the test's, should it be killed
	// before it cleans up.
	cmd.Env = append(devGoEnv(t), "TMPDIR="+t.TempDir())
	var stderr mcptest.LogBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if !strings.HasPrefix(line, "mcpfn dev: serving http://127.0.0.1:") {
		t.Fatalf("first line %q (%v); stderr:\n%s", line, err, stderr.String())
	}
	callStep(t, strings.TrimSpace(strings.TrimPrefix(line, "mcpfn dev: serving ")), client.ModeAuto, nil, "first unchecked")
	procs := descendants(cmd.Process.Pid)
	if len(procs) == 0 {
		t.Fatalf("mcpfn dev runs no process; stderr:\n%s", stderr.String())
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("mcpfn dev exited with %v after SIGINT; stderr:\n%s", err, stderr.String())
	}
	for _, pid := range procs {
		if running(pid) {
			t.Errorf("process %d outlived mcpfn dev", pid)
		}
	}
}

// descendants returns the processes below pid, from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		_, after, _ := strings.Cut(string(b), ") ")
		fields := strings.Fields(after)
		p, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if len(fields) < 2 || err1 != nil {
			continue
		}
		pp, _ := strconv.Atoi(fields[1])
		parent[p] = pp
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}
