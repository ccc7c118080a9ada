package terraform_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

// TestRolePolicy checks the function role of modules/mcp-lambda: its
// inline policies grant exactly dynamo.IAMActions on the session table and
// its indexes, exactly secretsmanager.IAMActions on the key secret, writing
// to the function's own log group and, optionally, kms:Decrypt on the
// secret's key and, for the tasks variable, lambda:InvokeFunction on the
// function itself; nothing else, and no managed policies.
func TestRolePolicy(t *testing.T) {
	t.Parallel()
	m := loadModule(t, lambdaModule)
	ctx := m.fakes()
	fn := m.one(t, "resource", "aws_lambda_function")
	role := m.one(t, "resource", "aws_iam_role")
	roleRef := "aws_iam_role." + role.Labels[1]
	fnRef := "aws_lambda_function." + fn.Labels[1]
	if got := eval(t, ctx, attr(t, fn, "role")).AsString(); got != roleRef+".arn" {
		t.Fatalf("the function's role is %s, want %s.arn", got, roleRef)
	}
	for _, a := range []string{"managed_policy_arns", "inline_policy", "permissions_boundary"} {
		if _, ok := role.Body.Attributes[a]; ok {
			t.Errorf("aws_iam_role.%s sets %s: grant through aws_iam_role_policy only", role.Labels[1], a)
		}
	}
	for _, typ := range []string{"aws_iam_role_policy_attachment", "aws_iam_policy_attachment", "aws_iam_role_policies_exclusive", "aws_iam_role_policy_attachments_exclusive", "aws_iam_policy"} {
		if bs := m.blocks("resource", typ); len(bs) > 0 {
			t.Errorf("the module has %s resources: the role must have its inline policies only", typ)
		}
	}
	for _, b := range children(role, "inline_policy") {
		t.Errorf("aws_iam_role.%s has an inline_policy block at %s", role.Labels[1], b.Range())
	}

	// The policy documents attached to the role.
	var statements []*hclsyntax.Block
	policies := m.blocks("resource", "aws_iam_role_policy")
	if len(policies) == 0 {
		t.Fatal("no aws_iam_role_policy")
	}
	for _, p := range policies {
		if got := eval(t, ctx, attr(t, p, "role")).AsString(); got != roleRef+".id" {
			t.Errorf("aws_iam_role_policy.%s is attached to %s, want %s.id", p.Labels[1], got, roleRef)
		}
		doc := eval(t, ctx, attr(t, p, "policy")).AsString() // "data.aws_iam_policy_document.NAME.json"
		name, ok := strings.CutPrefix(doc, "data.aws_iam_policy_document.")
		name, ok2 := strings.CutSuffix(name, ".json")
		if !ok || !ok2 {
			t.Fatalf("aws_iam_role_policy.%s: policy is %s, want a data.aws_iam_policy_document's json", p.Labels[1], doc)
		}
		d := m.named(t, "data", "aws_iam_policy_document", name)
		for _, a := range []string{"source_policy_documents", "override_policy_documents"} {
			if _, ok := d.Body.Attributes[a]; ok {
				t.Errorf("data.aws_iam_policy_document.%s merges %s: the test cannot see those statements", name, a)
			}
		}
		if ds := children(d, "dynamic"); len(ds) > 0 {
			t.Errorf("data.aws_iam_policy_document.%s has dynamic blocks: write its statements out", name)
		}
		statements = append(statements, children(d, "statement")...)
	}

	table := "aws_dynamodb_table." + m.one(t, "resource", "aws_dynamodb_table").Labels[1]
	secret := "aws_secretsmanager_secret." + m.one(t, "resource", "aws_secretsmanager_secret").Labels[1]
	logs := "aws_cloudwatch_log_group." + m.one(t, "resource", "aws_cloudwatch_log_group").Labels[1]
	type grant struct {
		actions   []string // exactly these, over the statements of the service
		resources []string // exactly these, in each statement of the service
	}
	want := map[string]grant{
		"dynamodb":       {dynamo.IAMActions(), []string{table + ".arn", table + ".arn/index/*"}},
		"secretsmanager": {secretsmanager.IAMActions(), []string{secret + ".arn"}},
		"logs":           {[]string{"logs:CreateLogStream", "logs:PutLogEvents"}, []string{logs + ".arn:*"}},
		"kms":            {[]string{"kms:Decrypt"}, []string{"var.secret_kms_key_arn"}},
		// With var.tasks: the lambda task runner invokes the function itself.
		"lambda": {[]string{"lambda:InvokeFunction"}, []string{fnRef + ".arn"}},
	}
	got := map[string][]string{}
	for _, s := range statements {
		where := s.Range().String()
		if a, ok := s.Body.Attributes["effect"]; ok && literalString(t, a.Expr) != "Allow" {
			t.Errorf("%s: a statement with effect %q", where, literalString(t, a.Expr))
		}
		for _, a := range []string{"not_actions", "not_resources"} {
			if _, ok := s.Body.Attributes[a]; ok {
				t.Errorf("%s: %s widens the grant", where, a)
			}
		}
		actions := literalStrings(t, attr(t, s, "actions"))
		resources := stringsOf(t, s.Range(), eval(t, ctx, attr(t, s, "resources")))
		service := ""
		for _, a := range actions {
			prefix, _, _ := strings.Cut(a, ":")
			if strings.Contains(a, "*") {
				t.Errorf("%s: wildcard action %q", where, a)
			}
			if service != "" && prefix != service {
				t.Errorf("%s: one statement grants %s and %s actions: keep one service per statement", where, service, prefix)
			}
			service = prefix
		}
		g, ok := want[service]
		if !ok {
			t.Errorf("%s: grants %q, which the function does not need", where, actions)
			continue
		}
		got[service] = append(got[service], actions...)
		if !sameSet(resources, g.resources) {
			t.Errorf("%s: %s actions granted on %q, want exactly %q", where, service, resources, g.resources)
		}
	}
	for service, g := range want {
		if service == "kms" && got[service] == nil {
			continue // only with secret_kms_key_arn
		}
		if service == "lambda" && got[service] == nil {
			t.Errorf("no statement grants lambda:InvokeFunction on the function: the lambda task runner (var.tasks) needs it")
			continue
		}
		gs := slices.Sorted(slices.Values(got[service]))
		if ws := slices.Sorted(slices.Values(g.actions)); !slices.Equal(gs, ws) {
			t.Errorf("%s actions granted: %q, want exactly %q", service, gs, ws)
		}
	}
}
