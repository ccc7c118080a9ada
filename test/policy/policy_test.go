// Package policy_test enforces the package boundaries of STYLE.md §6.1
// (core depends only on the standard library, two schema libraries and a
// case-sensitive JSON binder;
// adapters and stores never depend on each other) and the module layout of
// docs/design.md ("Module layout"): what a user's module inherits.
package policy_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

const module = "github.com/mcpfn/mcpfn"

// coreModules are the exact modules core may depend on besides the standard
// library: the two schema libraries, go-json-experiment and their own
// dependencies.
var coreModules = map[string]string{
	module:                          "core itself",
	"github.com/invopop/jsonschema": "schema generation",
	// Validation uses the official Go SDK's validator: santhosh-tekuri's
	// compiles the metaschemas of five drafts at package init (6.4 ms and
	// 21k allocations on every cold start), which a serverless framework
	// cannot afford. The tests check messages against the official schemas
	// with the same validator, so that no test-only library reaches the
	// root go.mod (docs/design.md, "Module layout").
	"github.com/google/jsonschema-go":  "schema validation",
	"github.com/bahlo/generic-list-go": "dependency of invopop/jsonschema (via ordered-map)",
	"github.com/buger/jsonparser":      "dependency of invopop/jsonschema (via ordered-map)",
	"github.com/pb33f/ordered-map/v2":  "dependency of invopop/jsonschema",
	"go.yaml.in/yaml/v4":               "dependency of pb33f/ordered-map (the root go.mod raises it to a release)",
	// Typed handler input binds case-sensitively and refuses duplicate
	// names (docs/design.md, "Tools, arguments and results").
	"github.com/go-json-experiment/json": "case-sensitive binding of handler input",
}

// coreInternal are the packages of the module core may import, each a leaf
// (it imports nothing of the module): code core shares with a package that
// imports core, which core cannot import back.
var coreInternal = map[string]string{
	module + "/internal/mcpheader": "x-mcp-header declarations, read alike by core and client",
	module + "/internal/jsonwire":  "the JSON scanner and encoders core and package mcp share",
}

// coreShared are the packages of the module core may import that are not
// leaves: package mcp, the wire vocabulary core aliases and the client
// speaks, which may import only coreInternal packages of the module.
var coreShared = map[string]string{
	module + "/mcp": "the protocol's wire vocabulary, shared with package client",
}

// forbidden are prefixes that must never reach core, named so that a
// failure says why.
var forbidden = []string{
	"github.com/aws/", "github.com/GoogleCloudPlatform/", "cloud.google.com/", "github.com/lestrrat-go/",
	module + "/adapters", module + "/store", module + "/auth", module + "/internal", module + "/examples", module + "/test",
}

type pkg struct {
	path     string
	standard bool
	module   string
	deps     []string
}

// goWork runs the go command in root, in the workspace of go.work, and
// returns its standard output; a failure ends the test.
func goWork(t *testing.T, root string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// goList runs go list from the repository root, in the workspace of go.work
// (the pattern "work" lists the packages of every module), with a template
// producing path|standard|module|deps.
func goList(t *testing.T, args ...string) []pkg {
	t.Helper()
	out := goWork(t, repo.Root(t), append([]string{"list", "-f", `{{.ImportPath}}|{{.Standard}}|{{with .Module}}{{.Path}}{{end}}|{{join .Deps " "}}`}, args...)...)
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 {
			t.Fatalf("bad go list line %q", line)
		}
		p := pkg{path: f[0], standard: f[1] == "true", module: f[2]}
		if f[3] != "" {
			p.deps = strings.Fields(f[3])
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %v listed nothing", args)
	}
	return pkgs
}

// TestCoreDependencies checks go list -deps ./core.
func TestCoreDependencies(t *testing.T) {
	t.Parallel()
	pkgs := goList(t, "-deps", "./core")
	seen := map[string]bool{}
	for _, p := range pkgs {
		if p.standard {
			continue
		}
		if _, ok := coreShared[p.path]; ok {
			for _, d := range p.deps {
				if _, leaf := coreInternal[d]; strings.HasPrefix(d, module+"/") && !leaf {
					t.Errorf("%s, which core imports, imports %s of the module", p.path, d)
				}
			}
			continue
		}
		if _, ok := coreInternal[p.path]; ok {
			for _, d := range p.deps {
				if strings.HasPrefix(d, module+"/") {
					t.Errorf("%s, which core imports, imports %s of the module", p.path, d)
				}
			}
			continue
		}
		for _, f := range forbidden {
			if strings.HasPrefix(p.path, f) {
				t.Errorf("core depends on %s (forbidden prefix %s)", p.path, f)
			}
		}
		if _, ok := coreModules[p.module]; !ok {
			t.Errorf("core depends on %s of module %q, which is not allowed (allowed: the standard library and %v)", p.path, p.module, keys(coreModules))
		}
		if p.module == module && p.path != module+"/core" && !strings.HasPrefix(p.path, module+"/core/") {
			t.Errorf("core depends on %s of its own module", p.path)
		}
		seen[p.module] = true
	}
	// The check must see what it is about, or it proves nothing.
	for _, m := range []string{module, "github.com/invopop/jsonschema", "github.com/google/jsonschema-go"} {
		if !seen[m] {
			t.Errorf("go list -deps ./core does not list %s: the policy check is not seeing core's dependencies", m)
		}
	}
}

// TestAdapterAndStoreBoundaries checks, over the packages of every module,
// that adapters never import each other, store/ or auth/, and that stores
// never import adapters.
func TestAdapterAndStoreBoundaries(t *testing.T) {
	t.Parallel()
	pkgs := goList(t, "work")
	var adapters, stores int
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.path, module+"/")
		switch {
		case strings.HasPrefix(rel, "adapters/"):
			adapters++
			own := strings.SplitN(rel, "/", 3)[:2]
			ownPrefix := module + "/" + strings.Join(own, "/")
			for _, d := range p.deps {
				dr := strings.TrimPrefix(d, module+"/")
				if dr == d {
					continue
				}
				switch {
				case strings.HasPrefix(dr, "adapters/") && d != ownPrefix && !strings.HasPrefix(d, ownPrefix+"/"):
					t.Errorf("%s imports another adapter: %s", p.path, d)
				case strings.HasPrefix(dr, "store/"), dr == "store", strings.HasPrefix(dr, "auth/"), dr == "auth":
					t.Errorf("%s imports %s", p.path, d)
				}
			}
		case strings.HasPrefix(rel, "store/"):
			stores++
			for _, d := range p.deps {
				if strings.HasPrefix(d, module+"/adapters") || strings.HasPrefix(d, module+"/auth") {
					t.Errorf("%s imports %s", p.path, d)
				}
			}
		case rel == "core":
			for _, d := range p.deps {
				// core's own sub-packages (core/internal/...) are core.
				_, ok := coreInternal[d]
				if _, shared := coreShared[d]; shared {
					ok = true
				}
				if strings.HasPrefix(d, module+"/") && !strings.HasPrefix(d, module+"/core/") && !ok {
					t.Errorf("core imports %s", d)
				}
			}
		}
	}
	if adapters == 0 || stores == 0 {
		t.Fatalf("found %d adapter and %d store packages: the check is not seeing the tree", adapters, stores)
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestAuthDependencies: package auth imports only core, mcp (the wire
// vocabulary core aliases), jwx/v2 and the standard library (STYLE.md §6.1),
// and nothing of another platform reaches
// it through them. (That core never reaches jwx is TestCoreDependencies'
// forbidden prefix github.com/lestrrat-go/.)
func TestAuthDependencies(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, "./auth/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./auth/...: %v", err)
	}
	std := map[string]bool{}
	for _, p := range goList(t, "std") {
		std[p.path] = true
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 2)
		n++
		for _, imp := range strings.Fields(f[1]) {
			switch {
			case std[imp], imp == module+"/core", imp == module+"/mcp",
				strings.HasPrefix(imp, module+"/auth"),
				strings.HasPrefix(imp, "github.com/lestrrat-go/jwx/v2/"):
			default:
				t.Errorf("%s imports %s; auth may import only core, mcp, jwx/v2 and the standard library", f[0], imp)
			}
		}
	}
	if n == 0 {
		t.Fatal("go list ./auth/... listed nothing")
	}
	for _, p := range goList(t, "-deps", "./auth/...") {
		for _, f := range []string{"github.com/aws/", "github.com/GoogleCloudPlatform/", "cloud.google.com/",
			module + "/adapters", module + "/store", module + "/internal", module + "/examples", module + "/test"} {
			if _, ok := coreInternal[p.path]; strings.HasPrefix(p.path, f) && !ok {
				t.Errorf("auth depends on %s", p.path)
			}
		}
	}
}
