// Command mcpbench is the side-by-side performance harness for MCP servers
// written in Go. It builds a CPU-floor server, go-sdk and mcp-go servers and
// mcpfn's examples/bench, serves each on a CPU of its own, drives it with
// modern (2026-07-28) and legacy (2025-11-25) requests from the other CPU,
// and writes a markdown report of throughput, latency, server CPU per
// request, peak RSS, cold start and binary size, with ratios to the floor.
//
// Run it from test/bench:
//
//	go run ./cmd/mcpbench -o results.md
//	go run ./cmd/mcpbench -quick
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/test/bench/internal/proc"
)

type config struct {
	out       string
	quick     bool
	duration  time.Duration
	warmup    time.Duration
	rounds    int
	clients   []int
	coldRuns  int
	scenarios []string
	servers   []string
	payloadN  int
	benchDir  string
	root      string
	serverCPU int
	loadCPU   int
	noPin     bool
	keep      bool
	cpuprof   string
	perfDir   string
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(2)
	}
	code, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("mcpbench", flag.ContinueOnError)
	cfg := &config{}
	var clients, scenarios, servers string
	fs.StringVar(&cfg.out, "o", "", "also write the markdown report to this `file`")
	fs.BoolVar(&cfg.quick, "quick", false, "short smoke run: -duration 1s -warmup 300ms -rounds 1 -coldruns 3 (unless set explicitly)")
	fs.DurationVar(&cfg.duration, "duration", 5*time.Second, "measured window of each load run")
	fs.DurationVar(&cfg.warmup, "warmup", time.Second, "warm-up before each measured window")
	fs.IntVar(&cfg.rounds, "rounds", 3, "interleaved rounds over all servers; medians are reported")
	fs.StringVar(&clients, "clients", "16,64", "comma-separated numbers of concurrent clients")
	fs.IntVar(&cfg.coldRuns, "coldruns", 10, "cold starts per server (median reported)")
	fs.StringVar(&scenarios, "scenarios", strings.Join(scenarioNames, ","), "comma-separated scenarios: "+strings.Join(scenarioNames, ", "))
	fs.StringVar(&servers, "servers", "floor,gosdk,mcpgo,mcpfn", "comma-separated servers to measure")
	fs.IntVar(&cfg.payloadN, "payload", 4096, "bytes returned by the payload tool in the payload scenario")
	fs.StringVar(&cfg.benchDir, "benchdir", ".", "directory of the test/bench module")
	fs.StringVar(&cfg.root, "root", "../..", "directory of the main mcpfn module (for examples/bench)")
	fs.IntVar(&cfg.serverCPU, "server-cpu", 0, "CPU the servers are pinned to")
	fs.IntVar(&cfg.loadCPU, "load-cpu", 1, "CPU the load generator is pinned to")
	fs.BoolVar(&cfg.noPin, "nopin", false, "do not pin the servers and the load generator to CPUs")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the directory of built binaries")
	fs.StringVar(&cfg.cpuprof, "cpuprofile", "", "write a CPU profile of the load generator to this `file`")
	fs.StringVar(&cfg.perfDir, "perf", "", "record each measured window of each server with `perf record` into this `directory` (binaries are built unstripped)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.quick {
		if !set["duration"] {
			cfg.duration = time.Second
		}
		if !set["warmup"] {
			cfg.warmup = 300 * time.Millisecond
		}
		if !set["rounds"] {
			cfg.rounds = 1
		}
		if !set["coldruns"] {
			cfg.coldRuns = 3
		}
	}
	for _, f := range splitList(clients) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad -clients entry %q", f)
		}
		cfg.clients = append(cfg.clients, n)
	}
	cfg.scenarios = splitList(scenarios)
	cfg.servers = splitList(servers)
	if len(cfg.clients) == 0 || len(cfg.scenarios) == 0 || len(cfg.servers) == 0 {
		return nil, fmt.Errorf("-clients, -scenarios and -servers must not be empty")
	}
	if cfg.rounds < 1 || cfg.coldRuns < 0 || cfg.duration <= 0 || cfg.warmup < 0 || cfg.payloadN < 0 {
		return nil, fmt.Errorf("bad -rounds, -coldruns, -duration, -warmup or -payload")
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// key identifies the results of one server, scenario and client count.
type key struct {
	server, scenario string
	clients          int
}

type results struct {
	cfg       *config
	env       environment
	servers   []*server
	scenarios []*scenario
	runs      map[key][]loadResult
	rss       map[string][]float64 // MiB per round
	coldWall  map[string][]float64 // ms
	coldCPU   map[string][]float64 // ms
	lambda    []lambdaSize
	notes     []string
}

type environment struct {
	Date, Uname, CPU, GoVersion, HarnessGo string
	NumCPU                                 int
	Pinning                                string
}

func run(cfg *config) (int, error) {
	benchDir, err := filepath.Abs(cfg.benchDir)
	if err != nil {
		return 0, err
	}
	if modData, err := os.ReadFile(filepath.Join(benchDir, "go.mod")); err != nil ||
		!bytes.Contains(modData, []byte("module github.com/mcpfn/mcpfn/test/bench")) {
		return 0, fmt.Errorf("%s is not the test/bench module; run from test/bench or pass -benchdir", benchDir)
	}
	root, err := filepath.Abs(cfg.root)
	if err != nil {
		return 0, err
	}

	res := &results{
		cfg:      cfg,
		runs:     map[key][]loadResult{},
		rss:      map[string][]float64{},
		coldWall: map[string][]float64{},
		coldCPU:  map[string][]float64{},
	}
	res.env = environment{
		Date:      time.Now().UTC().Format("2006-01-02 15:04:05 MST"),
		Uname:     cmdOutput("uname", "-a"),
		CPU:       proc.CPUModel(),
		GoVersion: cmdOutput("go", "version"),
		HarnessGo: runtime.Version(),
		NumCPU:    runtime.NumCPU(),
	}

	for _, name := range cfg.scenarios {
		sc, err := makeScenario(name, cfg.payloadN)
		if err != nil {
			return 0, err
		}
		res.scenarios = append(res.scenarios, sc)
	}
	all := knownServers(benchDir, root)
	for _, name := range cfg.servers {
		i := slices.IndexFunc(all, func(s *server) bool { return s.Name == name })
		if i < 0 {
			return 0, fmt.Errorf("unknown server %q (known: floor, gosdk, mcpgo, mcpfn)", name)
		}
		res.servers = append(res.servers, all[i])
	}

	if cfg.perfDir != "" {
		if _, err := exec.LookPath("perf"); err != nil {
			return 0, fmt.Errorf("-perf: %w", err)
		}
		if err := os.MkdirAll(cfg.perfDir, 0o755); err != nil {
			return 0, err
		}
		res.notes = append(res.notes, "Profiled with perf record (-perf "+cfg.perfDir+"): binaries are unstripped (larger), "+
			"and the CPU figures include the sampling interrupts, so compare them with each other, not with an unprofiled run.")
	}
	binDir, err := os.MkdirTemp("", "mcpbench-bin-")
	if err != nil {
		return 0, err
	}
	if cfg.keep {
		logf("binaries kept in %s", binDir)
	} else {
		defer os.RemoveAll(binDir)
	}
	for _, s := range res.servers {
		logf("building %s (%s)", s.Name, s.pkg)
		s.build(binDir, cfg.perfDir == "")
		if s.Skip != "" {
			logf("%s: %s", s.Name, s.Skip)
		} else {
			logf("%s: %.2f MiB", s.Name, mib(s.Size))
		}
	}

	logf("building the Lambda bootstraps (linux/arm64) for the size comparison")
	res.lambda = buildLambdaSizes(benchDir, root, binDir)

	// Pin: servers on serverCPU (taskset at exec), this process on loadCPU.
	pin := false
	switch {
	case cfg.noPin:
		res.env.Pinning = "none (-nopin)"
	case runtime.NumCPU() < 2:
		res.env.Pinning = "none: fewer than 2 CPUs available; servers and load generator share the CPU"
	default:
		if _, err := exec.LookPath("taskset"); err != nil {
			res.env.Pinning = "none: taskset not found; servers and load generator share the CPUs"
		} else if err := proc.PinSelf(cfg.loadCPU); err != nil {
			res.env.Pinning = fmt.Sprintf("none: pinning the load generator to CPU %d failed: %v", cfg.loadCPU, err)
		} else {
			pin = true
			runtime.GOMAXPROCS(1)
			res.env.Pinning = fmt.Sprintf("server: `taskset -c %d` (so Go's GOMAXPROCS=1 in the server); load generator: CPU %d, GOMAXPROCS=1",
				cfg.serverCPU, cfg.loadCPU)
		}
	}
	logf("pinning: %s", res.env.Pinning)

	if cfg.cpuprof != "" {
		f, err := os.Create(cfg.cpuprof)
		if err != nil {
			return 0, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return 0, err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}

	var live []*server
	for _, s := range res.servers {
		if s.Skip != "" {
			continue
		}
		logf("conformance check: %s", s.Name)
		if err := conformance(s, pin, cfg.serverCPU, cfg.payloadN); err != nil {
			s.Skip = "skipped: " + err.Error()
			logf("%s: %s", s.Name, s.Skip)
			continue
		}
		for _, p := range s.Problems {
			logf("%s: %s", s.Name, p)
		}
		live = append(live, s)
	}
	if len(live) == 0 {
		return 0, fmt.Errorf("no server could be measured")
	}

	for i := range cfg.coldRuns {
		for _, s := range live {
			wall, cpu, err := coldStart(s, pin, cfg.serverCPU)
			if err != nil {
				res.notes = append(res.notes, fmt.Sprintf("%s: cold start %d failed: %v", s.Name, i+1, err))
				continue
			}
			res.coldWall[s.Name] = append(res.coldWall[s.Name], ms(wall))
			res.coldCPU[s.Name] = append(res.coldCPU[s.Name], ms(cpu))
		}
	}
	for _, s := range live {
		logf("cold start %s: median %.1f ms wall, %.1f ms CPU", s.Name, median(res.coldWall[s.Name]), median(res.coldCPU[s.Name]))
	}

	for round := 1; round <= cfg.rounds; round++ {
		measureRound(res, live, pin, round)
	}

	report := res.markdown()
	fmt.Print(report)
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(report), 0o644); err != nil {
			return 0, err
		}
		logf("report written to %s", cfg.out)
	}
	if res.totalErrors() > 0 {
		logf("THE RUN HAD ERRORS: see the errors columns")
		return 3, nil
	}
	return 0, nil
}

// measureRound starts every server, then runs each scenario at each client
// count on each server in turn, so that the runs of one scenario on the
// different servers are close together in time. The order of the servers
// rotates from round to round. Idle servers wait on the same CPU.
func measureRound(res *results, live []*server, pin bool, round int) {
	cfg := res.cfg
	sysCPU := -1
	if pin {
		sysCPU = cfg.serverCPU
	}
	n := len(live)
	order := make([]*server, 0, n)
	for i := range n {
		order = append(order, live[(i+round-1)%n])
	}
	procs := map[*server]*running{}
	fail := func(s *server, err error) {
		res.notes = append(res.notes, fmt.Sprintf("%s: round %d: %v", s.Name, round, err))
		logf("%s: round %d: %v", s.Name, round, err)
		if r := procs[s]; r != nil {
			r.stop(time.Second)
			delete(procs, s)
		}
	}
	for _, s := range order {
		r, err := start(s, pin, cfg.serverCPU)
		if err != nil {
			fail(s, err)
			continue
		}
		procs[s] = r
		if _, err := r.waitReady(probeCall(s.Modern), 20*time.Second); err != nil {
			fail(s, err)
		}
	}
	for _, sc := range res.scenarios {
		for _, c := range cfg.clients {
			for _, s := range order {
				r := procs[s]
				if r == nil || !supports(s, sc) {
					continue
				}
				perfOut := ""
				if cfg.perfDir != "" {
					perfOut = filepath.Join(cfg.perfDir, fmt.Sprintf("%s-%s-c%d-r%d.data", s.Name, sc.Name, c, round))
				}
				lr, err := runLoad(r, sc, c, cfg.warmup, cfg.duration, sysCPU, perfOut)
				if err != nil {
					fail(s, err)
					continue
				}
				lr.Round = round
				k := key{s.Name, sc.Name, c}
				res.runs[k] = append(res.runs[k], lr)
				msg := ""
				if lr.Errors > 0 {
					msg = fmt.Sprintf(" ERRORS %d (first: %s)", lr.Errors, lr.FirstError)
				}
				logf("round %d %-6s %-10s c=%-3d %8.0f req/s p50 %6.3f ms p99 %7.3f ms %6.1f µs/req srv %3.0f%% lg %3.0f%% other %3.0f%%%s",
					round, s.Name, sc.Name, c, lr.Throughput, ms(lr.P50), ms(lr.P99), lr.CPUPerReq, 100*lr.SrvUtil, 100*lr.LGUtil, 100*lr.OtherUtil, msg)
				if r.exited() {
					fail(s, fmt.Errorf("server exited during the run (%v): %s", r.waitErr, tail(r.stderr.String(), 400)))
				}
			}
		}
	}
	for _, s := range order {
		r := procs[s]
		if r == nil {
			continue
		}
		if rss, err := proc.PeakRSS(r.pid); err == nil {
			res.rss[s.Name] = append(res.rss[s.Name], mib(rss))
		}
		if clean, why := r.stop(5 * time.Second); !clean {
			s.UncleanExit = append(s.UncleanExit, why)
		} else {
			s.CleanExits++
		}
	}
}

// supports reports whether s can run sc: modern scenarios need a server that
// answers 2026-07-28 requests, legacy ones a server that answers 2025-11-25.
func supports(s *server, sc *scenario) bool {
	if sc.MRTR && s.Name != "mcpfn" {
		return false // the ask tool exists on mcpfn only
	}
	if sc.Legacy {
		return s.Legacy
	}
	return s.Modern
}

func (res *results) totalErrors() int64 {
	var n int64
	for _, rs := range res.runs {
		for _, r := range rs {
			n += r.Errors
		}
	}
	return n
}

func cmdOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mib(n int64) float64        { return float64(n) / (1 << 20) }
