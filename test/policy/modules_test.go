package policy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

// officialSDKModules is the length of `go list -m all` of a module whose
// main serves mcp.NewServer of the official Go SDK
// (github.com/modelcontextprotocol/go-sdk v1.8.0) through
// mcp.NewStreamableHTTPHandler, measured as in userModule
// (docs/design.md, "Module layout"). A core + nethttp user must not inherit
// more.
const officialSDKModules = 14

// The modules of this repository a user may require, with their directory.
var ourModules = map[string]string{
	module:                            ".",
	module + "/adapters/lambda":       "adapters/lambda",
	module + "/adapters/gcf":          "adapters/gcf",
	module + "/store/dynamo":          "store/dynamo",
	module + "/store/secretsmanager":  "store/secretsmanager",
	module + "/auth":                  "auth",
	module + "/otel":                  "otel",
	module + "/examples":              "examples",
	module + "/test":                  "test",
	module + "/test/bench":            "test/bench",
	module + "/test/clientbench":      "test/clientbench",
	module + "/test/otel":             "test/otel",
	module + "/tools/release":         "tools/release",
	module + "/tools/tfcheck/awstrim": "tools/tfcheck/awstrim",

	module + "/adapters/lambda/taskrunner": "adapters/lambda/taskrunner",
}

// goJSON runs a go command that prints JSON in dir and decodes it into v.
func goJSON(t *testing.T, dir string, v any, args ...string) {
	t.Helper()
	out := goCmd(t, dir, args...)
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
}

// goCmd runs the go command in dir outside any workspace and returns its
// standard output.
func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %v in %s: %v\n%s", args, dir, err, stderr.Bytes())
	}
	return out
}

type goMod struct {
	Module  struct{ Path string }
	Require []struct {
		Path     string
		Version  string
		Indirect bool
	}
	Replace []struct {
		Old struct{ Path string }
		New struct{ Path string }
	}
}

// TestModuleLayout checks the files that define the module graph: go.work
// uses every go.mod of the repository, the root go.mod requires only what
// core needs (with module graph pruning, every requirement of the root
// go.mod reaches every user's `go list -m all`), and every other module
// replaces the modules of this repository it requires with their directory,
// so that it builds from the working tree with GOWORK=off too.
func TestModuleLayout(t *testing.T) {
	t.Parallel()
	root := repo.Root(t)

	var work struct{ Use []struct{ DiskPath string } }
	goJSON(t, root, &work, "work", "edit", "-json", filepath.Join(root, "go.work"))
	used := map[string]bool{}
	for _, u := range work.Use {
		used[filepath.ToSlash(filepath.Clean(u.DiskPath))] = true
	}
	found := goModDirs(t, root)
	for _, dir := range found {
		if !used[dir] {
			t.Errorf("%s/go.mod is not in go.work's use list: add it (go work use ./%s)", dir, dir)
		}
	}
	for dir := range used {
		if !slices.Contains(found, dir) {
			t.Errorf("go.work uses %s, which has no go.mod", dir)
		}
	}
	if len(found) < len(ourModules) {
		t.Errorf("found %d go.mod files (%v), want at least the %d modules of the layout", len(found), found, len(ourModules))
	}

	for path, dir := range ourModules {
		var m goMod
		goJSON(t, filepath.Join(root, dir), &m, "mod", "edit", "-json")
		if m.Module.Path != path {
			t.Errorf("%s/go.mod: module %s, want %s", dir, m.Module.Path, path)
		}
		replaced := map[string]string{}
		for _, r := range m.Replace {
			replaced[r.Old.Path] = r.New.Path
		}
		for _, r := range m.Require {
			if path == module {
				if _, ok := coreModules[r.Path]; !ok {
					t.Errorf("the root go.mod requires %s, which every user would inherit: only core's "+
						"dependencies (coreModules) belong there; move what needs it to a module of its own", r.Path)
				}
				continue
			}
			if odir, ours := ourModules[r.Path]; ours {
				rel, err := filepath.Rel(filepath.Join(root, dir), filepath.Join(root, odir))
				if err != nil {
					t.Fatal(err)
				}
				if got := replaced[r.Path]; filepath.Clean(got) != rel {
					t.Errorf("%s/go.mod requires %s without `replace %s => %s` (has %q)", dir, r.Path, r.Path, rel, got)
				}
			}
		}
	}
}

// userModule writes a throwaway module under a temporary directory whose
// main imports imports, with the modules of this repository replaced by the
// working tree and go.sum seeded from the repository's, tidies it and
// returns its directory and the module paths of `go list -m all` (the main
// module excluded). requires pins third-party modules as "path@version".
func userModule(t *testing.T, imports []string, requires ...string) (string, []string) {
	t.Helper()
	root := repo.Root(t)
	dir := t.TempDir()
	var mod strings.Builder
	mod.WriteString("module example.com/user\n\ngo 1.26\n\n")
	for path, mdir := range ourModules {
		if strings.HasPrefix(path, module) {
			mod.WriteString("replace " + path + " => " + filepath.Join(root, mdir) + "\n")
		}
	}
	for _, r := range requires {
		p, v, _ := strings.Cut(r, "@")
		mod.WriteString("require " + p + " " + v + "\n")
	}
	for _, imp := range imports {
		if strings.HasPrefix(imp, module) {
			var best string
			for path := range ourModules {
				if (imp == path || strings.HasPrefix(imp, path+"/")) && len(path) > len(best) {
					best = path
				}
			}
			mod.WriteString("require " + best + " v0.0.0-00010101000000-000000000000\n")
		}
	}
	var main strings.Builder
	main.WriteString("package main\n\nimport (\n")
	for _, imp := range imports {
		main.WriteString("\t_ \"" + imp + "\"\n")
	}
	main.WriteString(")\n\nfunc main() {}\n")
	var sum []byte
	sums, _ := filepath.Glob(filepath.Join(root, "*", "*", "go.sum"))
	sums = append(sums, filepath.Join(root, "go.sum"), filepath.Join(root, "go.work.sum"), filepath.Join(root, "test", "go.sum"), filepath.Join(root, "examples", "go.sum"))
	for _, f := range sums {
		b, err := os.ReadFile(f)
		if err == nil {
			sum = append(sum, b...)
		}
	}
	for name, b := range map[string][]byte{"go.mod": []byte(mod.String()), "main.go": []byte(main.String()), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd(t, dir, "mod", "tidy")
	var mods []string
	for _, line := range strings.Split(strings.TrimSpace(string(goCmd(t, dir, "list", "-m", "all"))), "\n")[1:] {
		mods = append(mods, strings.Fields(line)[0])
	}
	return dir, mods
}

// added returns the modules of b that are not in a.
func added(a, b []string) []string {
	var out []string
	for _, m := range b {
		if !slices.Contains(a, m) {
			out = append(out, m)
		}
	}
	return out
}

// pseudoVersion matches Go module pseudo-versions (which carry a "-" but are
// not pre-releases).
var pseudoVersion = regexp.MustCompile(`^v[0-9]+\.(0\.0-|\d+\.\d+-([^+]*\.)?0\.)\d{14}-[A-Za-z0-9]+(\+[0-9A-Za-z-]+)?$`)

// requirement returns the version with which the go.mod of dir requires
// path.
func requirement(t *testing.T, dir, path string) string {
	t.Helper()
	var m goMod
	goJSON(t, filepath.Join(repo.Root(t), dir), &m, "mod", "edit", "-json")
	for _, r := range m.Require {
		if r.Path == path {
			return path + "@" + r.Version
		}
	}
	t.Fatalf("%s/go.mod does not require %s", dir, path)
	return ""
}

// TestUserModuleGraph builds throwaway user modules from the working tree
// and checks what they inherit (docs/design.md "Module
// layout"): a core + nethttp user lists no more modules than a user of the
// official SDK and links only core's dependencies, none of them a
// pre-release; a Lambda user adds aws-lambda-go and nothing else; a Cloud
// Functions user adds functions-framework's own graph; store users add
// their AWS service client and the SDK's core, not its config chain.
func TestUserModuleGraph(t *testing.T) {
	t.Parallel()
	coreNet := []string{module + "/core", module + "/adapters/nethttp"}
	dir, base := userModule(t, coreNet)

	t.Run("core+nethttp", func(t *testing.T) {
		if n := len(base) + 1; n > officialSDKModules {
			t.Errorf("a core + nethttp user lists %d modules in go list -m all, more than the official SDK's %d:\n%s",
				n, officialSDKModules, strings.Join(base, "\n"))
		}
		for _, m := range base {
			for _, f := range forbidden {
				if strings.HasPrefix(m, f) {
					t.Errorf("a core + nethttp user inherits %s", m)
				}
			}
			if strings.HasPrefix(m, "go.opentelemetry.io/") {
				t.Errorf("a core + nethttp user inherits %s: OpenTelemetry belongs to the otel module", m)
			}
			for _, bad := range []string{"github.com/hashicorp/", "github.com/zclconf/", "github.com/santhosh-tekuri/"} {
				if strings.HasPrefix(m, bad) {
					t.Errorf("a core + nethttp user inherits %s, which only tests need", m)
				}
			}
		}
		bin := filepath.Join(dir, "user")
		goCmd(t, dir, "build", "-o", bin, ".")
		linked := 0
		for _, line := range strings.Split(string(goCmd(t, dir, "version", "-m", bin)), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || f[0] != "dep" {
				continue
			}
			linked++
			if _, ok := coreModules[f[1]]; !ok {
				t.Errorf("a core + nethttp binary links %s %s, not one of core's modules %v", f[1], f[2], keys(coreModules))
			}
			if f[1] != module && strings.Contains(strings.SplitN(f[2], "+", 2)[0], "-") && !pseudoVersion.MatchString(f[2]) {
				t.Errorf("a core + nethttp binary links the pre-release %s %s", f[1], f[2])
			}
		}
		if linked < 3 {
			t.Errorf("go version -m lists %d dependencies: the check is not seeing the binary's modules", linked)
		}
	})

	t.Run("lambda", func(t *testing.T) {
		_, mods := userModule(t, []string{module + "/core", module + "/adapters/lambda"})
		got := added(base, mods)
		slices.Sort(got)
		if want := []string{"github.com/aws/aws-lambda-go", module + "/adapters/lambda"}; !slices.Equal(got, want) {
			t.Errorf("a Lambda user adds %v to a core + nethttp user's modules, want %v", got, want)
		}
	})

	t.Run("otel", func(t *testing.T) {
		_, mods := userModule(t, append(coreNet, module+"/otel"))
		got := added(base, mods)
		if !slices.Contains(got, "go.opentelemetry.io/otel") || !slices.Contains(got, module+"/otel") {
			t.Errorf("an otel user adds %v: the check is not seeing OpenTelemetry", got)
		}
	})

	t.Run("gcf", func(t *testing.T) {
		ff := "github.com/GoogleCloudPlatform/functions-framework-go"
		ffReq := requirement(t, "adapters/gcf", ff)
		_, mods := userModule(t, []string{module + "/core", module + "/adapters/gcf", ff + "/functions"})
		_, own := userModule(t, append(coreNet, ff+"/functions"), ffReq)
		got := added(own, mods)
		if !slices.Equal(got, []string{module + "/adapters/gcf"}) {
			t.Errorf("a Cloud Functions user inherits %v beyond functions-framework's own graph, want only %s/adapters/gcf", got, module)
		}
		if !slices.Contains(mods, ff) {
			t.Errorf("the gcf user module does not list %s: the check is not seeing it", ff)
		}
	})

	for _, c := range []struct{ pkg, service string }{
		{"store/dynamo", "github.com/aws/aws-sdk-go-v2/service/dynamodb"},
		{"store/secretsmanager", "github.com/aws/aws-sdk-go-v2/service/secretsmanager"},
	} {
		t.Run(c.pkg, func(t *testing.T) {
			_, mods := userModule(t, append(coreNet, module+"/"+c.pkg))
			got := added(base, mods)
			if !slices.Contains(got, c.service) {
				t.Errorf("a %s user does not list %s: the check is not seeing it", c.pkg, c.service)
			}
			for _, m := range got {
				switch {
				case m == module+"/"+c.pkg, m == c.service,
					m == "github.com/aws/aws-sdk-go-v2", m == "github.com/aws/smithy-go",
					strings.HasPrefix(m, "github.com/aws/aws-sdk-go-v2/internal/"),
					strings.HasPrefix(m, "github.com/aws/aws-sdk-go-v2/service/internal/"):
				default:
					t.Errorf("a %s user inherits %s: only %s and the SDK's core are allowed", c.pkg, m, c.service)
				}
			}
		})
	}
}
