// Command release tags the public modules of the repository together under
// one version, and writes the file-system module proxy that serves them as
// they would be tagged.
//
// Usage (from the repository root; tools/release/proxy.sh wraps the last):
//
//	go -C tools/release run . modules
//	go -C tools/release run . [-write] [-tag] VERSION
//	go -C tools/release run . proxy DIR VERSION
//
// The public modules are those of every go.mod of the tree outside
// examples/, test/, tools/ and internal/ (and outside any testdata, hidden
// or node_modules directory): the root module github.com/mcpfn/mcpfn and
// each module below it, tagged vX.Y.Z (the root) and <dir>/vX.Y.Z (the
// others), the layout the go command resolves for nested modules. They are
// listed and tagged in dependency order: a module after every sibling it
// requires.
//
// VERSION alone is the dry run: it prints the go.mod changes the release
// needs (every require of a public sibling at VERSION, in every module of
// the tree) and the tags, and changes nothing. -write rewrites the go.mod files (run `GOWORK=off go mod tidy`
// in each and commit); -tag creates the tags on HEAD, refusing a dirty
// tree, a require of a sibling at another version, or an existing tag.
// Pushing the tags (`git push origin TAG...`, in the order printed) is left
// to the releaser.
//
// proxy writes DIR in the layout GOPROXY=file://DIR reads
// (<escaped module path>/@v/list, VERSION.info, VERSION.mod, VERSION.zip)
// holding every public module at VERSION as -write and -tag would make it:
// the files git tracks or would track (untracked files that .gitignore does
// not exclude are included, so that work in progress can be tried before a
// commit), the go.mod with sibling requires at VERSION, zipped by
// golang.org/x/mod/zip (paths module@VERSION/..., no nested modules, no
// vendor directories, the size limits). -as-is writes the modules as the
// tree has them, without rewriting or checking their requires.
//
// Every run refuses a public module that requires a module of the
// repository that is not public (test-only requires included: module graph
// pruning keeps a dependency's own requirements in its users' graphs), and
// a root go.mod with a replace directive (`go install
// github.com/mcpfn/mcpfn/cmd/mcpfn@VERSION` refuses one).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// rootPath is the module path of the repository's root module.
const rootPath = "github.com/mcpfn/mcpfn"

// privateDirs are the top-level directories whose modules are never
// published.
var privateDirs = []string{"examples", "test", "tools", "internal"}

// mod is one module of the tree.
type mod struct {
	Dir    string // slash-separated, relative to the root; "." for the root
	Path   string // module path
	Public bool
	file   *modfile.File
	data   []byte // go.mod as in the tree
}

// Tag is the git tag of m at version v.
func (m *mod) Tag(v string) string {
	if m.Dir == "." {
		return v
	}
	return m.Dir + "/" + v
}

func main() {
	fl := flag.NewFlagSet("release", flag.ContinueOnError)
	root := fl.String("root", "", "the repository's root directory (default: found from the current directory)")
	write := fl.Bool("write", false, "rewrite the go.mod files: every require of a sibling at VERSION")
	tag := fl.Bool("tag", false, "create the tags on HEAD (the tree must be clean and at VERSION)")
	asIs := fl.Bool("as-is", false, "proxy: write the modules as the tree has them, without rewriting or checking requires")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: release [-root DIR] modules\n       release [-root DIR] [-write] [-tag] VERSION\n       release [-root DIR] [-as-is] proxy DIR VERSION")
		fl.PrintDefaults()
	}
	if err := fl.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := run(*root, fl.Args(), *write, *tag, *asIs, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		if errors.Is(err, errUsage) {
			fl.Usage()
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("bad usage")

func run(root string, args []string, write, tag, asIs bool, out io.Writer) error {
	if root == "" {
		b, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			return fmt.Errorf("finding the repository root (pass -root): %v", err)
		}
		root = strings.TrimSpace(string(b))
	}
	mods, err := load(root)
	if err != nil {
		return err
	}
	switch {
	case len(args) == 1 && args[0] == "modules":
		for _, m := range mods {
			if m.Public {
				fmt.Fprintf(out, "%s\t%s\n", m.Dir, m.Path)
			}
		}
		return nil
	case len(args) == 3 && args[0] == "proxy":
		v, err := checkVersion(args[2])
		if err != nil {
			return err
		}
		return writeProxy(root, mods, args[1], v, asIs)
	case len(args) == 1:
		v, err := checkVersion(args[0])
		if err != nil {
			return err
		}
		return release(root, mods, v, write, tag, out)
	}
	return errUsage
}

func checkVersion(v string) (string, error) {
	if !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "" {
		return "", fmt.Errorf("version %q is not a canonical semantic version (vX.Y.Z[-pre])", v)
	}
	if semver.Major(v) != "v0" && semver.Major(v) != "v1" {
		return "", fmt.Errorf("version %s needs a /%s suffix on every module path", v, semver.Major(v))
	}
	return v, nil
}

// load finds every module of the tree, marks the public ones and returns
// them, the public ones first in dependency order.
func load(root string) ([]*mod, error) {
	var mods []*mod
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") ||
			d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(p, data, nil)
		if err != nil {
			return err
		}
		if f.Module == nil {
			return fmt.Errorf("%s: no module directive", p)
		}
		dir := filepath.ToSlash(rel)
		first, _, _ := strings.Cut(dir, "/")
		mods = append(mods, &mod{Dir: dir, Path: f.Module.Mod.Path, file: f, data: data,
			Public: !slices.Contains(privateDirs, first) && !slices.Contains(strings.Split(dir, "/"), "internal")})
		return nil
	})
	if err != nil {
		return nil, err
	}
	public := map[string]*mod{}
	for _, m := range mods {
		if !m.Public {
			continue
		}
		want := rootPath
		if m.Dir != "." {
			want += "/" + m.Dir
		}
		if m.Path != want {
			return nil, fmt.Errorf("%s/go.mod: module %s, want %s (the tags <dir>/vX.Y.Z resolve only if the path matches the directory)", m.Dir, m.Path, want)
		}
		public[m.Path] = m
	}
	if public[rootPath] == nil {
		return nil, fmt.Errorf("%s: no root module %s", root, rootPath)
	}
	ordered, err := order(public)
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		if !m.Public {
			ordered = append(ordered, m)
		}
	}
	return ordered, nil
}

// order sorts the public modules so that each comes after every sibling it
// requires (ties by directory, the root first).
func order(public map[string]*mod) ([]*mod, error) {
	var out []*mod
	state := map[string]int{} // 1: visiting, 2: done
	var visit func(m *mod, stack []string) error
	visit = func(m *mod, stack []string) error {
		switch state[m.Path] {
		case 1:
			return fmt.Errorf("the public modules require each other in a cycle: %s", strings.Join(append(stack, m.Path), " -> "))
		case 2:
			return nil
		}
		state[m.Path] = 1
		var deps []*mod
		for _, r := range m.file.Require {
			if d := public[r.Mod.Path]; d != nil && d != m {
				deps = append(deps, d)
			}
		}
		slices.SortFunc(deps, func(a, b *mod) int { return strings.Compare(a.Dir, b.Dir) })
		for _, d := range deps {
			if err := visit(d, append(stack, m.Path)); err != nil {
				return err
			}
		}
		state[m.Path] = 2
		out = append(out, m)
		return nil
	}
	all := make([]*mod, 0, len(public))
	for _, m := range public {
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b *mod) int {
		if (a.Dir == ".") != (b.Dir == ".") {
			if a.Dir == "." {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Dir, b.Dir)
	})
	for _, m := range all {
		if err := visit(m, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rewrite returns m's go.mod with every require of a public sibling at v,
// and whether that changed it. It refuses, in a public module, a require of
// a module of the repository that is not public, and a replace directive in
// the root.
func rewrite(mods []*mod, m *mod, v string) ([]byte, bool, error) {
	public, ours := map[string]bool{}, map[string]bool{}
	for _, o := range mods {
		ours[o.Path] = true
		public[o.Path] = o.Public
	}
	if m.Dir == "." && len(m.file.Replace) > 0 {
		return nil, false, fmt.Errorf("go.mod (the root module) has a replace directive: `go install %s/cmd/mcpfn@%s` refuses a module with one", rootPath, v)
	}
	f, err := modfile.Parse(m.Dir+"/go.mod", m.data, nil)
	if err != nil {
		return nil, false, err
	}
	changed := false
	for _, r := range m.file.Require {
		p := r.Mod.Path
		if m.Public && (ours[p] || strings.HasPrefix(p, rootPath+"/")) && !public[p] {
			return nil, false, fmt.Errorf("%s/go.mod requires %s, which is not published: every user of %s would need it "+
				"(module graph pruning keeps a dependency's requirements, its tests' included); move what needs it to a non-public module",
				m.Dir, p, m.Path)
		}
		if public[p] && r.Mod.Version != v {
			if err := f.AddRequire(p, v); err != nil {
				return nil, false, err
			}
			changed = true
		}
	}
	if !changed {
		return m.data, false, nil
	}
	f.Cleanup()
	b, err := f.Format()
	return b, true, err
}

// release prints (and with write or tag, applies) the release of every
// public module at v.
func release(root string, mods []*mod, v string, write, tag bool, out io.Writer) error {
	var pending []string
	for _, m := range mods { // the modules that are not published follow too
		b, changed, err := rewrite(mods, m, v)
		if err != nil {
			return err
		}
		if !changed {
			continue
		}
		pending = append(pending, m.Dir)
		if write {
			if err := os.WriteFile(filepath.Join(root, m.Dir, "go.mod"), b, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(out, "rewrote %s/go.mod: its siblings at %s\n", m.Dir, v)
		} else {
			fmt.Fprintf(out, "%s/go.mod needs its siblings at %s (-write does it)\n", m.Dir, v)
		}
	}
	if len(pending) > 0 && write {
		fmt.Fprintln(out, "now run `GOWORK=off go mod tidy` in each rewritten module, commit, and run release again")
	}
	if tag && len(pending) > 0 {
		return fmt.Errorf("not tagging: %s require their siblings at other versions than %s", strings.Join(pending, ", "), v)
	}
	if tag {
		st, err := git(root, "status", "--porcelain")
		if err != nil {
			return err
		}
		if len(st) > 0 {
			return fmt.Errorf("not tagging: the working tree is not clean:\n%s", st)
		}
	}
	for _, m := range mods {
		if !m.Public {
			continue
		}
		t := m.Tag(v)
		if !tag {
			fmt.Fprintf(out, "git tag %s\n", t)
			continue
		}
		if _, err := git(root, "rev-parse", "-q", "--verify", "refs/tags/"+t); err == nil {
			return fmt.Errorf("tag %s exists", t)
		}
		if _, err := git(root, "tag", "-m", m.Path+" "+v, t); err != nil {
			return err
		}
		fmt.Fprintf(out, "tagged %s\n", t)
	}
	return nil
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return b, nil
}

// writeProxy writes the file-system module proxy of every public module at
// v into dir.
func writeProxy(root string, mods []*mod, dir, v string, asIs bool) error {
	ls, err := git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	var files []string
	for _, f := range strings.Split(string(ls), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	t := time.Now().UTC()
	if b, err := git(root, "log", "-1", "--format=%cI"); err == nil {
		if ct, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b))); err == nil {
			t = ct.UTC()
		}
	}
	for _, m := range mods {
		if !m.Public {
			continue
		}
		gomod := m.data
		if !asIs {
			if gomod, _, err = rewrite(mods, m, v); err != nil {
				return err
			}
		}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		var zf []zip.File
		prefix := ""
		if m.Dir != "." {
			prefix = m.Dir + "/"
		}
		for _, f := range files {
			if !strings.HasPrefix(f, prefix) {
				continue
			}
			rel := strings.TrimPrefix(f, prefix)
			if rel == "go.mod" {
				zf = append(zf, memFile{name: rel, data: gomod})
				continue
			}
			full := filepath.Join(root, filepath.FromSlash(f))
			if _, err := os.Lstat(full); errors.Is(err, fs.ErrNotExist) {
				continue // deleted in the working tree
			}
			zf = append(zf, diskFile{name: rel, path: full})
		}
		var buf bytes.Buffer
		if err := zip.Create(&buf, module.Version{Path: m.Path, Version: v}, zf); err != nil {
			return err
		}
		info, _ := json.Marshal(struct {
			Version string
			Time    time.Time
		}{v, t})
		for name, b := range map[string][]byte{v + ".zip": buf.Bytes(), v + ".mod": gomod, v + ".info": info} {
			if err := os.WriteFile(filepath.Join(vdir, name), b, 0o644); err != nil {
				return err
			}
		}
		list := filepath.Join(vdir, "list")
		old, _ := os.ReadFile(list)
		vs := strings.Fields(string(old))
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
		semver.Sort(vs)
		if err := os.WriteFile(list, []byte(strings.Join(vs, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// diskFile is a file of the working tree for zip.Create.
type diskFile struct{ name, path string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }

// memFile is a file whose content is held in memory (a rewritten go.mod).
type memFile struct {
	name string
	data []byte
}

func (f memFile) Path() string                 { return f.name }
func (f memFile) Lstat() (fs.FileInfo, error)  { return memInfo{f}, nil }
func (f memFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type memInfo struct{ f memFile }

func (i memInfo) Name() string       { return path.Base(i.f.name) }
func (i memInfo) Size() int64        { return int64(len(i.f.data)) }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
