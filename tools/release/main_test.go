package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// untracked are the files of layout that tree leaves out of the commit: one
// that .gitignore excludes and one it does not.
var untracked = []string{"build.out", "scratch.txt"}

// tree writes files (slash paths relative to a new directory) and returns
// the directory, made a git repository with everything committed but the
// untracked files.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitRun("init", "-q")
	// The repository's own identity: the tool's git tag -m needs one, and
	// a fresh machine has no global one.
	gitRun("config", "user.name", "t")
	gitRun("config", "user.email", "t@example.com")
	for name := range files {
		if !slices.Contains(untracked, name) {
			gitRun("add", name)
		}
	}
	gitRun("commit", "-q", "-m", "tree")
	return dir
}

// layout is a repository whose dependency order differs from the
// alphabetical one: adapters/a requires store/b.
func layout() map[string]string {
	return map[string]string{
		"go.mod":       "module github.com/mcpfn/mcpfn\n\ngo 1.26\n",
		"core/core.go": "package core\n",
		"adapters/a/go.mod": "module github.com/mcpfn/mcpfn/adapters/a\n\ngo 1.26\n\n" +
			"require (\n\tgithub.com/mcpfn/mcpfn v0.1.0\n\tgithub.com/mcpfn/mcpfn/store/b v0.1.0\n)\n\n" +
			"replace github.com/mcpfn/mcpfn => ../..\n\nreplace github.com/mcpfn/mcpfn/store/b => ../../store/b\n",
		"adapters/a/a.go":   "package a\n",
		"store/b/go.mod":    "module github.com/mcpfn/mcpfn/store/b\n\ngo 1.26\n\nrequire github.com/mcpfn/mcpfn v0.1.0\n\nreplace github.com/mcpfn/mcpfn => ../..\n",
		"store/b/b.go":      "package b\n",
		"examples/go.mod":   "module github.com/mcpfn/mcpfn/examples\n\ngo 1.26\n\nrequire github.com/mcpfn/mcpfn v0.1.0\n\nreplace github.com/mcpfn/mcpfn => ..\n",
		"internal/x/go.mod": "module github.com/mcpfn/mcpfn/internal/x\n\ngo 1.26\n",
		"tools/t/go.mod":    "module example.com/t\n\ngo 1.26\n",
		"test/go.mod":       "module github.com/mcpfn/mcpfn/test\n\ngo 1.26\n",
		"testdata/m/go.mod": "module example.com/ignored\n",
		"notes.txt":         "tracked\n",
		"scratch.txt":       "untracked, not ignored\n",
		"build.out":         "ignored\n",
		".gitignore":        "*.out\n",
		"vendor/v/v.go":     "package v\n",
	}
}

func publicDirs(mods []*mod) []string {
	var dirs []string
	for _, m := range mods {
		if m.Public {
			dirs = append(dirs, m.Dir)
		}
	}
	return dirs
}

// TestOrder: the public modules are those outside examples/, test/, tools/
// and internal/, listed with each after the siblings it requires.
func TestOrder(t *testing.T) {
	t.Parallel()
	mods, err := load(tree(t, layout()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := publicDirs(mods), []string{".", "store/b", "adapters/a"}; !slices.Equal(got, want) {
		t.Fatalf("public modules %v, want %v", got, want)
	}
	if len(mods) != 7 {
		t.Errorf("%d modules, want 7 (testdata skipped)", len(mods))
	}
}

// TestRefusals: a public module requiring an unpublished one of the
// repository, a root with a replace, a cycle, a module path that does not
// match its directory, and a version that is not canonical are refused.
func TestRefusals(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		file, data, version, want string
	}{
		"test-only require": {"store/b/go.mod", "module github.com/mcpfn/mcpfn/store/b\n\ngo 1.26\n\nrequire github.com/mcpfn/mcpfn/internal/x v0.1.0\n",
			"v0.1.0", "store/b/go.mod requires github.com/mcpfn/mcpfn/internal/x, which is not published"},
		"root replace": {"go.mod", "module github.com/mcpfn/mcpfn\n\ngo 1.26\n\nreplace example.com/x => ../x\n",
			"v0.1.0", "has a replace directive"},
		"cycle": {"store/b/go.mod", "module github.com/mcpfn/mcpfn/store/b\n\ngo 1.26\n\nrequire github.com/mcpfn/mcpfn/adapters/a v0.1.0\n",
			"v0.1.0", "cycle"},
		"path":    {"store/b/go.mod", "module github.com/mcpfn/mcpfn/store/c\n\ngo 1.26\n", "v0.1.0", "want github.com/mcpfn/mcpfn/store/b"},
		"version": {"notes.txt", "", "0.1", "not a canonical semantic version"},
		"major":   {"notes.txt", "", "v2.0.0", "suffix"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files := layout()
			files[c.file] = c.data
			var out bytes.Buffer
			err := run(tree(t, files), []string{c.version}, false, false, false, &out)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestReleaseDryRunAndWrite: the dry run names the go.mod files to change
// and the tags in dependency order and changes nothing; -write brings
// every module's sibling requires to the version; -tag refuses the dirty
// tree that leaves.
func TestReleaseDryRunAndWrite(t *testing.T) {
	t.Parallel()
	root := tree(t, layout())
	var out bytes.Buffer
	if err := run(root, []string{"v0.2.0"}, false, false, false, &out); err != nil {
		t.Fatal(err)
	}
	want := "adapters/a/go.mod needs its siblings at v0.2.0 (-write does it)\n" +
		"store/b/go.mod needs its siblings at v0.2.0 (-write does it)\n" +
		"examples/go.mod needs its siblings at v0.2.0 (-write does it)\n" +
		"git tag v0.2.0\ngit tag store/b/v0.2.0\ngit tag adapters/a/v0.2.0\n"
	if got := out.String(); !strings.Contains(got, "git tag v0.2.0\ngit tag store/b/v0.2.0\ngit tag adapters/a/v0.2.0\n") ||
		strings.Count(got, "needs its siblings") != 3 {
		t.Fatalf("dry run printed\n%s\nwant (in some order of the go.mod lines)\n%s", got, want)
	}
	if st, _ := git(root, "status", "--porcelain"); string(st) != "?? scratch.txt\n" {
		t.Fatalf("the dry run changed the tree:\n%s", st)
	}
	if err := run(root, []string{"v0.2.0"}, true, false, false, &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"adapters/a/go.mod", "store/b/go.mod", "examples/go.mod"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "v0.1.0") || !strings.Contains(string(b), "v0.2.0") || !strings.Contains(string(b), "replace") {
			t.Errorf("-write left %s as\n%s", f, b)
		}
	}
	err := run(root, []string{"v0.2.0"}, false, true, false, &out)
	if err == nil || !strings.Contains(err.Error(), "not clean") {
		t.Fatalf("-tag on a dirty tree: %v", err)
	}
}

// TestTag: on a clean tree at the version, -tag creates one tag per public
// module and refuses to run twice.
func TestTag(t *testing.T) {
	t.Parallel()
	root := tree(t, layout())
	if err := os.Remove(filepath.Join(root, "scratch.txt")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(root, []string{"v0.1.0"}, false, true, false, &out); err != nil {
		t.Fatal(err)
	}
	tags, _ := git(root, "tag")
	if got, want := strings.Fields(string(tags)), []string{"adapters/a/v0.1.0", "store/b/v0.1.0", "v0.1.0"}; !slices.Equal(got, want) {
		t.Fatalf("tags %v, want %v", got, want)
	}
	if err := run(root, []string{"v0.1.0"}, false, true, false, &out); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a second -tag: %v", err)
	}
}

// TestProxy: the proxy holds each public module's list, info, mod and zip;
// a zip holds the module's files under module@version/ with the go.mod
// rewritten, and neither nested modules, vendor directories nor ignored
// files; untracked files that are not ignored are included.
func TestProxy(t *testing.T) {
	t.Parallel()
	root := tree(t, layout())
	dir := t.TempDir()
	if err := run(root, []string{"proxy", dir, "v0.3.0"}, false, false, false, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	v := filepath.Join(dir, "github.com", "mcpfn", "mcpfn", "@v")
	list, err := os.ReadFile(filepath.Join(v, "list"))
	if err != nil || string(list) != "v0.3.0\n" {
		t.Fatalf("list %q, %v", list, err)
	}
	var info struct{ Version, Time string }
	b, _ := os.ReadFile(filepath.Join(v, "v0.3.0.info"))
	if err := json.Unmarshal(b, &info); err != nil || info.Version != "v0.3.0" || info.Time != "2026-01-02T03:04:05Z" {
		t.Fatalf("info %s (%v)", b, err)
	}
	zr, err := zip.OpenReader(filepath.Join(v, "v0.3.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	p := "github.com/mcpfn/mcpfn@v0.3.0/"
	if want := []string{p + ".gitignore", p + "core/core.go", p + "go.mod", p + "notes.txt", p + "scratch.txt"}; !slices.Equal(names, want) {
		t.Fatalf("root zip holds %v, want %v", names, want)
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "github.com", "mcpfn", "mcpfn", "adapters", "a", "@v", "v0.3.0.mod"))
	if !strings.Contains(string(mod), "github.com/mcpfn/mcpfn v0.3.0") || !strings.Contains(string(mod), "github.com/mcpfn/mcpfn/store/b v0.3.0") {
		t.Fatalf("adapters/a's go.mod in the proxy:\n%s", mod)
	}
	if _, err := os.Stat(filepath.Join(dir, "github.com", "mcpfn", "mcpfn", "examples")); err == nil {
		t.Fatal("the proxy holds examples, which is not public")
	}
	// -as-is keeps the tree's requires.
	asIs := t.TempDir()
	if err := run(root, []string{"proxy", asIs, "v0.3.0"}, false, false, true, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	mod, _ = os.ReadFile(filepath.Join(asIs, "github.com", "mcpfn", "mcpfn", "adapters", "a", "@v", "v0.3.0.mod"))
	if !strings.Contains(string(mod), "github.com/mcpfn/mcpfn v0.1.0") {
		t.Fatalf("-as-is rewrote adapters/a's go.mod:\n%s", mod)
	}
}
