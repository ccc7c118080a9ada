package policy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

// statelessPackages declare no package-level mutable state (STYLE 7.1):
// everything a client remembers hangs off a value the user constructs
// (client.Client, client.Conn, oauth.Source).
var statelessPackages = []string{"client", "client/oauth"}

// TestNoPackageState: the non-test files of package client and client/oauth
// declare no package-level variable but
//
//  1. compile-time interface checks: var _ I = ..., with I an interface;
//  2. sentinel errors: var X = errors.New("literal");
//  3. read-only values: variables the package never writes.
//
// Every package-level variable (sentinels and checks included) must be
// write-free, which the test checks on the type-checked syntax: no
// expression rooted in it (the variable, or a field, element or pointee
// reached through selectors, indexing and dereference) is the target of an
// assignment, ++/--, or a range clause, or has its address taken: by &, by
// slicing an array, or by calling a method with a pointer receiver (or
// taking such a method value) on it. A variable of rule 3 must moreover be
// a value all the way down, so that no copy of it can write it: its type
// may not be, or contain as a field or array element, a map, slice,
// channel, pointer, function or interface, nor a sync or sync/atomic type;
// fields a type of another package keeps unexported are not followed (this
// package cannot reach them). A list of versions is an array, not a slice.
//
// What it does not see: a value method of another package's type that
// writes through one of its own unexported references, unsafe and
// reflection.
func TestNoPackageState(t *testing.T) {
	root := repo.Root(t)
	exports := exportData(t, root, "./client", "./client/oauth")
	seen := map[string]bool{}
	for _, dir := range statelessPackages {
		pkg, findings := checkPackageState(t, exports, filepath.Join(root, dir), root)
		for _, f := range findings {
			t.Error(f)
		}
		for _, name := range pkg.Scope().Names() {
			if _, ok := pkg.Scope().Lookup(name).(*types.Var); ok {
				seen[dir+"."+name] = true
			}
		}
	}
	// The check sees the packages: their sentinels are package-level vars.
	for _, want := range []string{"client.ErrClosed", "client.ErrTimeout", "client/oauth.ErrBackoff"} {
		if !seen[want] {
			t.Errorf("the check did not see %s: it is not looking at the packages", want)
		}
	}
}

// TestNoPackageStateRule: the rule of TestNoPackageState flags each kind of
// mutable state and accepts the three allowed kinds (testdata/state).
func TestNoPackageStateRule(t *testing.T) {
	root := repo.Root(t)
	exports := exportData(t, root, "errors", "sync", "net/netip", "strings")
	_, findings := checkPackageState(t, exports, filepath.Join("testdata", "state"), "testdata")
	got := map[string]bool{}
	for _, f := range findings {
		// "state/state.go:12:5: var name ...": keep the name.
		i := strings.Index(f, ": var ")
		if i < 0 {
			t.Fatalf("finding without a var: %s", f)
		}
		name := strings.Fields(f[i+len(": var "):])[0]
		got[name] = true
		t.Log(f)
	}
	want := []string{
		"registry", "counter", "hits", "mu", "once", "cache", "versions", "table", "names", "handler",
		"cfg", "errReassigned", "point", "addressed", "ptrCalled", "methodValue", "rangeTarget", "fieldWritten",
		"deep", "nested", "anyValue",
	}
	for _, name := range want {
		if !got[name] {
			t.Errorf("var %s is mutable state the rule does not flag", name)
		}
		delete(got, name)
	}
	for name := range got {
		t.Errorf("var %s is allowed, but the rule flags it", name)
	}
}

// exportData runs go list -export -deps for patterns in the workspace and
// returns the export data file of each package, by import path.
func exportData(t *testing.T, root string, patterns ...string) map[string]string {
	t.Helper()
	out := goWork(t, root, append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, patterns...)...)
	m := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		m[p.ImportPath] = p.Export
	}
	return m
}

// checkPackageState type-checks the non-test files of dir and returns the
// package and a finding for each package-level variable that is mutable
// state by the rule of TestNoPackageState; positions are relative to rel.
func checkPackageState(t *testing.T, exports map[string]string, dir, rel string) (*types.Package, []string) {
	t.Helper()
	fset := token.NewFileSet()
	files := parseDir(t, fset, dir)
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(files[0].Name.Name, fset, files, info)
	if err != nil {
		t.Fatalf("type-check %s: %v", dir, err)
	}
	pos := func(p token.Pos) string {
		ps := fset.Position(p)
		if r, err := filepath.Rel(rel, ps.Filename); err == nil {
			ps.Filename = filepath.ToSlash(r)
		}
		return ps.String()
	}
	scope := pkg.Scope()
	// root returns the package-level variable an expression is rooted in.
	var root func(e ast.Expr) *types.Var
	root = func(e ast.Expr) *types.Var {
		switch x := e.(type) {
		case *ast.ParenExpr:
			return root(x.X)
		case *ast.SelectorExpr:
			if s, ok := info.Selections[x]; ok && s.Kind() == types.FieldVal {
				return root(x.X)
			}
			if _, ok := info.Selections[x]; !ok { // a qualified identifier: pkg.Name
				return root(x.Sel)
			}
		case *ast.IndexExpr:
			return root(x.X)
		case *ast.StarExpr:
			return root(x.X)
		case *ast.Ident:
			if v, ok := info.Uses[x].(*types.Var); ok && v.Parent() == scope {
				return v
			}
		}
		return nil
	}
	writes := map[*types.Var][]string{}
	note := func(e ast.Expr, at token.Pos, what string) {
		if v := root(e); v != nil {
			writes[v] = append(writes[v], what+" at "+pos(at))
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				if x.Tok != token.DEFINE {
					for _, l := range x.Lhs {
						note(l, l.Pos(), "assigned")
					}
				}
			case *ast.IncDecStmt:
				note(x.X, x.Pos(), "incremented")
			case *ast.RangeStmt:
				if x.Tok == token.ASSIGN {
					for _, l := range []ast.Expr{x.Key, x.Value} {
						if l != nil {
							note(l, l.Pos(), "assigned by range")
						}
					}
				}
			case *ast.UnaryExpr:
				if x.Op == token.AND {
					note(x.X, x.Pos(), "addressed (&)")
				}
			case *ast.SliceExpr:
				if tv, ok := info.Types[x.X]; ok {
					if _, isArray := tv.Type.Underlying().(*types.Array); isArray {
						note(x.X, x.Pos(), "sliced (addresses the array)")
					}
				}
			case *ast.SelectorExpr:
				s, ok := info.Selections[x]
				if !ok || s.Kind() != types.MethodVal {
					break
				}
				sig := s.Obj().(*types.Func).Type().(*types.Signature)
				if _, ptrRecv := sig.Recv().Type().(*types.Pointer); !ptrRecv {
					break
				}
				if _, recvIsPtr := info.Types[x.X].Type.Underlying().(*types.Pointer); recvIsPtr {
					break
				}
				note(x.X, x.Pos(), "pointer method "+x.Sel.Name+" called")
			}
			return true
		})
	}

	var findings []string
	declSpecs(files, token.VAR, func(spec ast.Spec) {
		vs := spec.(*ast.ValueSpec)
		for i, id := range vs.Names {
			var value ast.Expr
			if i < len(vs.Values) {
				value = vs.Values[i]
			}
			if id.Name == "_" {
				if vs.Type == nil || !types.IsInterface(info.Types[vs.Type].Type) {
					findings = append(findings, fmt.Sprintf("%s: var _ without an interface type: only compile-time interface checks (var _ I = ...) may be blank", pos(id.Pos())))
				}
				continue
			}
			v := info.Defs[id].(*types.Var)
			report := func(why string) {
				findings = append(findings, fmt.Sprintf("%s: var %s is package-level mutable state: %s; hang it off a value the user constructs (a Client, a Conn, a Source), or make it a constant", pos(id.Pos()), id.Name, why))
			}
			if w := writes[v]; len(w) > 0 {
				report("the package may write it (" + strings.Join(w, "; ") + ")")
				continue
			}
			if isSentinel(info, value) {
				continue
			}
			if why := referenceIn(pkg, v.Type(), map[types.Type]bool{}); why != "" {
				report(why)
			}
		}
	})
	sort.Strings(findings)
	return pkg, findings
}

// isSentinel reports whether e is errors.New("literal").
func isSentinel(info *types.Info, e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "errors" || fn.Name() != "New" {
		return false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	return ok && lit.Kind == token.STRING
}

// referenceIn says why a value of type typ can be written through a copy
// (it is or holds a reference, or is a sync type), or "" if it cannot.
// Fields of another package's type that it keeps unexported are not
// followed.
func referenceIn(pkg *types.Package, typ types.Type, seen map[types.Type]bool) string {
	if seen[typ] {
		return ""
	}
	seen[typ] = true
	if n, ok := typ.(*types.Named); ok && n.Obj().Pkg() != nil {
		switch n.Obj().Pkg().Path() {
		case "sync", "sync/atomic":
			return "its type " + n.String() + " is a sync type (shared state by design)"
		}
	}
	switch u := typ.Underlying().(type) {
	case *types.Basic:
		return ""
	case *types.Array:
		return referenceIn(pkg, u.Elem(), seen)
	case *types.Struct:
		named, _ := typ.(*types.Named)
		for i := range u.NumFields() {
			fld := u.Field(i)
			if named != nil && named.Obj().Pkg() != pkg && !fld.Exported() {
				continue // another package's unexported field: out of reach
			}
			if why := referenceIn(pkg, fld.Type(), seen); why != "" {
				return why
			}
		}
		return ""
	case *types.Map:
		return "its type " + typ.String() + " is a map"
	case *types.Slice:
		return "its type " + typ.String() + " is a slice (a copy shares the elements; use an array)"
	case *types.Chan:
		return "its type " + typ.String() + " is a channel"
	case *types.Pointer:
		return "its type " + typ.String() + " is a pointer"
	case *types.Signature:
		return "its type " + typ.String() + " is a function"
	case *types.Interface:
		return "its type " + typ.String() + " is an interface (not an errors.New sentinel)"
	}
	return "its type " + typ.String() + " is not a plain value"
}
