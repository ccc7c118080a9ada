package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// agg is the per-round median of one server, scenario and client count.
type agg struct {
	n          int // rounds
	thr        float64
	p50, p99   float64 // ms
	cpu        float64 // µs/req
	srv, lg    float64 // core use
	other      float64 // other processes on the server's CPU
	steal      float64
	errors     int64
	firstError string
}

func (res *results) agg(server, scenario string, clients int) (agg, bool) {
	rs := res.runs[key{server, scenario, clients}]
	if len(rs) == 0 {
		return agg{}, false
	}
	var thr, p50, p99, cpu, srv, lg, other, steal []float64
	a := agg{n: len(rs)}
	for _, r := range rs {
		thr = append(thr, r.Throughput)
		p50 = append(p50, ms(r.P50))
		p99 = append(p99, ms(r.P99))
		cpu = append(cpu, r.CPUPerReq)
		srv = append(srv, r.SrvUtil)
		lg = append(lg, r.LGUtil)
		other = append(other, r.OtherUtil)
		steal = append(steal, r.StealUtil)
		a.errors += r.Errors
		if a.firstError == "" {
			a.firstError = r.FirstError
		}
	}
	a.thr, a.p50, a.p99 = median(thr), median(p50), median(p99)
	a.cpu, a.srv, a.lg = median(cpu), median(srv), median(lg)
	a.other, a.steal = median(other), median(steal)
	return a, true
}

// paired returns the median over rounds of f(num's run) ÷ f(den's run of
// the same round), for one scenario and client count. Runs of one round are
// close together in time, so the ratio of a pair is less exposed to the
// machine's changing load than a ratio of medians.
func (res *results) paired(num, den, scenario string, clients int, f func(loadResult) float64) float64 {
	dens := map[int]float64{}
	for _, r := range res.runs[key{den, scenario, clients}] {
		dens[r.Round] = f(r)
	}
	var rs []float64
	for _, r := range res.runs[key{num, scenario, clients}] {
		if d, ok := dens[r.Round]; ok && d > 0 {
			rs = append(rs, f(r)/d)
		}
	}
	return median(rs)
}

func cpuOf(r loadResult) float64 { return r.CPUPerReq }
func thrOf(r loadResult) float64 { return r.Throughput }
func p99Of(r loadResult) float64 { return ms(r.P99) }

func fmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2fx", x)
}

func (res *results) server(name string) *server {
	for _, s := range res.servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (res *results) measured(name string) bool {
	s := res.server(name)
	return s != nil && s.Skip == ""
}

func (res *results) markdown() string {
	var b strings.Builder
	cfg := res.cfg
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# mcpbench results\n\n")
	p("- Date: %s\n", res.env.Date)
	p("- `uname -a`: `%s`\n", res.env.Uname)
	p("- CPU: %s (%d CPUs available)\n", res.env.CPU, res.env.NumCPU)
	p("- Go: `%s` (servers); harness %s\n", res.env.GoVersion, res.env.HarnessGo)
	p("- Pinning: %s\n", res.env.Pinning)
	p("- Load: %v measured after %v warm-up per run; clients %v (one keep-alive HTTP/1.1 connection each); %d interleaved round(s) over the servers, medians reported; every response verified\n",
		cfg.duration, cfg.warmup, cfg.clients, cfg.rounds)
	p("- Cold start: exec to first correct answer, median of %d runs per server (interleaved)\n\n", cfg.coldRuns)

	// Servers.
	p("## Servers\n\n")
	p("| server | implementation | binary (MiB, stripped) | peak RSS (MiB) | cold start wall (ms) | cold start CPU (ms) | cold-start probe | 2026-07-28 | 2025-11-25 | SIGTERM exit |\n")
	p("|---|---|--:|--:|--:|--:|---|---|---|---|\n")
	for _, s := range res.servers {
		if s.Skip != "" {
			p("| %s | %s | – | – | – | – | – | – | – | %s |\n", s.Name, s.Descr, cell(s.Skip))
			continue
		}
		probe := "server/discover"
		if !s.Modern {
			probe = "legacy initialize"
		}
		exit := fmt.Sprintf("clean (%d/%d)", s.CleanExits, s.CleanExits+len(s.UncleanExit))
		if len(s.UncleanExit) > 0 {
			exit = fmt.Sprintf("**unclean %d/%d**: %s", len(s.UncleanExit), s.CleanExits+len(s.UncleanExit), cell(s.UncleanExit[0]))
		}
		p("| %s | %s | %.2f | %s | %s | %s | %s | %s | %s | %s |\n", s.Name, s.Descr, mib(s.Size),
			num(median(res.rss[s.Name]), 1), num(median(res.coldWall[s.Name]), 1), num(median(res.coldCPU[s.Name]), 1),
			probe, yesNo(s.Modern), yesNo(s.Legacy), exit)
	}
	p("\n")

	// Per scenario.
	for _, sc := range res.scenarios {
		p("## %s — %s\n\n", sc.Name, sc.Descr)
		p("| server | clients | req/s | p50 (ms) | p99 (ms) | server CPU (µs/req) | CPU/req ÷ floor | req/s ÷ floor | server core use | loadgen core use | other load on server CPU | errors |\n")
		p("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range cfg.clients {
			_, haveFloor := res.agg("floor", sc.Name, c)
			for _, s := range res.servers {
				a, ok := res.agg(s.Name, sc.Name, c)
				if !ok {
					why := "not measured"
					switch {
					case s.Skip != "":
						why = "skipped"
					case sc.MRTR && s.Name != "mcpfn":
						why = "n/a: mcpfn's ask tool only"
					case !supports(s, sc) && !sc.Legacy:
						why = "n/a: does not answer 2026-07-28"
					case !supports(s, sc):
						why = "n/a: does not answer 2025-11-25"
					}
					p("| %s | %d | %s | | | | | | | | | |\n", s.Name, c, why)
					continue
				}
				cr, tr := "–", "–"
				if haveFloor {
					cr = fmtRatio(res.paired(s.Name, "floor", sc.Name, c, cpuOf))
					tr = fmtRatio(res.paired(s.Name, "floor", sc.Name, c, thrOf))
				}
				errs := "0"
				if a.errors > 0 {
					errs = fmt.Sprintf("**%d** (%s)", a.errors, cell(a.firstError))
				}
				p("| %s | %d | %.0f | %.3f | %.3f | %.1f | %s | %s | %.0f%% | %.0f%% | %.0f%% | %s |\n",
					s.Name, c, a.thr, a.p50, a.p99, a.cpu, cr, tr, 100*a.srv, 100*a.lg, 100*a.other, errs)
			}
		}
		p("\n")
	}

	// mcpfn vs mcp-go and the targets.
	p("## mcpfn vs mcp-go\n\n")
	if !res.measured("mcpfn") || !res.measured("mcpgo") {
		why := "mcpfn was not measured"
		if s := res.server("mcpfn"); s != nil && s.Skip != "" {
			why = "mcpfn " + s.Skip
		} else if !res.measured("mcpgo") {
			why = "mcp-go was not measured"
		}
		p("Not available: %s.\n\n", why)
	} else {
		p("| scenario | clients | req/s: mcpfn ÷ mcp-go | p99: mcpfn ÷ mcp-go | CPU/req: mcpfn ÷ mcp-go |\n|---|--:|--:|--:|--:|\n")
		for _, sc := range res.scenarios {
			for _, c := range cfg.clients {
				_, ok1 := res.agg("mcpfn", sc.Name, c)
				_, ok2 := res.agg("mcpgo", sc.Name, c)
				if !ok1 || !ok2 {
					continue
				}
				pr := func(f func(loadResult) float64) string { return fmtRatio(res.paired("mcpfn", "mcpgo", sc.Name, c, f)) }
				p("| %s | %d | %s | %s | %s |\n", sc.Name, c, pr(thrOf), pr(p99Of), pr(cpuOf))
			}
		}
		p("\n")
	}
	res.targets(p)

	if len(res.notes) > 0 || res.totalErrors() > 0 {
		p("## Problems\n\n")
		if n := res.totalErrors(); n > 0 {
			p("- **This run had %d failed requests**; see the errors columns. Its numbers are not valid.\n", n)
		}
		for _, n := range res.notes {
			p("- %s\n", n)
		}
		p("\n")
	}
	var maxOther, maxSteal float64
	for k := range res.runs {
		if a, ok := res.agg(k.server, k.scenario, k.clients); ok {
			maxOther, maxSteal = max(maxOther, a.other), max(maxSteal, a.steal)
		}
	}
	p("## Notes\n\n")
	if maxOther > 0.10 || maxSteal > 0.05 {
		p("- **The machine was not quiet**: other processes used up to %.0f%% of the server's CPU (median per row), hypervisor steal up to %.0f%%. Throughput and latency suffer from that; server CPU per request much less.\n", 100*maxOther, 100*maxSteal)
	}
	p("- Ratios (÷ floor, mcpfn ÷ mcp-go, targets) are medians over rounds of the ratio within each round, whose runs of a scenario are adjacent in time; absolute numbers are medians over rounds.\n")
	p("- Server CPU/request = (utime+stime of the server process over the measured window, from /proc/<pid>/stat, 10 ms ticks) ÷ requests completed in the window. \"server core use\" is that CPU time ÷ window: near 100%% means the pinned server core was saturated; well below means the load generator or latency bound the throughput.\n")
	p("- \"other load on server CPU\" = busy time of the server's CPU in /proc/stat minus the server's own CPU time, ÷ window (other processes, interrupts).\n")
	p("- Latency is per request, from writing the request to reading the full response (verification excluded).\n")
	p("- Cold start CPU sums /proc/<pid>/task/*/schedstat at the first answer; wall time and CPU include the `taskset` exec when pinning.\n")
	for _, s := range res.servers {
		for _, pr := range s.Problems {
			p("- %s: %s\n", s.Name, pr)
		}
	}
	p("\n")

	var samples []string
	for _, s := range res.servers {
		for _, sm := range s.Samples {
			samples = append(samples, fmt.Sprintf("**%s — %s**\n\n```http\n%s\n```\n\n```\n%s\n```\n", s.Name, sm.Title, sm.Request, sm.Response))
		}
	}
	if len(samples) > 0 {
		p("<details><summary>Sample exchanges from the conformance check</summary>\n\n%s\n</details>\n", strings.Join(samples, "\n"))
	}
	return b.String()
}

// targets prints the mcpfn targets: CPU per modern tools/call add ≤ 1.5x the
// floor, throughput at 64 clients ≥ 1.7x mcp-go.
func (res *results) targets(p func(string, ...any)) {
	const cpuTarget, thrTarget = 1.5, 1.7
	var lines []string
	for _, c := range res.cfg.clients {
		floor, ok := res.agg("floor", "add", c)
		if !ok {
			continue
		}
		line := fmt.Sprintf("- CPU per modern tools/call add at %d clients ≤ %.1fx floor = **≤ %.1f µs/req** (floor %.1f)", c, cpuTarget, cpuTarget*floor.cpu, floor.cpu)
		if f, ok := res.agg("mcpfn", "add", c); ok {
			r := res.paired("mcpfn", "floor", "add", c, cpuOf)
			line += fmt.Sprintf(": mcpfn %.1f µs/req, %s floor → %s", f.cpu, fmtRatio(r), passFail(r <= cpuTarget))
		}
		lines = append(lines, line)
	}
	for _, c := range res.cfg.clients {
		if c != 64 {
			continue
		}
		g, ok := res.agg("mcpgo", "add", c)
		if !ok {
			continue
		}
		line := fmt.Sprintf("- Throughput of modern tools/call add at 64 clients ≥ %.1fx mcp-go = **≥ %.0f req/s** (mcp-go %.0f)", thrTarget, thrTarget*g.thr, g.thr)
		if f, ok := res.agg("mcpfn", "add", c); ok {
			r := res.paired("mcpfn", "mcpgo", "add", c, thrOf)
			line += fmt.Sprintf(": mcpfn %.0f req/s, %s mcp-go → %s", f.thr, fmtRatio(r), passFail(r >= thrTarget))
		}
		lines = append(lines, line)
	}
	for _, c := range res.cfg.clients {
		floor, ok := res.agg("floor", "legacy-add", c)
		f, ok2 := res.agg("mcpfn", "legacy-add", c)
		if !ok || !ok2 {
			continue
		}
		r := res.paired("mcpfn", "floor", "legacy-add", c, cpuOf)
		lines = append(lines, fmt.Sprintf("- CPU per legacy tools/call add (2025-11-25, session on the memory store) at %d clients ≤ %.1fx floor (%.1f µs): mcpfn %.1f µs/req, %s floor → %s",
			c, cpuTarget, floor.cpu, f.cpu, fmtRatio(r), passFail(r <= cpuTarget)))
	}
	if line, ok := res.eraBound(); ok {
		lines = append(lines, line)
	}
	if g, ok := res.agg("mcpgo", "add", 64); ok {
		if f, ok := res.agg("mcpfn", "add", 64); ok {
			lines = append(lines, fmt.Sprintf("- p99 latency of modern tools/call add at 64 clients ≤ mcp-go's (%.2f ms): mcpfn %.2f ms → %s",
				g.p99, f.p99, passFail(f.p99 <= g.p99)))
		}
	}
	if fl, ok := res.coldCPU["floor"]; ok && len(fl) > 0 {
		if m, ok := res.coldCPU["mcpfn"]; ok && len(m) > 0 {
			r := median(m) / median(fl)
			lines = append(lines, fmt.Sprintf("- Cold-start CPU (exec to first answered server/discover, median) ≤ 1.2x floor (%.2f ms): mcpfn %.2f ms, %.2fx → %s",
				median(fl), median(m), r, passFail(r <= 1.2)))
		}
	}
	if fl, ok := res.rss["floor"]; ok && len(fl) > 0 {
		if m, ok := res.rss["mcpfn"]; ok && len(m) > 0 {
			lines = append(lines, fmt.Sprintf("- Peak RSS (64 clients included) ≤ floor + 4 MiB (%.1f MiB): mcpfn %.1f MiB → %s",
				median(fl)+4, median(m), passFail(median(m) <= median(fl)+4)))
		}
	}
	const mrtrTarget = 2.2
	for _, c := range res.cfg.clients {
		one, ok1 := res.agg("mcpfn", "add", c)
		r1, ok2 := res.agg("mcpfn", "mrtr-1", c)
		r2, ok3 := res.agg("mcpfn", "mrtr-2", c)
		if !ok1 || !ok2 || !ok3 || one.cpu == 0 {
			continue
		}
		r := (r1.cpu + r2.cpu) / one.cpu
		lines = append(lines, fmt.Sprintf("- A two-round MRTR tools/call (ask: round 1 %.1f + round 2 %.1f µs) at %d clients ≤ %.1fx the CPU of a one-round tools/call (add, %.1f µs): %.2fx → %s",
			r1.cpu, r2.cpu, c, mrtrTarget, one.cpu, r, passFail(r <= mrtrTarget)))
	}
	if size := func(n string) int64 {
		for _, l := range res.lambda {
			if l.Name == n {
				return l.Bytes
			}
		}
		return 0
	}; size("gosdk") > 0 && size("mcpfn") > 0 {
		r := float64(size("mcpfn")) / float64(size("gosdk"))
		line := fmt.Sprintf("- Lambda bootstrap (stripped, linux/arm64) no larger than the same tool on go-sdk + aws-lambda-go (%.2f MiB): examples/lambda %.2f MiB, %.2fx → %s",
			mib(size("gosdk")), mib(size("mcpfn")), r, passFail(r <= 1))
		if c := size("mcpfn-core"); c > 0 {
			rc := float64(c) / float64(size("gosdk"))
			line += fmt.Sprintf("; with go-sdk's feature set (core + adapters/lambda, no AWS SDK clients) %.2f MiB, %.2fx → %s", mib(c), rc, passFail(rc <= 1))
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		p("## Targets for mcpfn (on this machine)\n\n%s\n\n", strings.Join(lines, "\n"))
	}
	if len(res.lambda) > 0 {
		p("## Lambda bootstraps (stripped, linux/arm64, -tags lambda.norpc)\n\n| build | what | size (MiB) |\n|---|---|--:|\n")
		for _, l := range res.lambda {
			if l.Err != "" {
				p("| %s | %s | build failed: %.200s |\n", l.Name, l.Descr, l.Err)
				continue
			}
			p("| %s | %s | %.2f |\n", l.Name, l.Descr, mib(l.Bytes))
		}
		p("\n")
	}
}

// eraBound judges the project's bound on both eras: mcpfn's CPU per
// tools/call add at most 1.15x the floor's, modern and legacy, at every
// client count measured. It reports false when mcpfn was not measured.
func (res *results) eraBound() (string, bool) {
	const bound = 1.15
	var parts, counts []string
	pass, judged, missing := true, false, false
	for _, c := range res.cfg.clients {
		counts = append(counts, strconv.Itoa(c))
	}
	for _, sc := range []struct{ name, era string }{{"add", "modern"}, {"legacy-add", "legacy"}} {
		var rs []string
		for _, c := range res.cfg.clients {
			_, okFloor := res.agg("floor", sc.name, c)
			_, okMCPFN := res.agg("mcpfn", sc.name, c)
			if !okFloor || !okMCPFN {
				rs, missing = append(rs, "–"), true
				continue
			}
			r := res.paired("mcpfn", "floor", sc.name, c, cpuOf)
			rs = append(rs, fmtRatio(r))
			pass = pass && r <= bound // false for NaN
			judged = true
		}
		parts = append(parts, sc.era+" "+strings.Join(rs, " / "))
	}
	if !judged {
		return "", false
	}
	verdict := passFail(pass)
	if missing && pass {
		verdict = "not judged: it needs both eras at every client count"
	}
	return fmt.Sprintf("- CPU per tools/call add ≤ %.2fx floor in both eras (the project's bound), at %s clients: %s → %s",
		bound, strings.Join(counts, " / "), strings.Join(parts, ", "), verdict), true
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "**FAIL**"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func num(x float64, prec int) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

// cell makes s safe for a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
