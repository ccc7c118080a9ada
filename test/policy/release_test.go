package policy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

// zeroVersion is the version `go mod edit -require` and hand edits give a
// module that only a replace directive resolves: users do not get the
// replace, so nothing resolves it for them.
const zeroVersion = "v0.0.0-00010101000000-000000000000"

// goModDirs returns the directory of every go.mod of the repository,
// relative to root, with forward slashes. Hidden directories, testdata and
// node_modules are skipped.
func goModDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// isPublic reports whether the module in dir is published (tools/release:
// every module outside examples/, test/, tools/ and internal/).
func isPublic(dir string) bool {
	first, _, _ := strings.Cut(dir, "/")
	return !slices.Contains([]string{"examples", "test", "tools", "internal"}, first) &&
		!slices.Contains(strings.Split(dir, "/"), "internal")
}

// TestNoZeroVersion: no go.mod requires anything at the zero
// pseudo-version; siblings are required at a real version (the last
// release, or the one being prepared) and replaced by their directory for
// development (docs/design.md, "Module layout").
func TestNoZeroVersion(t *testing.T) {
	t.Parallel()
	root := repo.Root(t)
	for _, dir := range goModDirs(t, root) {
		var m goMod
		goJSON(t, filepath.Join(root, dir), &m, "mod", "edit", "-json")
		for _, r := range m.Require {
			if r.Version == zeroVersion {
				t.Errorf("%s/go.mod requires %s %s: a user's go command cannot resolve it (replace directives of a dependency are ignored); "+
					"require the version being released", dir, r.Path, r.Version)
			}
		}
	}
}

// TestPublicRequires: what a user requires resolves from published modules
// only. A public module requires no module of the repository that is not
// published (with module graph pruning a dependency's own requirements,
// those of its tests included, reach its users' graphs); the public
// modules require each other at one version; the root module has no
// replace directive (`go install github.com/mcpfn/mcpfn/cmd/mcpfn@VERSION`
// refuses a main module with one).
func TestPublicRequires(t *testing.T) {
	t.Parallel()
	root := repo.Root(t)
	public := map[string]bool{}
	mods := map[string]goMod{}
	for _, dir := range goModDirs(t, root) {
		var m goMod
		goJSON(t, filepath.Join(root, dir), &m, "mod", "edit", "-json")
		mods[dir] = m
		public[m.Module.Path] = isPublic(dir)
	}
	versions := map[string][]string{}
	for dir, m := range mods {
		if !isPublic(dir) {
			continue
		}
		if dir == "." && len(m.Replace) > 0 {
			t.Errorf("the root go.mod has %d replace directives: `go install %s/cmd/mcpfn@VERSION` refuses them", len(m.Replace), module)
		}
		for _, r := range m.Require {
			if !strings.HasPrefix(r.Path, module) {
				continue
			}
			if !public[r.Path] {
				t.Errorf("%s/go.mod requires %s, which is not published: move what needs it (tests too) to a module that is not public", dir, r.Path)
				continue
			}
			versions[r.Version] = append(versions[r.Version], dir+" -> "+r.Path)
		}
	}
	if len(versions) > 1 {
		t.Errorf("the public modules require each other at several versions: %v", versions)
	}
	if len(versions) == 0 {
		t.Error("no public module requires another: the check is not seeing the go.mod files")
	}
}

// TestWorkSum: go.work.sum is exactly what the go command records for the
// workspace (test/policy/worksum.sh), so that no go command rewrites it in
// a fresh clone and it carries no stale lines.
func TestWorkSum(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(filepath.Join(repo.Root(t), "test", "policy", "worksum.sh"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}
