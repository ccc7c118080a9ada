// Package terraform_test checks the Terraform under infra/terraform against
// the Go code it provisions for: the session table against store/dynamo,
// the signing-key secret against store/secretsmanager, the role's policy
// against their IAMActions, and the function's environment against the
// deploy kits (deploy/lambdaenv, deploy/gcfenv). It reads the HCL with
// hashicorp/hcl and needs no terraform binary; test/terraform/check.sh
// runs terraform validate and the mock-provider tests.
package terraform_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Paths, relative to this package's directory (where go test runs).
const (
	repoRoot      = "../.."
	terraformDir  = repoRoot + "/infra/terraform"
	lambdaModule  = terraformDir + "/modules/mcp-lambda"
	lambdaExample = terraformDir + "/examples/lambda"
)

// module is the parsed .tf files of one directory.
type module struct {
	dir    string
	bodies []*hclsyntax.Body
}

// loadModule parses the .tf files of dir; syntax errors are fatal.
func loadModule(t *testing.T, dir string) *module {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in %s (%v)", dir, err)
	}
	p := hclparse.NewParser()
	m := &module{dir: dir}
	for _, f := range files {
		file, diags := p.ParseHCLFile(f)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", f, diags.Error())
		}
		m.bodies = append(m.bodies, file.Body.(*hclsyntax.Body))
	}
	return m
}

// blocks returns the top-level blocks of type typ whose labels start with
// labels.
func (m *module) blocks(typ string, labels ...string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range m.bodies {
		for _, blk := range b.Blocks {
			if blk.Type == typ && len(blk.Labels) >= len(labels) && slices.Equal(blk.Labels[:len(labels)], labels) {
				out = append(out, blk)
			}
		}
	}
	return out
}

// one returns the only block kind "typ" (kind "resource" or "data") of
// any name; none or several is fatal.
func (m *module) one(t *testing.T, kind, typ string) *hclsyntax.Block {
	t.Helper()
	bs := m.blocks(kind, typ)
	if len(bs) != 1 {
		t.Fatalf("%s: want exactly one %s %q, found %d", m.dir, kind, typ, len(bs))
	}
	return bs[0]
}

// named returns the block kind with exactly these labels ("resource"
// "TYPE" "NAME", "module" "NAME"); absent is fatal.
func (m *module) named(t *testing.T, kind string, labels ...string) *hclsyntax.Block {
	t.Helper()
	var found []*hclsyntax.Block
	for _, b := range m.blocks(kind, labels...) {
		if len(b.Labels) == len(labels) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: want one %s %q, found %d", m.dir, kind, labels, len(found))
	}
	return found[0]
}

// local returns the expression of local value name.
func (m *module) local(t *testing.T, name string) hclsyntax.Expression {
	t.Helper()
	for _, b := range m.blocks("locals") {
		if a, ok := b.Body.Attributes[name]; ok {
			return a.Expr
		}
	}
	t.Fatalf("%s: no local value %q", m.dir, name)
	return nil
}

// variableDefault returns the default of variable name (cty.NilVal if it
// has none).
func (m *module) variableDefault(t *testing.T, name string) cty.Value {
	t.Helper()
	v := m.named(t, "variable", name)
	a, ok := v.Body.Attributes["default"]
	if !ok {
		return cty.NilVal
	}
	return literal(t, a.Expr)
}

// attr returns the expression of attribute name of b; absent is fatal.
func attr(t *testing.T, b *hclsyntax.Block, name string) hclsyntax.Expression {
	t.Helper()
	a, ok := b.Body.Attributes[name]
	if !ok {
		t.Fatalf("%s %v: no attribute %q", b.Type, b.Labels, name)
	}
	return a.Expr
}

// children returns the nested blocks of type typ of b.
func children(b *hclsyntax.Block, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, c := range b.Body.Blocks {
		if c.Type == typ {
			out = append(out, c)
		}
	}
	return out
}

// literal evaluates an expression that must be constant.
func literal(t *testing.T, e hclsyntax.Expression) cty.Value {
	t.Helper()
	v, diags := e.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("%s: want a literal value: %s", e.Range(), diags.Error())
	}
	return v
}

func literalString(t *testing.T, e hclsyntax.Expression) string {
	t.Helper()
	v := literal(t, e)
	if v.IsNull() || !v.Type().Equals(cty.String) {
		t.Fatalf("%s: want a string, got %#v", e.Range(), v)
	}
	return v.AsString()
}

func literalStrings(t *testing.T, e hclsyntax.Expression) []string {
	t.Helper()
	return stringsOf(t, e.Range(), literal(t, e))
}

func stringsOf(t *testing.T, r hcl.Range, v cty.Value) []string {
	t.Helper()
	if v.IsNull() || !(v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType()) {
		t.Fatalf("%s: want a list of strings, got %#v", r, v)
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.Type().Equals(cty.String) {
			t.Fatalf("%s: want a list of strings, got an element %#v", r, e)
		}
		out = append(out, e.AsString())
	}
	return out
}

// fakes is an evaluation context in which every resource and data source
// of m is an object whose attributes arn, name, id, json, function_name,
// execution_arn, invoke_arn and response_streaming_invoke_arn are the strings
// "TYPE.NAME.ATTR" (a one-element tuple of it for resources with count),
// every variable is the string "var.NAME" (as if the caller set it) except
// two kinds that choose what the module creates rather than name a value:
// a bool variable is its default, and a variable existing_* (bring your
// own table or secret) is null, the module creating its own. The local
// values are whatever evaluates with those, and jsonencode, coalesce, join,
// split, length, min, floor, tostring and merge exist. Evaluating a reference in
// it shows which resource attribute the reference names.
func (m *module) fakes() *hcl.EvalContext {
	return m.fakesWith(nil)
}

// fakesWith is fakes with the variables of set (by name) taking the given
// values instead.
func (m *module) fakesWith(set map[string]cty.Value) *hcl.EvalContext {
	objs := map[string]map[string]cty.Value{} // "resource type" or "data" -> name -> value
	for _, kind := range []string{"resource", "data"} {
		for _, b := range m.blocks(kind) {
			prefix := b.Labels[0] + "." + b.Labels[1]
			if kind == "data" {
				prefix = "data." + prefix
			}
			attrs := map[string]cty.Value{}
			for _, a := range []string{"arn", "name", "id", "json", "function_name", "execution_arn", "invoke_arn", "response_streaming_invoke_arn"} {
				attrs[a] = cty.StringVal(prefix + "." + a)
			}
			v := cty.ObjectVal(attrs)
			if _, counted := b.Body.Attributes["count"]; counted {
				v = cty.TupleVal([]cty.Value{v})
			}
			key := b.Labels[0]
			if kind == "data" {
				key = "data\x00" + key
			}
			if objs[key] == nil {
				objs[key] = map[string]cty.Value{}
			}
			objs[key][b.Labels[1]] = v
		}
	}
	vars := map[string]cty.Value{}
	data := map[string]cty.Value{}
	for k, v := range objs {
		if typ, ok := strings.CutPrefix(k, "data\x00"); ok {
			data[typ] = cty.ObjectVal(v)
		} else {
			vars[k] = cty.ObjectVal(v)
		}
	}
	vars["data"] = cty.ObjectVal(data)
	vs := map[string]cty.Value{}
	for _, b := range m.blocks("variable") {
		name := b.Labels[0]
		vs[name] = cty.StringVal("var." + name)
		if typ, ok := b.Body.Attributes["type"]; ok && hcl.ExprAsKeyword(typ.Expr) == "bool" {
			if d, ok := b.Body.Attributes["default"]; ok {
				if v, diags := d.Expr.Value(nil); !diags.HasErrors() {
					vs[name] = v
				}
			}
		}
		if strings.HasPrefix(name, "existing_") {
			vs[name] = cty.NullVal(cty.String)
		}
		if v, ok := set[name]; ok {
			vs[name] = v
		}
	}
	vars["var"] = cty.ObjectVal(vs)
	ctx := &hcl.EvalContext{Variables: vars, Functions: map[string]function.Function{
		"jsonencode": stdlib.JSONEncodeFunc,
		"coalesce":   stdlib.CoalesceFunc,
		"join":       stdlib.JoinFunc,
		"split":      stdlib.SplitFunc,
		"length":     stdlib.LengthFunc,
		"min":        stdlib.MinFunc,
		"floor":      stdlib.FloorFunc,
		"tostring":   stdlib.MakeToFunc(cty.String),
		"merge":      stdlib.MergeFunc,
	}}
	// Local values that evaluate in this context (a few passes, for locals
	// that use other locals); the others are left out.
	locals := map[string]cty.Value{}
	for range 3 {
		ctx.Variables["local"] = cty.ObjectVal(locals)
		for _, b := range m.blocks("locals") {
			for name, a := range b.Body.Attributes {
				if v, diags := a.Expr.Value(ctx); !diags.HasErrors() {
					locals[name] = v
				}
			}
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx
}

// eval evaluates e in ctx; errors are fatal.
func eval(t *testing.T, ctx *hcl.EvalContext, e hclsyntax.Expression) cty.Value {
	t.Helper()
	v, diags := e.Value(ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", e.Range(), diags.Error())
	}
	return v
}

// tfFiles returns every .tf file under dir.
func tfFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no .tf files under %s", dir)
	}
	return out
}

// refs returns the references of e as strings such as
// "aws_dynamodb_table.sessions.arn" (index steps are left out).
func refs(e hclsyntax.Expression) []string {
	var out []string
	for _, tr := range e.Variables() {
		var b strings.Builder
		for _, step := range tr {
			switch s := step.(type) {
			case hcl.TraverseRoot:
				b.WriteString(s.Name)
			case hcl.TraverseAttr:
				b.WriteString("." + s.Name)
			}
		}
		out = append(out, b.String())
	}
	return out
}
