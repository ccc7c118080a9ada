// Command workersbench compares, in one run under the same pinned workerd,
// what a tools/call of `add` costs through mcpfn's Workers adapter against
// native net/http and against a TypeScript MCP server on the official
// TypeScript SDK, then profiles the size of the Worker's wasm.
//
//	go run ./test/workersbench          # the full run (a few minutes)
//	go run ./test/workersbench -quick   # a short run that checks it works
//
// The servers, measured in interleaved rounds (A B C D A B C D ...), each
// round starting every server afresh:
//
//	A workers-lazy    examples/workers in workerd; Go starts in the first request (default)
//	B workers-eager   the same with the text binding MCPFN_EAGER_START=1
//	C native          examples/calculator built natively, -addr 127.0.0.1:0
//	D ts-anchor       ts/worker.ts: @modelcontextprotocol/sdk's
//	                  WebStandardStreamableHTTPServerTransport, stateless, bundled
//	                  by esbuild into one ES module, in workerd
//
// Requests are real HTTP over loopback, sequential, on one keep-alive
// connection. Server CPU is the server process's user+system time from
// /proc (Linux only). See README.md for the table of the latest run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	quick := flag.Bool("quick", false, "a short run (2 rounds, 200 calls a window) that checks the harness works")
	rounds := flag.Int("rounds", 0, "interleaved rounds (default 7, 2 with -quick)")
	flag.Parse()
	cfg := fullConfig
	if *quick {
		cfg = quickConfig
	}
	if *rounds > 0 {
		cfg.Rounds = *rounds
	}
	if err := run(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "workersbench:", err)
		os.Exit(1)
	}
}

// run prepares everything, measures and writes the report (markdown) to
// out and the progress to log.
func run(cfg config, out, log io.Writer) error {
	if runtime.GOOS != "linux" {
		return errors.New("needs Linux (/proc)")
	}
	a, err := prepare(log)
	if a != nil && a.tmp != "" {
		defer os.RemoveAll(a.tmp)
	}
	if err != nil {
		return err
	}
	srvs, err := a.servers()
	if err != nil {
		return err
	}
	res, err := measure(cfg, srvs, log)
	if err != nil {
		return err
	}
	return report(out, cfg, a, res)
}

// stats is the median, min and max of some samples.
type stats struct{ med, lo, hi time.Duration }

func statsOf(ss []sample, f func(sample) time.Duration) stats {
	v := make([]time.Duration, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return stats{m, v[0], v[len(v)-1]}
}

// fmtStats formats in milliseconds with the given decimals.
func fmtStats(s stats, dec int) string {
	return fmt.Sprintf("%.*f (%.*f–%.*f)", dec, ms(s.med), dec, ms(s.lo), dec, ms(s.hi))
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func mb(n int64) string  { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }

func report(w io.Writer, cfg config, a *artifacts, res *results) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	wasmRaw, wasmGz, err := fileSizes(filepath.Join(a.workerDir, "app.wasm"))
	if err != nil {
		return err
	}
	tsRaw, tsGz, err := fileSizes(a.tsBundle)
	if err != nil {
		return err
	}
	natRaw, natGz, err := fileSizes(a.nativeBin)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	_ = host
	p("### workersbench, %s\n\n", time.Now().UTC().Format("2006-01-02"))
	p("%d interleaved rounds; a round starts each server afresh: one cold start, then %d warm-up calls and %d measured calls. "+
		"Medians (min–max over the rounds), milliseconds. workerd %s, %s, %d CPUs, %s.\n\n",
		cfg.Rounds, cfg.Warmup, cfg.Calls, workerdVersion(a.workerd), runtime.Version(), runtime.NumCPU(), runtime.GOARCH)
	anchor := res.servers[len(res.servers)-1].Name
	get := func(name string, f func(sample) time.Duration) stats { return statsOf(res.samples[name], f) }
	warmCPU := func(s sample) time.Duration { return s.warmCPU }
	p50 := func(s sample) time.Duration { return s.p50 }
	startCPU := func(s sample) time.Duration { return s.startCPU }
	startWall := func(s sample) time.Duration { return s.startWall }
	firstCPU := func(s sample) time.Duration { return s.firstCPU }
	firstWall := func(s sample) time.Duration { return s.firstWall }

	p("| | warm CPU/call | ×TS | warm p50 | ×TS | start-up CPU | start-up wall | 1st request CPU | 1st request latency | RSS after %d calls | artifact raw / gzip |\n", cfg.RSSCall)
	p("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.servers {
		art := fmt.Sprintf("wasm %s / %s", mb(wasmRaw), mb(wasmGz))
		switch {
		case strings.HasSuffix(s.Name, "native"):
			art = fmt.Sprintf("binary %s / %s", mb(natRaw), mb(natGz))
		case s.Name == anchor:
			art = fmt.Sprintf("JS %s / %s", mb(tsRaw), mb(tsGz))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Name,
			fmtStats(get(s.Name, warmCPU), 3), ratio(get(s.Name, warmCPU).med, get(anchor, warmCPU).med),
			fmtStats(get(s.Name, p50), 3), ratio(get(s.Name, p50).med, get(anchor, p50).med),
			fmtStats(get(s.Name, startCPU), 0), fmtStats(get(s.Name, startWall), 0),
			fmtStats(get(s.Name, firstCPU), 1), fmtStats(get(s.Name, firstWall), 1),
			mib(res.rss[s.Name]), art)
	}
	p("\n")
	for _, s := range res.servers {
		p("- %s: %s\n", s.Name, s.Desc)
	}
	p("\nStart-up is exec → listening (workerd's control-fd event; the calculator's printed URL): " +
		"for workerd, process start, config, compiling the worker's modules and evaluating its global scope. " +
		"1st request CPU is the CPU the first request adds after that (for A, starting Go). " +
		"Ratios are of medians to the TypeScript anchor.\n\n")

	// Targets: reported, never asserted.
	p("Targets (reported, not asserted):\n\n")
	p("| target | A workers-lazy | B workers-eager |\n|---|---|---|\n")
	tgt := func(name string, v time.Duration, lim time.Duration) string {
		ok := "met"
		if v > lim {
			ok = "missed"
		}
		return fmt.Sprintf("%.2f ms: %s", ms(v), ok)
	}
	tsWarm := get(anchor, warmCPU).med
	row := func(label string, f func(name string) string) {
		p("| %s | %s | %s |\n", label, f(res.servers[0].Name), f(res.servers[1].Name))
	}
	row(fmt.Sprintf("warm CPU/call ≤ 1.5× TS anchor (%.3f ms)", ms(tsWarm*3/2)), func(n string) string {
		v := get(n, warmCPU).med
		ok := "met"
		if v > tsWarm*3/2 {
			ok = "missed"
		}
		return fmt.Sprintf("%s: %s", ratio(v, tsWarm), ok)
	})
	row("cold first request ≤ 10 ms CPU after start-up", func(n string) string { return tgt(n, get(n, firstCPU).med, 10*time.Millisecond) })
	row("start-up ≤ 400 ms CPU", func(n string) string { return tgt(n, get(n, startCPU).med, 400*time.Millisecond) })
	row("wasm ≤ 8 MB raw", func(string) string {
		ok := "met"
		if wasmRaw > 8e6 {
			ok = "missed"
		}
		return fmt.Sprintf("%s: %s", mb(wasmRaw), ok)
	})

	// The size profile.
	pkgs, code, data, err := wasmProfile(a.wasmFull, a.wasmDeps)
	if err != nil {
		return fmt.Errorf("wasm profile: %w", err)
	}
	p("\n### Where the wasm goes\n\n")
	p("app.wasm %s raw, %s gzip: code %s, data %s. Code per package (function bodies of the code section, named by the name section of a build without -s -w):\n\n",
		mb(wasmRaw), mb(wasmGz), mb(code), mb(data))
	p("| # | package | code | share | functions | avoidable? |\n|---|---|---|---|---|---|\n")
	for i, k := range pkgs[:min(15, len(pkgs))] {
		p("| %d | %s | %s | %.1f%% | %d | %s |\n", i+1, k.Pkg, kb(k.Bytes), 100*float64(k.Bytes)/float64(code), k.Funcs, avoidable(k.Pkg).note)
	}
	groups := map[string]int64{}
	for _, k := range pkgs {
		if g := avoidable(k.Pkg); g.group != "" {
			groups[g.group] += k.Bytes
		}
	}
	p("\nAvoidable code, all packages summed by cause:\n\n| cause | code | share |\n|---|---|---|\n")
	var total int64
	for _, g := range groupOrder {
		if groups[g] > 0 {
			p("| %s | %s | %.1f%% |\n", g, kb(groups[g]), 100*float64(groups[g])/float64(code))
			total += groups[g]
		}
	}
	p("| total | %s | %.1f%% |\n", kb(total), 100*float64(total)/float64(code))
	return nil
}

func kb(n int64) string { return fmt.Sprintf("%d KB", (n+500)/1000) }

const (
	groupTLS    = "TLS, X.509 and public-key crypto (the package initialisation of crypto/tls and what it imports, which importing net/http links)"
	groupJSONv1 = "encoding/json v1 (a second JSON stack beside go-json-experiment)"
	groupSchema = "run-time schema derivation (invopop/jsonschema, go/ast+go/parser, yaml)"
)

var groupOrder = []string{groupTLS, groupJSONv1, groupSchema}

type verdict struct{ group, note string }

// avoidable says whether a package's code need not be in the Worker, and why.
func avoidable(pkg string) verdict {
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return true
			}
		}
		return false
	}
	switch {
	case has("crypto/tls", "crypto/x509", "crypto/ecdsa", "crypto/rsa", "crypto/ed25519", "crypto/ecdh",
		"crypto/elliptic", "crypto/internal/fips140/nistec", "crypto/internal/fips140/rsa", "crypto/internal/fips140/ecdsa",
		"crypto/internal/fips140/ed25519", "crypto/internal/fips140/ecdh", "crypto/internal/fips140/mlkem",
		"crypto/internal/fips140/bigmod", "crypto/internal/fips140/edwards25519", "crypto/internal/hpke", "crypto/mlkem",
		"crypto/internal/fips140/tls12", "crypto/internal/fips140/tls13", "crypto/internal/fips140/aes/gcm",
		"crypto/internal/fips140/aes", "crypto/internal/fips140/drbg", "crypto/internal/fips140/chacha20poly1305", "crypto/chacha20poly1305",
		"crypto/des", "crypto/rc4", "crypto/aes", "crypto/cipher", "crypto/md5", "crypto/sha1", "crypto/internal/fips140/sha3", "crypto/sha3",
		"encoding/asn1", "encoding/pem", "vendor/golang.org/x/crypto", "golang.org/x/crypto/cryptobyte",
		"vendor/golang.org/x/net/http2/hpack", "vendor/golang.org/x/net/idna", "vendor/golang.org/x/text"):
		return verdict{groupTLS, "yes: crypto package init linked by net/http's import of crypto/tls"}
	case has("math/big"):
		return verdict{"", "no: input validation (jsonschema-go checks numbers with big.Rat)"}
	case has("encoding/json"):
		return verdict{groupJSONv1, "yes: second JSON stack"}
	case has("github.com/invopop", "go/ast", "go/parser", "go/scanner", "go/token", "go/doc", "go/build",
		"gopkg.in/yaml.v3", "go.yaml.in/yaml", "github.com/pb33f/ordered-map", "github.com/goccy/go-yaml", "sigs.k8s.io/yaml", "github.com/wk8/go-ordered-map", "github.com/bahlo/generic-list-go", "github.com/buger/jsonparser", "github.com/mailru/easyjson"):
		return verdict{groupSchema, "yes: schema derivation at run time (invopop+go/parser+yaml)"}
	case has("runtime", "internal", "sync", "syscall"):
		return verdict{"", "no: Go runtime"}
	case has("github.com/mcpfn/mcpfn"):
		return verdict{"", "no: mcpfn"}
	case has("github.com/google/jsonschema-go"):
		return verdict{"", "no: input validation"}
	case has("github.com/go-json-experiment/json"):
		return verdict{"", "no: core's JSON"}
	case has("net/http", "net"):
		return verdict{"", "partly: net/http's types are the adapter's interface; its client, server and HTTP/2 are not used in the Worker"}
	case has("reflect"):
		return verdict{"", "no (JSON and schemas reflect)"}
	case has("regexp"):
		return verdict{"", "partly: who compiles regexps at start-up decides"}
	}
	return verdict{"", ""}
}

func workerdVersion(bin string) string {
	// …/workerd-VERSION/node_modules/.bin/workerd
	for d := bin; d != "/" && d != "."; d = filepath.Dir(d) {
		if v, ok := strings.CutPrefix(filepath.Base(d), "workerd-"); ok {
			return v
		}
	}
	return "?"
}
