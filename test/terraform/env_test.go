package terraform_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

var envName = regexp.MustCompile(`MCPFN_[A-Z0-9_]+`)

// readers are the Go packages whose environment variables the Terraform
// sets: the public deploy kits (MCPFN_STREAMING included), the variables
// they share (deploy/mcpfnenv) and the MCPFN_AUTH_* ones (auth.FromEnv).
var readers = []string{repoRoot + "/deploy/lambdaenv", repoRoot + "/deploy/gcfenv", repoRoot + "/deploy/mcpfnenv", repoRoot + "/auth"}

// goEnvNames returns the MCPFN_ names that appear as string literals in
// the non-test Go files of dirs (a missing directory is skipped), and the
// directories read.
func goEnvNames(t *testing.T, dirs ...string) (map[string]bool, []string) {
	t.Helper()
	names := map[string]bool{}
	var read []string
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		n := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			n++
			ast.Inspect(file, func(node ast.Node) bool {
				if lit, ok := node.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && envName.MatchString(s) && envName.FindString(s) == s {
						names[s] = true
					}
				}
				return true
			})
		}
		if n > 0 {
			read = append(read, dir)
		}
	}
	return names, read
}

// TestEnvironment checks the environment of the Lambda function against
// what the Go code reads: every MCPFN_ name in the Terraform (modules,
// examples, descriptions) is one the Go code reads; the function gets the
// table (MCPFN_DYNAMODB_TABLE = the session table's name), the secret
// (MCPFN_KEYS_SECRET_ID = the key secret's ARN) and MCPFN_STREAMING = "1".
func TestEnvironment(t *testing.T) {
	t.Parallel()
	goNames, read := goEnvNames(t, readers...)
	if len(goNames) == 0 {
		t.Fatalf("no MCPFN_ variables found in %v", readers)
	}
	t.Logf("variables read by %v: %v", read, slices.Sorted(func(yield func(string) bool) {
		for k := range goNames {
			if !yield(k) {
				return
			}
		}
	}))
	lambdaRead := slices.Contains(read, repoRoot+"/deploy/lambdaenv")

	// Every MCPFN_ name anywhere in the Terraform is one the Go code reads.
	for _, f := range tfFiles(t, terraformDir) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range envName.FindAllString(string(src), -1) {
			if !goNames[name] && !(name == "MCPFN_STREAMING" && !lambdaRead) {
				t.Errorf("%s: %s is not read by %v", f, name, read)
			}
		}
	}

	// The function's environment: merge(var.environment, local.<wiring>),
	// where wiring is an object of MCPFN_ variables.
	m := loadModule(t, lambdaModule)
	fn := m.one(t, "resource", "aws_lambda_function")
	envs := children(fn, "environment")
	if len(envs) != 1 {
		t.Fatalf("the function has %d environment blocks, want 1", len(envs))
	}
	varsExpr := attr(t, envs[0], "variables")
	var wiring *hclsyntax.ObjectConsExpr
	for _, r := range refs(varsExpr) {
		if name, ok := strings.CutPrefix(r, "local."); ok {
			if obj, ok := m.local(t, name).(*hclsyntax.ObjectConsExpr); ok {
				wiring = obj
			}
		}
	}
	if obj, ok := varsExpr.(*hclsyntax.ObjectConsExpr); ok {
		wiring = obj
	}
	if wiring == nil {
		t.Fatalf("%s: the function's environment is neither an object nor uses a local object", varsExpr.Range())
	}
	ctx := m.fakes()
	got := map[string]hclsyntax.Expression{}
	for _, item := range wiring.Items {
		got[hcl.ExprAsKeyword(item.KeyExpr)] = item.ValueExpr
	}
	table := "aws_dynamodb_table." + m.one(t, "resource", "aws_dynamodb_table").Labels[1]
	secret := "aws_secretsmanager_secret." + m.one(t, "resource", "aws_secretsmanager_secret").Labels[1]
	for name, want := range map[string]string{
		"MCPFN_DYNAMODB_TABLE": table + ".name",
		"MCPFN_KEYS_SECRET_ID": secret + ".arn",
		"MCPFN_STREAMING":      "1",
	} {
		e, ok := got[name]
		if !ok {
			t.Errorf("the function's environment lacks %s", name)
			continue
		}
		if v := eval(t, ctx, e); v.AsString() != want {
			t.Errorf("%s = %s, want %s", name, v.AsString(), want)
		}
	}
	for name := range got {
		if !goNames[name] && !(name == "MCPFN_STREAMING" && !lambdaRead) {
			t.Errorf("the function's environment sets %s, which %v do not read", name, read)
		}
	}
	if !lambdaRead {
		t.Logf("deploy/lambdaenv has no Go files yet: MCPFN_STREAMING is not checked against it")
	}
}
