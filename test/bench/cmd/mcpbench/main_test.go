package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestQuantileMedian(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if q := quantile(d, 0.5); q != 50 {
		t.Errorf("p50 %v", q)
	}
	if q := quantile(d, 0.99); q != 99 {
		t.Errorf("p99 %v", q)
	}
	if q := quantile(d[:1], 0.99); q != 1 {
		t.Errorf("p99 of one %v", q)
	}
	if q := quantile(nil, 0.5); q != 0 {
		t.Errorf("empty %v", q)
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median %v", m)
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags([]string{"-quick", "-rounds", "2", "-clients", "1, 8", "-scenarios", "add,discover"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.duration != time.Second || cfg.warmup != 300*time.Millisecond || cfg.coldRuns != 3 {
		t.Errorf("quick defaults not applied: %+v", cfg)
	}
	if cfg.rounds != 2 {
		t.Errorf("explicit -rounds overridden by -quick: %d", cfg.rounds)
	}
	if len(cfg.clients) != 2 || cfg.clients[1] != 8 || len(cfg.scenarios) != 2 {
		t.Errorf("lists: %v %v", cfg.clients, cfg.scenarios)
	}
	cfg, err = parseFlags(nil)
	if err != nil || cfg.duration != 5*time.Second || cfg.rounds != 3 || cfg.coldRuns != 10 || len(cfg.servers) != 4 {
		t.Errorf("defaults: %+v %v", cfg, err)
	}
	for _, bad := range [][]string{{"-clients", "0"}, {"-clients", ""}, {"-rounds", "0"}, {"extra"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestScenarios(t *testing.T) {
	t.Parallel()
	for _, n := range scenarioNames {
		sc, err := makeScenario(n, 10)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Legacy == sc.Call.Modern {
			t.Errorf("%s: legacy %v modern %v", n, sc.Legacy, sc.Call.Modern)
		}
	}
	if _, err := makeScenario("nope", 1); err == nil {
		t.Error("unknown scenario accepted")
	}
}

func fakeResults(withMCPFN bool) *results {
	cfg, _ := parseFlags([]string{"-quick"})
	res := &results{cfg: cfg, runs: map[key][]loadResult{}, rss: map[string][]float64{}, coldWall: map[string][]float64{}, coldCPU: map[string][]float64{}}
	res.servers = knownServers(".", "../..")
	for _, n := range []string{"add", "legacy-add"} {
		sc, _ := makeScenario(n, 10)
		res.scenarios = append(res.scenarios, sc)
	}
	perf := map[string][2]float64{"floor": {40000, 20}, "gosdk": {3000, 300}, "mcpgo": {10000, 80}, "mcpfn": {30000, 25}}
	for _, s := range res.servers {
		if s.Name == "mcpfn" && !withMCPFN {
			s.Skip = "skipped: not there"
			continue
		}
		s.Modern, s.Legacy, s.Size = true, s.Name != "gosdk", 8<<20
		s.CleanExits = 4
		res.rss[s.Name] = []float64{10, 12}
		res.coldWall[s.Name] = []float64{3, 4, 5}
		res.coldCPU[s.Name] = []float64{2, 3, 4}
		for _, sc := range res.scenarios {
			if !supports(s, sc) {
				continue
			}
			for _, c := range cfg.clients {
				p := perf[s.Name]
				res.runs[key{s.Name, sc.Name, c}] = []loadResult{{Throughput: p[0], CPUPerReq: p[1], P50: time.Millisecond, P99: 5 * time.Millisecond, SrvUtil: 0.95}}
			}
		}
	}
	return res
}

func TestReportWithoutMCPFN(t *testing.T) {
	t.Parallel()
	md := fakeResults(false).markdown()
	for _, want := range []string{
		"| floor | 16 | 40000 |", "| mcpgo | 64 | 10000 |", "| 4.00x |", // mcpgo CPU/req ÷ floor = 80/20
		"Not available: mcpfn skipped: not there",
		"≤ 30.0 µs/req", // 1.5 × floor 20
		"≥ 17000 req/s", // 1.7 × mcp-go 10000
		"n/a: does not answer 2025-11-25",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "PASS") || strings.Contains(md, "FAIL") {
		t.Error("targets judged without mcpfn")
	}
}

func TestReportWithMCPFN(t *testing.T) {
	t.Parallel()
	md := fakeResults(true).markdown()
	for _, want := range []string{
		"mcpfn 25.0 µs/req, 1.25x floor → PASS",
		"mcpfn 30000 req/s, 3.00x mcp-go → PASS",
		"≤ 1.15x floor in both eras (the project's bound), at 16 / 64 clients: modern 1.25x / 1.25x, legacy 1.25x / 1.25x → **FAIL**",
		"| add | 64 | 3.00x | 1.00x | 0.31x |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestReportErrors(t *testing.T) {
	t.Parallel()
	res := fakeResults(false)
	k := key{"floor", "add", 16}
	res.runs[k][0].Errors = 3
	res.runs[k][0].FirstError = "add: wrong | sum"
	md := res.markdown()
	if !strings.Contains(md, "**3** (add: wrong \\| sum)") || !strings.Contains(md, "This run had 3 failed requests") {
		t.Errorf("errors not reported:\n%s", md)
	}
}

func TestMCPFNSkippedWhenMissing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var s *server
	for _, x := range knownServers(".", root) {
		if x.Name == "mcpfn" {
			s = x
		}
	}
	s.build(t.TempDir(), true)
	if s.Bin != "" || !strings.Contains(s.Skip, "does not exist yet") {
		t.Errorf("bin %q skip %q", s.Bin, s.Skip)
	}
}

func TestPairedRatioAndFail(t *testing.T) {
	t.Parallel()
	res := fakeResults(true)
	floor := []float64{10, 20, 30}
	mcpfn := []float64{20, 40, 90} // per-round ratios 2, 2, 3: median 2 (ratio of medians would be 2 too, but of pairs)
	res.runs[key{"floor", "add", 16}] = nil
	res.runs[key{"mcpfn", "add", 16}] = nil
	for i := range floor {
		res.runs[key{"floor", "add", 16}] = append(res.runs[key{"floor", "add", 16}], loadResult{Round: i + 1, CPUPerReq: floor[i], Throughput: 1})
		res.runs[key{"mcpfn", "add", 16}] = append(res.runs[key{"mcpfn", "add", 16}], loadResult{Round: i + 1, CPUPerReq: mcpfn[i], Throughput: 1})
	}
	if r := res.paired("mcpfn", "floor", "add", 16, cpuOf); r != 2 {
		t.Errorf("paired ratio %v, want 2", r)
	}
	md := res.markdown()
	if !strings.Contains(md, "mcpfn 40.0 µs/req, 2.00x floor → **FAIL**") {
		t.Errorf("failing target not reported:\n%s", md)
	}
	if r := res.paired("mcpfn", "nobody", "add", 16, cpuOf); !math.IsNaN(r) {
		t.Errorf("ratio without pairs %v, want NaN", r)
	}
}

// TestMCPFNBuilds: the harness builds the repository's examples/bench (a
// layout change that breaks the build would otherwise only show as a
// skipped row in the report).
func TestMCPFNBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	var s *server
	for _, x := range knownServers(".", "../../../..") {
		if x.Name == "mcpfn" {
			s = x
		}
	}
	s.build(t.TempDir(), true)
	if s.Bin == "" {
		t.Fatalf("examples/bench did not build: %s", s.Skip)
	}
}

func TestReportEraBound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name           string
		modern, legacy float64 // mcpfn's CPU µs/req; the floor's is 20
		want           string
	}{
		{"both under", 22, 22.6, "modern 1.10x / 1.10x, legacy 1.13x / 1.13x → PASS"},
		{"legacy over", 22, 23.4, "modern 1.10x / 1.10x, legacy 1.17x / 1.17x → **FAIL**"},
		{"modern over", 23.4, 22, "modern 1.17x / 1.17x, legacy 1.10x / 1.10x → **FAIL**"},
		{"legacy not measured", 22, 0, "modern 1.10x / 1.10x, legacy – / – → not judged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := fakeResults(true)
			for _, n := range res.cfg.clients {
				set := func(sc string, cpu float64) {
					k := key{"mcpfn", sc, n}
					if cpu == 0 {
						delete(res.runs, k)
						return
					}
					for i := range res.runs[k] {
						res.runs[k][i].CPUPerReq = cpu
					}
				}
				set("add", c.modern)
				set("legacy-add", c.legacy)
			}
			line, ok := res.eraBound()
			if !ok || !strings.Contains(line, c.want) {
				t.Errorf("eraBound() = %q, %v; want it to contain %q", line, ok, c.want)
			}
		})
	}
	if line, ok := fakeResults(false).eraBound(); ok {
		t.Errorf("judged without mcpfn: %q", line)
	}
}
