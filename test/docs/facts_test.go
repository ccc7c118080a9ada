package docs_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

// TestReadmeSetUp keeps the README's "Set up" to the two commands a
// newcomer runs (the example server, every test) and names `make check` as
// the quick tier.
func TestReadmeSetUp(t *testing.T) {
	t.Parallel()
	s := section(readFile(t, "README.md"), "Set up")
	if s == "" {
		t.Fatal(`README.md has no "Set up" section`)
	}
	var cmds []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != "" {
			cmds = append(cmds, strings.TrimSpace(l))
		}
	}
	if want := []string{"go run ./examples/calculator", "make test"}; !slices.Equal(cmds, want) {
		t.Errorf("README Set up commands = %q, want exactly %q", cmds, want)
	}
	if strings.Contains(s, "```") {
		t.Error("README Set up holds a fenced block: its commands are the two indented ones")
	}
	if !strings.Contains(s, "`make check`") || !strings.Contains(s, "quick tier") {
		t.Error("README Set up does not name `make check` as the quick tier")
	}
}

// deprecated are the features 2026-07-28 deprecates (SEP-2577) and still
// serves, by the identifiers that promote them.
var deprecated = []string{"req.Log", "core.Sample", "core.SampleText", "core.ListRoots"}

// mentionsDeprecation reports whether a paragraph says the feature is
// deprecated in 2026-07-28 (SEP-2577).
func mentionsDeprecation(p string) bool {
	p = strings.Join(strings.Fields(p), " ")
	return strings.Contains(p, "deprecated") && strings.Contains(p, "SEP-2577")
}

// paragraphs splits Markdown or comment text at blank lines and list items.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "#") {
			flush()
		}
		if t != "" {
			cur = append(cur, l)
		}
	}
	flush()
	return out
}

// TestDeprecationsMentioned: wherever the README and core's documentation
// promote logging (req.Log), sampling (core.Sample) or roots
// (core.ListRoots), they say that 2026-07-28 deprecates them (SEP-2577)
// and that they are still served; so do the identifiers' doc comments.
func TestDeprecationsMentioned(t *testing.T) {
	t.Parallel()
	promoted := 0
	for _, f := range proseFiles(t) {
		for _, p := range paragraphs(readFile(t, f)) {
			for _, id := range deprecated {
				if strings.Contains(p, "`"+id) && !mentionsDeprecation(p) {
					t.Errorf("%s: a paragraph promotes %s without saying it is deprecated (2026-07-28, SEP-2577):\n%s", f, id, p)
				}
				if strings.Contains(p, "`"+id) {
					promoted++
				}
			}
		}
	}
	if promoted < 2 {
		t.Errorf("README.md promotes %d of %v: the check is not seeing them", promoted, deprecated)
	}

	fset := token.NewFileSet()
	dir := filepath.Join(repo.Root(t), "core")
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, f := range pkgs["core"].Files {
		files = append(files, f)
	}
	dp, err := doc.NewFromFiles(fset, files, module+"/core")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paragraphs(dp.Doc) {
		for _, id := range []string{"[Sample]", "[ListRoots]", "[Request.Log]"} {
			if strings.Contains(p, id) && !mentionsDeprecation(p) {
				t.Errorf("core/doc.go: a paragraph names %s without saying it is deprecated (2026-07-28, SEP-2577):\n%s", id, p)
			}
		}
	}
	want := map[string]bool{"Sample": false, "SampleText": false, "ListRoots": false, "Request.Log": false}
	check := func(name, text string) {
		if _, ok := want[name]; ok {
			want[name] = true
			if !mentionsDeprecation(text) {
				t.Errorf("the doc comment of core.%s does not say it is deprecated in 2026-07-28 (SEP-2577):\n%s", name, text)
			}
		}
	}
	for _, f := range dp.Funcs {
		check(f.Name, f.Doc)
	}
	for _, typ := range dp.Types {
		for _, f := range typ.Funcs {
			check(f.Name, f.Doc)
		}
		for _, m := range typ.Methods {
			check(typ.Name+"."+m.Name, m.Doc)
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("core has no %s: the check is not seeing it", name)
		}
	}
}

// TestMakeConformanceReplicas: `make conformance ADAPTER=replicas` runs both
// revisions through the replicas, as the README says; other adapters run
// the one REV (2026-07-28 by default), and REV still overrides.
func TestMakeConformanceReplicas(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ADAPTER=replicas"}, "--rev 2025-11-25,2026-07-28 --adapter replicas"},
		{[]string{"ADAPTER=replicas", "REV=2026-07-28"}, "--rev 2026-07-28 --adapter replicas"},
		{nil, "--rev 2026-07-28 --adapter nethttp"},
		{[]string{"ADAPTER=gcf"}, "--rev 2026-07-28 --adapter gcf"},
	} {
		cmd := exec.Command("make", append([]string{"-n", "-s", "conformance"}, c.args...)...)
		cmd.Dir = repo.Root(t)
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "REV=") && !strings.HasPrefix(e, "ADAPTER=") && !strings.HasPrefix(e, "MAKEFLAGS=") {
				cmd.Env = append(cmd.Env, e)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n conformance %v: %v\n%s", c.args, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("make conformance %v runs %q, want %q", c.args, strings.TrimSpace(string(out)), c.want)
		}
	}
	readme := readFile(t, "README.md")
	if !strings.Contains(readme, "`make conformance ADAPTER=replicas` runs both") {
		t.Error("README no longer says what `make conformance ADAPTER=replicas` runs; keep this test in line")
	}
}

// TestCoreDocDependencies: core/doc.go names exactly the modules outside
// the standard library whose packages core (and the packages of the root
// module it imports) import.
func TestCoreDocDependencies(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Module,Standard", "./core")
	cmd.Dir = repo.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath string
		Imports    []string
		Standard   bool
		Module     *struct{ Path string }
	}
	byPath := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		byPath[p.ImportPath] = p
	}
	direct := map[string]bool{}
	for _, p := range byPath {
		if p.Module == nil || p.Module.Path != module {
			continue
		}
		for _, imp := range p.Imports {
			q := byPath[imp]
			if !q.Standard && q.Module != nil && q.Module.Path != module {
				direct[q.Module.Path] = true
			}
		}
	}
	if len(direct) < 2 {
		t.Fatalf("core's packages import %v: the check is not seeing them", direct)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(readFile(t, "core/doc.go"), "//", "")), " ")
	for m := range direct {
		if !strings.Contains(text, m) {
			t.Errorf("core/doc.go does not name %s, which core imports", m)
		}
	}
	for _, m := range regexp.MustCompile(`\b(?:github\.com|golang\.org|go\.yaml\.in)/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+`).FindAllString(text, -1) {
		m = strings.TrimRight(m, ".,;)")
		if !direct[m] && !strings.HasPrefix(m, module) {
			t.Errorf("core/doc.go names %s, which core does not import", m)
		}
	}
	if n := numberWords[len(direct)]; !strings.Contains(text, n+" libraries") {
		t.Errorf("core/doc.go does not say core imports %s libraries besides the standard library (%v)", n, keys(direct))
	}
}

var numberWords = []string{"no", "one", "two", "three", "four", "five", "six"}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// designModuleRows returns the first cells of the table of the "Module
// layout" section of docs/design.md, as directories: `github.com/mcpfn/mcpfn`
// (`.`) is ".", `…/adapters/lambda` is "adapters/lambda".
func designModuleRows(t *testing.T) []string {
	t.Helper()
	s := section(readFile(t, "docs/design.md"), "Module layout")
	var dirs []string
	cell := regexp.MustCompile("^\\| `(github\\.com/mcpfn/mcpfn|…)((?:/[A-Za-z0-9_./-]+)?)`")
	other := regexp.MustCompile("^\\| `(example\\.com/[A-Za-z0-9_./-]+)` \\(`([^`]+)`\\)")
	for _, l := range strings.Split(s, "\n") {
		if m := cell.FindStringSubmatch(l); m != nil {
			d := strings.TrimPrefix(m[2], "/")
			if d == "" {
				d = "."
			}
			dirs = append(dirs, d)
		} else if m := other.FindStringSubmatch(l); m != nil {
			dirs = append(dirs, m[2])
		}
	}
	return dirs
}

// TestDesignModuleTable: the module table of docs/design.md ("Module
// layout") has a row for every module of go.work, and no other.
func TestDesignModuleTable(t *testing.T) {
	t.Parallel()
	var w struct{ Use []struct{ DiskPath string } }
	out, err := exec.Command("go", "work", "edit", "-json", filepath.Join(repo.Root(t), "go.work")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &w); err != nil {
		t.Fatal(err)
	}
	var used []string
	for _, u := range w.Use {
		used = append(used, filepath.Clean(strings.TrimPrefix(u.DiskPath, "./")))
	}
	rows := designModuleRows(t)
	sort.Strings(used)
	sort.Strings(rows)
	if !slices.Equal(rows, used) {
		t.Errorf("docs/design.md's module table lists %v, go.work uses %v", rows, used)
	}
}

// TestDesignModuleCounts measures the "chosen" row of docs/design.md's
// module-count table: throwaway modules whose main imports core + nethttp,
// + adapters/lambda, + adapters/gcf (with functions-framework), +
// store/dynamo, + store/secretsmanager, built from the working tree;
// `go list -m all` (the main module included) / the dep lines of `go
// version -m`. The numbers the document states are the numbers measured.
func TestDesignModuleCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds five throwaway modules")
	}
	t.Parallel()
	s := section(readFile(t, "docs/design.md"), "Module layout")
	var row string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "| **chosen**") {
			row = l
		}
	}
	if row == "" {
		t.Fatal(`docs/design.md's "Module layout" has no "| **chosen**" row`)
	}
	cells := strings.Split(strings.Trim(row, "| "), "|")[1:]
	M := module
	sets := [][]string{
		{M + "/core", M + "/adapters/nethttp"},
		{M + "/core", M + "/adapters/nethttp", M + "/adapters/lambda"},
		{M + "/core", M + "/adapters/nethttp", M + "/adapters/gcf", "github.com/GoogleCloudPlatform/functions-framework-go/functions"},
		{M + "/core", M + "/adapters/nethttp", M + "/store/dynamo"},
		{M + "/core", M + "/adapters/nethttp", M + "/store/secretsmanager"},
	}
	if len(cells) != len(sets) {
		t.Fatalf("the chosen row has %d counts, want %d: %s", len(cells), len(sets), row)
	}
	for i, set := range sets {
		stated := strings.Trim(strings.TrimSpace(cells[i]), "*")
		t.Run(filepath.Base(set[len(set)-1]), func(t *testing.T) {
			t.Parallel()
			mods, deps := measure(t, set)
			if got := fmt.Sprintf("%d / %d", mods, deps); got != stated {
				t.Errorf("docs/design.md states %q for %v; measured %q (go list -m all / go version -m deps)", stated, set, got)
			}
		})
	}
}

// measure builds a throwaway module importing pkgs, with every module of
// this repository replaced by its directory, and returns the length of
// `go list -m all` and the number of dep lines of `go version -m`.
func measure(t *testing.T, pkgs []string) (mods, deps int) {
	t.Helper()
	root := repo.Root(t)
	dir := t.TempDir()
	var w struct{ Use []struct{ DiskPath string } }
	out, err := exec.Command("go", "work", "edit", "-json", filepath.Join(root, "go.work")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &w); err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/user\n\ngo 1.26\n\n"
	var sum []byte
	for _, u := range w.Use {
		d := filepath.Join(root, u.DiskPath)
		var m struct{ Module struct{ Path string } }
		b, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(d, "go.mod")).Output()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(m.Module.Path, module) {
			mod += "replace " + m.Module.Path + " => " + d + "\n"
		}
		if s, err := os.ReadFile(filepath.Join(d, "go.sum")); err == nil {
			sum = append(sum, s...)
		}
	}
	if s, err := os.ReadFile(filepath.Join(root, "go.work.sum")); err == nil {
		sum = append(sum, s...)
	}
	main := "package main\n\nimport (\n"
	for _, p := range pkgs {
		main += "\t_ \"" + p + "\"\n"
	}
	main += ")\n\nfunc main() {}\n"
	for name, b := range map[string][]byte{"go.mod": []byte(mod), "main.go": []byte(main), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("mod", "tidy")
	mods = len(strings.Split(strings.TrimSpace(run("list", "-m", "all")), "\n"))
	run("build", "-o", "user", ".")
	for _, l := range strings.Split(run("version", "-m", "user"), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "dep" {
			deps++
		}
	}
	return mods, deps
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestRelativeLinks: every relative link of README.md and docs/*.md names
// a file or directory of the repository.
func TestRelativeLinks(t *testing.T) {
	t.Parallel()
	n := 0
	for _, f := range docFiles(t) {
		for i, l := range strings.Split(readFile(t, f), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				n++
				p := filepath.Join(repo.Root(t), filepath.Dir(f), target)
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d: the link %s names nothing in the repository", f, i+1, m[1])
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d relative links: the check is not seeing them", n)
	}
}

// TestTerraformVariablesNamed: every variable of a Terraform module that
// README.md or docs/*.md names in the form `name = ...` (as a reader
// writes it in a module block) is declared by one of the modules.
func TestTerraformVariablesNamed(t *testing.T) {
	t.Parallel()
	declared := map[string]bool{}
	tfs, _ := filepath.Glob(filepath.Join(repo.Root(t), "infra", "terraform", "*", "*", "variables.tf"))
	decl := regexp.MustCompile(`(?m)^variable "([a-z0-9_]+)"`)
	for _, f := range tfs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			declared[m[1]] = true
		}
	}
	if len(declared) < 10 {
		t.Fatalf("found %d Terraform variables in %v: the check is not seeing them", len(declared), tfs)
	}
	// `name = ...` spans, and spans naming a variable-like word next to
	// "variable" or a module path.
	assign := regexp.MustCompile("`([a-z][a-z0-9_]*) = [^`]+`")
	named := regexp.MustCompile("`([a-z]+(?:_[a-z0-9]+)+)` (?:bounds|caps|variable)")
	for _, f := range proseFiles(t) {
		for i, l := range strings.Split(readFile(t, f), "\n") {
			for _, re := range []*regexp.Regexp{assign, named} {
				for _, m := range re.FindAllStringSubmatch(l, -1) {
					if !declared[m[1]] {
						t.Errorf("%s:%d: no Terraform module declares the variable %s", f, i+1, m[1])
					}
				}
			}
		}
	}
}
