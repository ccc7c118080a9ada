package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpfn/mcpfn/test/bench/internal/httpc"
	"github.com/mcpfn/mcpfn/test/bench/internal/probe"
	"github.com/mcpfn/mcpfn/test/bench/internal/proc"
	"github.com/mcpfn/mcpfn/test/bench/internal/wire"
)

// scenario is one kind of request sent in a loop by every client.
type scenario struct {
	Name   string
	Descr  string
	Call   *wire.Call
	Legacy bool // 2025-11-25: each client does the initialize handshake first
	// MRTR: the ask tool, which only mcpfn serves; round 2 needs a
	// requestState obtained from the server under test (see forServer).
	MRTR bool
}

var scenarioNames = []string{"add", "echo", "payload", "discover", "legacy-add", "mrtr-1", "mrtr-2"}

func makeScenario(name string, payloadN int) (*scenario, error) {
	var sc *scenario
	switch name {
	case "add":
		sc = &scenario{Descr: "modern 2026-07-28 tools/call add {a:2,b:3}", Call: &wire.Call{Kind: wire.Add, Modern: true, A: 2, B: 3}}
	case "echo":
		sc = &scenario{Descr: "modern 2026-07-28 tools/call echo", Call: &wire.Call{Kind: wire.Echo, Modern: true, Text: wire.DefaultEchoText}}
	case "payload":
		sc = &scenario{Descr: fmt.Sprintf("modern 2026-07-28 tools/call payload {n:%d}", payloadN), Call: &wire.Call{Kind: wire.Payload, Modern: true, N: payloadN}}
	case "discover":
		sc = &scenario{Descr: "modern 2026-07-28 server/discover", Call: &wire.Call{Kind: wire.Discover, Modern: true}}
	case "mrtr-1":
		sc = &scenario{Descr: "modern 2026-07-28 tools/call ask, round 1 (an input_required result: form elicitation, sealed state)", Call: &wire.Call{Kind: wire.Ask, Modern: true}, MRTR: true}
	case "mrtr-2":
		sc = &scenario{Descr: "modern 2026-07-28 tools/call ask, round 2 (the retry with the answer and the state: verification, complete result)", Call: &wire.Call{Kind: wire.AskRetry, Modern: true, State: "placeholder"}, MRTR: true}
	case "legacy-add":
		sc = &scenario{Descr: "legacy 2025-11-25 tools/call add (after one initialize + notifications/initialized per client)", Call: &wire.Call{Kind: wire.Add, A: 2, B: 3}, Legacy: true}
	default:
		return nil, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(scenarioNames, ", "))
	}
	sc.Name = name
	sc.Call.Prepare()
	return sc, nil
}

// loadResult is the outcome of one load run.
type loadResult struct {
	Round int

	Requests   int64 // correct responses completed in the measured window
	Errors     int64 // failed requests, warm-up included
	FirstError string
	Window     time.Duration

	Throughput float64 // Requests per second of the window
	P50, P99   time.Duration

	CPUPerReq float64 // server CPU µs per completed request in the window
	SrvUtil   float64 // server CPU time / window (1.0 = one full core)
	LGPerReq  float64 // load generator CPU µs per request
	LGUtil    float64
	// OtherUtil is the CPU time used by other processes during the window on
	// the server's CPU (or on all CPUs, minus the load generator, when not
	// pinned), ÷ window. StealUtil is the hypervisor's steal time likewise.
	OtherUtil float64
	StealUtil float64
}

type worker struct {
	lat      []time.Duration
	ok       int64
	winErrs  int64
	errs     int64
	firstErr string
}

const (
	phaseWarmup = iota
	phaseMeasure
	phaseStop
)

func (w *worker) fail(err error) {
	w.errs++
	if w.firstErr == "" {
		w.firstErr = err.Error()
	}
}

func (w *worker) run(addr string, sc *scenario, client int, phase *atomic.Int32) {
	conn := httpc.New(addr, "/mcp", 10*time.Second)
	defer conn.Close()
	id := int64(client+1) << 32 // ids unique across clients
	hdr := sc.Call.Headers()
	needHandshake := sc.Legacy
	chk := wire.NewChecker(sc.Call)
	var body []byte
	for {
		p := phase.Load()
		if p == phaseStop {
			return
		}
		if needHandshake {
			id++
			sid, err := probe.Handshake(conn, id)
			if err != nil {
				w.fail(fmt.Errorf("handshake: %w", err))
				time.Sleep(time.Millisecond)
				continue
			}
			hdr = sc.Call.Headers() + probe.SessionHeader(sid)
			needHandshake = false
		}
		id++
		body = sc.Call.AppendBody(body[:0], id)
		t := time.Now()
		resp, err := conn.Do(hdr, body)
		d := time.Since(t)
		if err == nil {
			if resp.Status != 200 {
				err = fmt.Errorf("%s: HTTP %d: %.200q", sc.Call.Kind, resp.Status, resp.Body)
			} else {
				err = chk.Check(resp.ContentType, resp.Body, id)
			}
		}
		inWindow := phase.Load() == phaseMeasure
		if err != nil {
			w.fail(err)
			if inWindow {
				w.winErrs++
			}
			needHandshake = sc.Legacy
			time.Sleep(time.Millisecond)
			continue
		}
		if inWindow {
			w.ok++
			w.lat = append(w.lat, d)
		}
	}
}

// forServer returns sc ready for the server at addr: round 2 of the MRTR
// scenario gets a fresh requestState from that server (states are sealed with
// a per-process key and expire; a valid state may be replayed until then).
func (sc *scenario) forServer(addr string) (*scenario, error) {
	if sc.Call.Kind != wire.AskRetry {
		return sc, nil
	}
	first := &wire.Call{Kind: wire.Ask, Modern: true}
	first.Prepare()
	conn := httpc.New(addr, "/mcp", 10*time.Second)
	defer conn.Close()
	resp, err := conn.Do(first.Headers(), first.AppendBody(nil, 1))
	if err != nil {
		return nil, err
	}
	msg, err := wire.Extract(resp.ContentType, resp.Body, 1)
	if err != nil {
		return nil, err
	}
	state, err := wire.RequestState(msg)
	if err != nil {
		return nil, err
	}
	c := *sc.Call
	c.State = state
	c.Prepare()
	s := *sc
	s.Call = &c
	return &s, nil
}

// runLoad drives r with clients concurrent clients for warmup+dur and
// measures the last dur. sysCPU is the CPU the server is pinned to, or -1.
// perfOut, when set, is the file perf record writes a profile of the server
// over the measured window to.
func runLoad(r *running, sc *scenario, clients int, warmup, dur time.Duration, sysCPU int, perfOut string) (loadResult, error) {
	prepared, err := sc.forServer(r.addr)
	if err != nil {
		return loadResult{}, fmt.Errorf("preparing %s: %w", sc.Name, err)
	}
	sc = prepared
	var phase atomic.Int32
	ws := make([]*worker, clients)
	var wg sync.WaitGroup
	for i := range ws {
		w := &worker{lat: make([]time.Duration, 0, 8192)}
		ws[i] = w
		wg.Go(func() { w.run(r.addr, sc, i, &phase) })
	}
	time.Sleep(warmup)
	rec, perfErr := startPerf(r.pid, perfOut) // before the window's first reading

	self := os.Getpid()
	srv0, err := proc.CPUTime(r.pid)
	if err != nil {
		phase.Store(phaseStop)
		rec.stop()
		wg.Wait()
		return loadResult{}, fmt.Errorf("reading server CPU time: %w", err)
	}
	lg0, _ := proc.CPUTime(self)
	sys0, sysErr0 := proc.SystemCPU()
	t0 := time.Now()
	phase.Store(phaseMeasure)

	time.Sleep(dur)

	phase.Store(phaseStop)
	window := time.Since(t0)
	srv1, err := proc.CPUTime(r.pid)
	lg1, _ := proc.CPUTime(self)
	sys1, sysErr1 := proc.SystemCPU()
	if perfErr == nil {
		perfErr = rec.stop()
	}
	wg.Wait()
	if perfErr != nil {
		return loadResult{}, fmt.Errorf("perf record: %w", perfErr)
	}
	if err != nil {
		return loadResult{}, fmt.Errorf("reading server CPU time: %w", err)
	}

	res := loadResult{Window: window}
	var all []time.Duration
	var winErrs int64
	for _, w := range ws {
		res.Requests += w.ok
		res.Errors += w.errs
		winErrs += w.winErrs
		if res.FirstError == "" {
			res.FirstError = w.firstErr
		}
		all = append(all, w.lat...)
	}
	slices.Sort(all)
	res.P50 = quantile(all, 0.50)
	res.P99 = quantile(all, 0.99)
	secs := window.Seconds()
	res.Throughput = float64(res.Requests) / secs
	if n := res.Requests + winErrs; n > 0 {
		res.CPUPerReq = float64((srv1 - srv0).Microseconds()) / float64(n)
		res.LGPerReq = float64((lg1 - lg0).Microseconds()) / float64(n)
	}
	res.SrvUtil = (srv1 - srv0).Seconds() / secs
	res.LGUtil = (lg1 - lg0).Seconds() / secs
	if sysErr0 == nil && sysErr1 == nil {
		a, b := sys0[sysCPU], sys1[sysCPU]
		other := (b.Busy - a.Busy) - (srv1 - srv0)
		if sysCPU < 0 {
			other -= lg1 - lg0
		}
		res.OtherUtil = max(0, other.Seconds()/secs)
		res.StealUtil = max(0, (b.Steal-a.Steal).Seconds()/secs)
	}
	return res, nil
}

// quantile returns the nearest-rank q-quantile of sorted.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// median returns the median of xs (the mean of the middle two for even
// counts), or NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// perfRecording is a perf record process attached to a server.
type perfRecording struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

// startPerf attaches perf record (CPU clock samples with frame-pointer call
// graphs, user and kernel) to every thread of pid, writing to out; nothing
// when out is "". perf runs where the harness runs (the load generator's
// CPU); its sampling interrupts land on the server's CPU, so the CPU figures
// of a profiled run are slightly above those of an unprofiled one.
func startPerf(pid int, out string) (*perfRecording, error) {
	if out == "" {
		return nil, nil
	}
	var buf bytes.Buffer
	cmd := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-F", "4999", "-g",
		"-p", strconv.Itoa(pid), "-o", out)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// perf needs a moment to open its events on every thread; samples
	// before the window are harmless, missing ones are not.
	time.Sleep(100 * time.Millisecond)
	return &perfRecording{cmd: cmd, out: &buf}, nil
}

// stop ends the recording (SIGINT makes perf write its file) and waits.
func (p *perfRecording) stop() error {
	if p == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	err := p.cmd.Wait()
	// perf record writes its file, then re-raises the SIGINT it caught.
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(p.out.String()))
	}
	return nil
}
