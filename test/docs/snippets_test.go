package docs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
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

const module = "github.com/mcpfn/mcpfn"

// imports maps the package names snippets use to their import paths: a
// fragment (a block that is not a complete file) gets the imports of the
// names it uses, as a reader would add them.
var imports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "log": "log", "os": "os",
	"strings": "strings", "time": "time", "syscall": "syscall", "testing": "testing",
	"http": "net/http", "json": "encoding/json", "slog": "log/slog", "signal": "os/signal",
	"core":           module + "/core",
	"mcp":            module + "/mcp",
	"nethttp":        module + "/adapters/nethttp",
	"memory":         module + "/store/memory",
	"client":         module + "/client",
	"mcptest":        module + "/mcptest",
	"oauth":          module + "/client/oauth",
	"lambda":         module + "/adapters/lambda",
	"gcf":            module + "/adapters/gcf",
	"auth":           module + "/auth",
	"dynamo":         module + "/store/dynamo",
	"secretsmanager": module + "/store/secretsmanager",
	"lambdaenv":      module + "/deploy/lambdaenv",
	"gcfenv":         module + "/deploy/gcfenv",
	"functions":      "github.com/GoogleCloudPlatform/functions-framework-go/functions",
	"otel":           module + "/otel",
	"sdktrace":       "go.opentelemetry.io/otel/sdk/trace",
	"sdkmetric":      "go.opentelemetry.io/otel/sdk/metric",
	"stdouttrace":    "go.opentelemetry.io/otel/exporters/stdout/stdouttrace",
}

// harnessVars are the variables a statement fragment (marked
// `<!-- snippet: body -->`) may use without declaring them, as the
// parameters of the function it is wrapped in.
var harnessVars = map[string]string{
	"ctx":  "context.Context",
	"srv":  "*core.Server",
	"req":  "*core.CallToolRequest",
	"data": "any",
}

// snippetKind says how a Go block is compiled: "file" (a complete file,
// as is), "decls" (top-level declarations, imports added), "body"
// (statements, wrapped in a function), "wasm" (a complete file for
// GOOS=js GOARCH=wasm, as a Worker's main.go), "skip" (not compiled; the
// marker must say why).
func snippetKind(b block) string {
	if b.mark != "" {
		return b.mark
	}
	for _, l := range strings.Split(b.text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		if strings.HasPrefix(l, "package ") {
			return "file"
		}
		break
	}
	return "decls"
}

// snippetSource turns a Go block into a compilable file of package name.
func snippetSource(b block, name string) ([]byte, error) {
	kind := snippetKind(b)
	// A line directive makes the compiler report positions in the
	// Markdown file: the block's first line is the one after the fence.
	directive := fmt.Sprintf("//line %s:%d\n", b.file, b.line+1)
	if kind == "file" || kind == "wasm" {
		return []byte(directive + b.text), nil
	}
	var head, tail string
	switch kind {
	case "decls":
		head = "package " + name + "\n\n"
	case "body":
		head, tail = "package "+name+"\n\nfunc _(", "\n}\n"
	default:
		return nil, fmt.Errorf("unknown snippet marker %q (file, decls, body, skip)", kind)
	}
	src := head + b.text + tail
	if kind == "body" {
		src = head + ") {\n" + b.text + tail
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", src, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: does not parse as %s: %v", b, kind, err)
	}
	used := map[string]bool{}
	for _, id := range f.Unresolved {
		used[id.Name] = true
	}
	var params []string
	if kind == "body" {
		for v, typ := range harnessVars {
			if used[v] {
				params = append(params, v+" "+typ)
				used[strings.SplitN(strings.TrimLeft(typ, "*"), ".", 2)[0]] = true
			}
		}
		sort.Strings(params)
	}
	var imp []string
	for n, path := range imports {
		if used[n] {
			imp = append(imp, fmt.Sprintf("%s %q", n, path))
		}
	}
	sort.Strings(imp)
	out := "package " + name + "\n\n"
	if len(imp) > 0 {
		out += "import (\n\t" + strings.Join(imp, "\n\t") + "\n)\n\n"
	}
	if kind == "body" {
		out += "func _(" + strings.Join(params, ", ") + ") {\n" + directive + b.text + "}\n"
	} else {
		out += directive + b.text
	}
	return []byte(out), nil
}

// workspace writes a Go workspace in a new directory holding a module
// example.com/snippets and every module of the repository's go.work, and
// returns the directory and the environment to run go commands in it.
func workspace(t *testing.T) (string, []string) {
	t.Helper()
	root := repo.Root(t)
	var w struct{ Use []struct{ DiskPath string } }
	out, err := exec.Command("go", "work", "edit", "-json", filepath.Join(root, "go.work")).Output()
	if err != nil {
		t.Fatalf("go work edit -json: %v", err)
	}
	if err := json.Unmarshal(out, &w); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	work := "go 1.26\n\nuse (\n\t.\n"
	for _, u := range w.Use {
		work += "\t" + filepath.Join(root, u.DiskPath) + "\n"
	}
	work += ")\n"
	sum, _ := os.ReadFile(filepath.Join(root, "go.work.sum"))
	for name, b := range map[string][]byte{
		"go.work":     []byte(work),
		"go.work.sum": sum,
		"go.mod":      []byte("module example.com/snippets\n\ngo 1.26\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOFLAGS=", "GOTOOLCHAIN=local")
}

// TestGoBlocksCompile compiles every ```go block of README.md and docs/*.md
// against the modules of the workspace: complete files as they are,
// fragments with the imports of the package names they use (statements,
// marked `<!-- snippet: body -->`, inside a function whose parameters are
// harnessVars). A reader who copies a block gets code that compiles.
func TestGoBlocksCompile(t *testing.T) {
	t.Parallel()
	dir, env := workspace(t)
	where := map[string]block{}
	var wasm []string // the packages of the wasm blocks
	n := 0
	for _, f := range docFiles(t) {
		for _, b := range blocks(f, readFile(t, f)) {
			if b.lang != "go" {
				continue
			}
			if snippetKind(b) == "skip" {
				continue
			}
			n++
			name := fmt.Sprintf("s%03d", n)
			src, err := snippetSource(b, name)
			if err != nil {
				t.Errorf("%s: %v", b, err)
				continue
			}
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, "snippet.go"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			where[name] = b
			if snippetKind(b) == "wasm" {
				wasm = append(wasm, "./"+name)
			}
		}
	}
	if n < 2 {
		t.Fatalf("found %d Go blocks in %v: the extraction is not seeing them", n, docFiles(t))
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if len(wasm) > 0 {
		// A Worker's files build for js/wasm only (go vet ./... above left
		// them out by their build constraint).
		cmd := exec.Command("go", append([]string{"vet", "-trimpath"}, wasm...)...)
		cmd.Dir, cmd.Env = dir, append(env, "GOOS=js", "GOARCH=wasm")
		wout, werr := cmd.CombinedOutput()
		out = append(out, wout...)
		if err == nil {
			err = werr
		}
	}
	if err == nil {
		return
	}
	// Name the Markdown block of each error.
	msg := string(out)
	for name, b := range where {
		msg = strings.ReplaceAll(msg, name+"/"+b.file, b.file)
		msg = strings.ReplaceAll(msg, name+"/snippet.go", b.String()+" (as "+snippetKind(b)+")")
		msg = strings.ReplaceAll(msg, "example.com/snippets/"+name, b.String())
	}
	t.Errorf("Go blocks of the docs do not compile:\n%s", msg)
}

// TestQuickStartIsCalculator keeps the README's Quick start (its first ```go
// block) equal to examples/calculator/main.go, up to gofmt, so that the code
// a reader copies is the code `go run ./examples/calculator` runs.
func TestQuickStartIsCalculator(t *testing.T) {
	t.Parallel()
	var first *block
	for _, b := range blocks("README.md", readFile(t, "README.md")) {
		if b.lang == "go" {
			first = &b
			break
		}
	}
	if first == nil {
		t.Fatal("README.md has no ```go block")
	}
	norm := func(what, s string) string {
		b, err := format.Source([]byte(s))
		if err != nil {
			t.Fatalf("%s does not gofmt: %v", what, err)
		}
		return strings.TrimSpace(string(b))
	}
	got := norm("the README's first Go block", first.text)
	want := norm("examples/calculator/main.go", readFile(t, "examples/calculator/main.go"))
	if got != want {
		t.Errorf("the README's first Go block (%s) is not examples/calculator/main.go:\n%s", first, lineDiff(got, want))
	}
}

// lineDiff lists the lines of a that b lacks (-) and of b that a lacks (+).
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// proseVars are the variables inline code in the prose names, with the
// types they may have (req is the request of whichever handler the
// paragraph is about): a span passes if it holds for one of them.
var proseVars = map[string][]string{
	"req": {module + "/core.CallToolRequest", module + "/core.ReadResourceRequest",
		module + "/core.GetPromptRequest", module + "/core.CompleteRequest"},
	"srv":  {module + "/core.Server"},
	"opts": {module + "/core.ServerOptions"},
}

var selectorChain = regexp.MustCompile(`^&?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+`)

// TestProseIdentifiers type-checks the inline code of README.md and
// docs/*.md that names this repository's Go API: an expression without
// placeholders (`req.NotifyProgress(ctx, 50, 100, "halfway")`) is checked
// whole with go/types; otherwise its leading selector (`core.InputRequired`
// of `core.InputRequired(...)`, `ServerOptions.AllowedOrigins`) must name
// an existing package member, field or method. A renamed identifier or a
// changed signature fails here before a reader's copy fails to compile.
func TestProseIdentifiers(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs := loadTypes(t, fset)
	named := func(qual string) types.Type {
		i := strings.LastIndex(qual, ".")
		p := pkgs[qual[:i]]
		if p == nil {
			return nil
		}
		if o, ok := p.Scope().Lookup(qual[i+1:]).(*types.TypeName); ok {
			return o.Type()
		}
		return nil
	}
	// One scratch package per alternative type of the prose variables.
	var scratches []*types.Package
	for k := 0; ; k++ {
		more := false
		scratch := types.NewPackage("example.com/prose", "prose")
		scope := scratch.Scope()
		for name, path := range imports {
			if p := pkgs[path]; p != nil {
				scope.Insert(types.NewPkgName(token.NoPos, scratch, name, p))
			}
		}
		for v, alts := range proseVars {
			if k+1 < len(alts) {
				more = true
			}
			if T := named(alts[min(k, len(alts)-1)]); T != nil {
				scope.Insert(types.NewVar(token.NoPos, scratch, v, types.NewPointer(T)))
			}
		}
		scope.Insert(types.NewVar(token.NoPos, scratch, "ctx", named("context.Context")))
		scope.Insert(types.NewVar(token.NoPos, scratch, "data", types.Universe.Lookup("any").Type()))
		for _, v := range []string{"state", "addr", "key"} {
			scope.Insert(types.NewVar(token.NoPos, scratch, v, types.Typ[types.String]))
		}
		scratches = append(scratches, scratch)
		if !more {
			break
		}
	}
	// typesNamed finds the exported types of our packages by name, for
	// spans such as ServerOptions.AllowedOrigins.
	typesNamed := map[string][]types.Type{}
	for path, p := range pkgs {
		if !strings.HasPrefix(path, module) {
			continue
		}
		for _, n := range p.Scope().Names() {
			if o, ok := p.Scope().Lookup(n).(*types.TypeName); ok && o.Exported() {
				typesNamed[n] = append(typesNamed[n], o.Type())
			}
		}
	}

	// resolve checks a selector chain: a package member, then fields and
	// methods; a variable of proseVars, then its fields and methods; or one
	// of our exported types, then its fields and methods.
	resolve := func(parts []string) error {
		root := parts[0]
		if path, ok := imports[root]; ok {
			obj := pkgs[path].Scope().Lookup(parts[1])
			if obj == nil || !obj.Exported() {
				return fmt.Errorf("package %s has no %s", path, parts[1])
			}
			if len(parts) > 2 && !hasPath(obj.Type(), parts[2:]) {
				return fmt.Errorf("%s.%s has no %s", root, parts[1], strings.Join(parts[2:], "."))
			}
			return nil
		}
		if o := scratches[0].Scope().Lookup(root); o != nil {
			for _, sc := range scratches {
				if hasPath(sc.Scope().Lookup(root).Type(), parts[1:]) {
					return nil
				}
			}
			return fmt.Errorf("%s (%s) has no %s", root, o.Type(), strings.Join(parts[1:], "."))
		}
		for _, T := range typesNamed[root] {
			if hasPath(T, parts[1:]) {
				return nil
			}
		}
		return fmt.Errorf("no type %s of this repository has %s", root, strings.Join(parts[1:], "."))
	}
	placeholder := regexp.MustCompile(`^undefined: [A-Za-z_][A-Za-z0-9_]*$`)

	checked := 0
	for _, f := range proseFiles(t) {
		spans, lines := inlineCode(readFile(t, f))
		for i, s := range spans {
			s = strings.TrimSpace(s)
			chain := selectorChain.FindString(s)
			if chain == "" {
				continue
			}
			parts := strings.Split(strings.TrimPrefix(chain, "&"), ".")
			root := parts[0]
			_, isPkg := imports[root]
			_, isVar := proseVars[root]
			if isPkg && pkgs[imports[root]] == nil {
				continue // a package this workspace does not have (yet)
			}
			if isPkg && !ast.IsExported(parts[1]) {
				continue // not a package member: an OpenTelemetry attribute (`mcp.method.name`), a build tag (`lambda.norpc`)
			}
			if !isPkg && !isVar && root != "ctx" && (len(typesNamed[root]) == 0 || !ast.IsExported(root)) {
				continue // not this repository's Go API
			}
			at := fmt.Sprintf("%s:%d: `%s`", f, lines[i], s)
			checked++
			// A whole expression without placeholders is type-checked as
			// written (arguments, composite literal fields, results).
			if s != chain && !strings.Contains(s, "...") && !strings.Contains(s, "…") && (isPkg || isVar) {
				if e, err := parser.ParseExpr(s); err == nil {
					var err error
					for _, sc := range scratches {
						if err = types.CheckExpr(fset, sc, token.NoPos, e, &types.Info{}); err == nil {
							break
						}
					}
					if err == nil {
						continue
					}
					msg := err.Error()
					if te, ok := err.(types.Error); ok {
						msg = te.Msg
					}
					if !placeholder.MatchString(msg) {
						t.Errorf("%s: %s", at, msg)
						continue
					}
					// A placeholder (T, In, key): check the selector only.
				}
			}
			if err := resolve(parts); err != nil {
				t.Errorf("%s: %v", at, err)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d inline spans: the extraction is not seeing the prose's code", checked)
	}
}

// proseFiles are the user-facing documents whose inline code must name the
// API as it is: README.md, the guides and the tutorials (docs/design.md
// discusses other SDKs' APIs and unexported names, and docs/porting.md
// names other SDKs' APIs: neither is checked).
func proseFiles(t *testing.T) []string {
	var out []string
	for _, f := range docFiles(t) {
		if f != filepath.Join("docs", "design.md") && f != filepath.Join("docs", "porting.md") {
			out = append(out, f)
		}
	}
	return out
}

// hasPath reports whether T has the field or method chain sel.
func hasPath(T types.Type, sel []string) bool {
	for _, s := range sel {
		obj, _, _ := types.LookupFieldOrMethod(T, true, nil, s)
		if obj == nil {
			// Unexported lookups need the package; exported ones do not.
			return false
		}
		T = obj.Type()
		if sig, ok := T.(*types.Signature); ok {
			if sig.Results().Len() == 0 {
				return len(sel) == 1 || s == sel[len(sel)-1]
			}
			T = sig.Results().At(0).Type()
		}
	}
	return true
}

// loadTypes type-checks the packages docs may name (and what they import)
// from the export data `go list -export` writes, inside the repository's
// workspace.
func loadTypes(t *testing.T, fset *token.FileSet) map[string]*types.Package {
	t.Helper()
	var want []string
	for _, path := range imports {
		want = append(want, path)
	}
	sort.Strings(want)
	// Only the packages that exist in this workspace.
	listCmd := exec.Command("go", append([]string{"list", "-e", "-f", "{{if not .Error}}{{.ImportPath}}{{end}}"}, want...)...)
	listCmd.Dir = repo.Root(t)
	out, err := listCmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	present := strings.Fields(string(out))
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, present...)...)
	cmd.Dir = repo.Root(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	pkgs := map[string]*types.Package{}
	for _, path := range present {
		p, err := imp.Import(path)
		if err != nil {
			t.Fatalf("importing %s: %v", path, err)
		}
		pkgs[path] = p
	}
	return pkgs
}
