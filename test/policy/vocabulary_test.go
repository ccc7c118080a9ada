package policy_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

// The wire vocabulary (issue: one protocol vocabulary for server and
// client) lives in package mcp. These tests keep it the only one.

// publicDirs returns the directories, relative to the repository root, of
// every package a user can import or run: all of the repository's Go
// packages but the internal ones, the test harnesses under test/ and the
// tools under tools/. Hidden directories, testdata and node_modules are
// skipped.
func publicDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "internal" ||
			rel == "test" || rel == "tools") {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, af)
	}
	return out
}

// typeSpecs calls fn for every type declared in files (top level), with
// whether it is an alias (type A = B).
func typeSpecs(files []*ast.File, fn func(ts *ast.TypeSpec)) {
	declSpecs(files, token.TYPE, func(s ast.Spec) { fn(s.(*ast.TypeSpec)) })
}

// declSpecs calls fn for every spec of the top-level declarations of files
// whose token is tok (token.TYPE, token.VAR, ...).
func declSpecs(files []*ast.File, tok token.Token, fn func(s ast.Spec)) {
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != tok {
				continue
			}
			for _, s := range gd.Specs {
				fn(s)
			}
		}
	}
}

// challengeParser matches the names of functions and methods that parse
// WWW-Authenticate challenges (ParseChallenges, parseChallenges,
// ParseWWWAuthenticate, BearerChallenge, readChallenge, decodeWWWAuth,
// ...), and not those that only answer or build one (Authenticate,
// isAuthChallenge, a Challenger's Challenge).
var challengeParser = regexp.MustCompile(`(?i)(parse|read|scan|split|decode|lex|tokeni[sz]e).*(challenge|www.?auth)|^bearerchallenges?$|www.?authenticate`)

// challengeType matches, in any case, the names of types that hold a
// parsed challenge or its params (Challenge, challengeParam, AuthParam).
var challengeType = regexp.MustCompile(`(?i)^(www.?authenticate|bearer)?(challenge|challengeparam|authparam)s?$`)

// notWire are the types of other packages that share a name with a type of
// package mcp but are not wire types, each with the reason. A new entry
// needs one as good.
var notWire = map[string]string{}

// TestOneVocabulary: no wire type, error type or WWW-Authenticate parser is
// declared twice. It parses every non-test file of the public packages
// (publicDirs) and fails when
//
//   - a type named as one package mcp declares is declared, not aliased,
//     in another package (core.Tool = mcp.Tool is fine; a client.Tool
//     struct is a second dialect), unless notWire names it with the
//     reason it is no wire type;
//   - a struct type outside mcp has the shape of a JSON-RPC error object,
//     fields named Code and Message: the one error type is *mcp.Error;
//   - a type outside mcp has the name of a challenge type (challengeType:
//     Challenge, challengeParam, ...) or a function or method the name of
//     a challenge parser (challengeParser: ParseChallenges,
//     BearerChallenge, ...);
//   - code outside mcp reads the WWW-Authenticate header itself:
//     h.Get("WWW-Authenticate"), h.Values(...) or h["Www-Authenticate"] in
//     any spelling. Writing the header (auth's challenges) is fine; reading
//     it means parsing it, which mcp.ParseWWWAuthenticate and
//     mcp.BearerChallenge do.
func TestOneVocabulary(t *testing.T) {
	root := repo.Root(t)
	fset := token.NewFileSet()
	wire := map[string]string{} // type name → position in mcp
	typeSpecs(parseDir(t, fset, filepath.Join(root, "mcp")), func(ts *ast.TypeSpec) {
		if ts.Name.IsExported() && !ts.Assign.IsValid() {
			wire[ts.Name.Name] = fset.Position(ts.Pos()).String()
		}
	})
	// The check must see what it is about, or it proves nothing.
	for _, n := range []string{"Tool", "CallToolResult", "ListToolsResult", "Error", "Challenge", "InputRequest", "ElicitResult"} {
		if _, ok := wire[n]; !ok {
			t.Fatalf("package mcp declares no type %s: the check is not seeing the vocabulary", n)
		}
	}
	dirs := publicDirs(t, root)
	seen := map[string]bool{}
	for _, dir := range dirs {
		seen[dir] = true
		if dir == "mcp" {
			continue
		}
		files := parseDir(t, fset, filepath.Join(root, dir))
		typeSpecs(files, func(ts *ast.TypeSpec) {
			if _, ok := notWire[module+"/"+dir+"."+ts.Name.Name]; ok {
				return
			}
			if at, ok := wire[ts.Name.Name]; ok && !ts.Assign.IsValid() {
				t.Errorf("%s: type %s is declared again (mcp's is at %s): alias it (type %s = mcp.%s) or use mcp's",
					fset.Position(ts.Pos()), ts.Name.Name, at, ts.Name.Name, ts.Name.Name)
			}
			if st, ok := ts.Type.(*ast.StructType); ok && hasFields(st, "Code", "Message") {
				t.Errorf("%s: type %s has the shape of a JSON-RPC error object (Code, Message): use *mcp.Error", fset.Position(ts.Pos()), ts.Name.Name)
			}
			if challengeType.MatchString(ts.Name.Name) && !ts.Assign.IsValid() {
				t.Errorf("%s: type %s looks like a second WWW-Authenticate challenge type: use mcp.Challenge", fset.Position(ts.Pos()), ts.Name.Name)
			}
		})
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if challengeParser.MatchString(n.Name.Name) {
						t.Errorf("%s: %s looks like a second WWW-Authenticate parser: use mcp.ParseWWWAuthenticate or mcp.BearerChallenge",
							fset.Position(n.Pos()), n.Name.Name)
					}
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Get" || sel.Sel.Name == "Values") &&
						len(n.Args) == 1 && isWWWAuthenticate(n.Args[0]) {
						t.Errorf("%s: reads the WWW-Authenticate header itself: use mcp.ParseWWWAuthenticate or mcp.BearerChallenge", fset.Position(n.Pos()))
					}
				case *ast.IndexExpr:
					if isWWWAuthenticate(n.Index) {
						t.Errorf("%s: reads the WWW-Authenticate header itself: use mcp.ParseWWWAuthenticate or mcp.BearerChallenge", fset.Position(n.Pos()))
					}
				}
				return true
			})
		}
	}
	for _, d := range []string{"core", "client", "client/oauth", "auth", "cmd/mcpfn", "adapters/nethttp"} {
		if !seen[d] {
			t.Errorf("the check did not parse %s: it is not seeing the tree", d)
		}
	}
}

// hasFields reports whether st declares fields of every name in names.
func hasFields(st *ast.StructType, names ...string) bool {
	have := map[string]bool{}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			have[n.Name] = true
		}
	}
	for _, n := range names {
		if !have[n] {
			return false
		}
	}
	return true
}

// isWWWAuthenticate reports whether e is the string literal
// "WWW-Authenticate" in any spelling.
func isWWWAuthenticate(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && strings.EqualFold(s, "WWW-Authenticate")
}

// schemaOrYAML matches the module paths a client must not link: JSON
// Schema libraries (invopop/jsonschema, google/jsonschema-go,
// santhosh-tekuri/jsonschema, xeipuuv/gojsonschema, ...) and YAML
// libraries (go.yaml.in/yaml, gopkg.in/yaml.v3, sigs.k8s.io/yaml, ...).
var schemaOrYAML = regexp.MustCompile(`(?i)jsonschema|yaml`)

// TestCLIModules: the mcpfn binary, a client, links none of the server's
// schema machinery: go version -m lists no JSON Schema or YAML module.
func TestCLIModules(t *testing.T) {
	root := repo.Root(t)
	bin := filepath.Join(t.TempDir(), "mcpfn")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mcpfn")
	build.Dir = root
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/mcpfn: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var deps []string
	sawPath := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "path" && f[1] == module+"/cmd/mcpfn" {
			sawPath = true
		}
		if len(f) >= 2 && (f[0] == "dep" || f[0] == "=>") {
			deps = append(deps, f[1])
			if schemaOrYAML.MatchString(f[1]) {
				t.Errorf("the mcpfn binary links %s: a client must not pay for the server's JSON Schema or YAML libraries", f[1])
			}
		}
	}
	if !sawPath {
		t.Fatalf("go version -m does not describe cmd/mcpfn:\n%s", out)
	}
	sort.Strings(deps)
	t.Logf("modules linked into mcpfn: %v", deps)
}

// TestClientImportsNoCore: the client side (client, client/oauth,
// cmd/mcpfn) speaks the mcp vocabulary and imports nothing of the server:
// not core, nor any package that imports it.
func TestClientImportsNoCore(t *testing.T) {
	for _, p := range goList(t, "-deps", "./client/...", "./cmd/mcpfn") {
		if p.path == module+"/core" || strings.HasPrefix(p.path, module+"/core/") {
			t.Errorf("the client side depends on %s", p.path)
		}
	}
}

// TestMCPDependencies: package mcp imports only the standard library and
// internal/jsonwire, which imports only the standard library.
func TestMCPDependencies(t *testing.T) {
	n := 0
	for _, p := range goList(t, "-deps", "./mcp") {
		if p.standard {
			continue
		}
		n++
		switch p.path {
		case module + "/mcp", module + "/internal/jsonwire":
		default:
			t.Errorf("package mcp depends on %s; it may import only the standard library and internal/jsonwire", p.path)
		}
	}
	if n != 2 {
		t.Errorf("go list -deps ./mcp lists %d packages of the module, want mcp and internal/jsonwire", n)
	}
}
