package policy_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

// eraFile names the files of core and client that hold an era's own code:
// the seam (era.go), each era (era_modern.go, era_legacy.go) and the
// legacy era's concerns (legacy_*.go).
var eraFile = regexp.MustCompile(`^(era(_[a-z_]+)?|legacy_[a-z_]+)\.go$`)

// eraCheck reports the era checks of one file: a branch on which era a
// request or a connection speaks, which belongs behind the era interface
// (docs/design.md, "The era seam"). They are the era values (eraModern,
// eraLegacy), a version's era (isLegacy, isModernVersion,
// isLegacyVersion), Modern() and a Call's modern field, and a type
// assertion or switch to an era's type (modernEra, legacyEra).
func eraChecks(fset *token.FileSet, f *ast.File) []string {
	var found []string
	add := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	eraType := func(e ast.Expr) bool {
		if s, ok := e.(*ast.StarExpr); ok {
			e = s.X
		}
		id, ok := e.(*ast.Ident)
		return ok && (id.Name == "modernEra" || id.Name == "legacyEra")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			switch n.Name {
			case "eraModern", "eraLegacy":
				add(n, n.Name)
			}
		case *ast.CallExpr:
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				switch fn.Name {
				case "isLegacy", "isModernVersion", "isLegacyVersion":
					add(n, fn.Name+"(...)")
				}
			case *ast.SelectorExpr:
				if fn.Sel.Name == "Modern" && len(n.Args) == 0 {
					add(n, "Modern()")
				}
			}
		case *ast.SelectorExpr:
			if n.Sel.Name == "modern" {
				add(n, ".modern")
			}
		case *ast.TypeAssertExpr:
			if n.Type != nil && eraType(n.Type) {
				add(n, "type assertion to an era")
			}
		case *ast.TypeSwitchStmt:
			for _, c := range n.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if eraType(e) {
						add(e, "type switch on an era")
					}
				}
			}
		}
		return true
	})
	return found
}

// TestEraChecksInEraFiles: in core and client, only the era files branch
// on the era; everything else asks the era (its interface) and never
// which one it is.
func TestEraChecksInEraFiles(t *testing.T) {
	root := repo.Root(t)
	eraFiles := 0
	for _, dir := range []string{"core", "client"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			if eraFile.MatchString(name) {
				eraFiles++
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, filepath.Join(root, dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range eraChecks(fset, f) {
				t.Errorf("an era check outside the era files: %s", strings.TrimPrefix(c, root+"/"))
			}
		}
	}
	if eraFiles < 6 { // era.go, era_modern.go, era_legacy.go in each
		t.Errorf("%d era files in core and client: the check is not looking at them", eraFiles)
	}
}

// TestEraChecksRule: the rule flags each kind of era check and passes
// code that asks the era.
func TestEraChecksRule(t *testing.T) {
	const src = `package p
func f(r *Request, c *Conn, call *Call, x *exchange) {
	if r.era == eraModern {}
	_ = eraLegacy
	if isLegacy(v) || isModernVersion(v) || isLegacyVersion(v) {}
	if c.Modern() {}
	if call.modern != nil {}
	_, _ = c.era.(*modernEra)
	switch c.era.(type) {
	case *legacyEra:
	}
	// Asking the era is not a check.
	_ = r.era.augmentsTasks()
	_ = x.era.name()
	_ = modernEraName
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := eraChecks(fset, f)
	for _, c := range got {
		t.Log(c)
	}
	if len(got) != 9 {
		t.Errorf("%d checks found, want 9 (eraModern, eraLegacy, three version checks, Modern(), .modern, an assertion, a switch)", len(got))
	}
}
