package terraform_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

const gcfModule = terraformDir + "/modules/mcp-gcf"

// taskWiring evaluates the task variables the mcp-lambda module gives the
// function (local.task_wiring) with the module's variables in set.
func taskWiring(t *testing.T, m *module, set map[string]cty.Value) map[string]string {
	t.Helper()
	v := eval(t, m.fakesWith(set), m.local(t, "task_wiring"))
	out := map[string]string{}
	for k, e := range v.AsValueMap() {
		out[k] = e.AsString()
	}
	return out
}

// TestTaskWiring checks the task variables of the mcp-lambda module
// against the deploy kit that reads them: tasks is on by default and gives
// MCPFN_TASK_RUNNER=lambda (Lambda freezes the invocation that created a
// task), off gives none; task_claim_timeout, unset by default, gives
// MCPFN_TASK_CLAIM_TIMEOUT in seconds. Every value the module can give is
// one lambdaenv.Load accepts, with the runner and the timeout it names, and
// the validation's bounds are the ones the description states.
func TestTaskWiring(t *testing.T) {
	m := loadModule(t, lambdaModule)
	if d := m.variableDefault(t, "tasks"); d == cty.NilVal || !d.True() {
		t.Errorf("var.tasks defaults to %#v, want true: on Lambda tasks must not run in the invocation that created them", d)
	}
	if d := m.variableDefault(t, "task_claim_timeout"); d == cty.NilVal || !d.IsNull() {
		t.Errorf("var.task_claim_timeout defaults to %#v, want null (the kit's default)", d)
	}
	noTimeout := cty.NullVal(cty.Number)
	for _, c := range []struct {
		tasks   bool
		timeout cty.Value
		want    map[string]string
	}{
		{true, noTimeout, map[string]string{"MCPFN_TASK_RUNNER": "lambda"}},
		{false, noTimeout, map[string]string{"MCPFN_TASK_RUNNER": "none"}},
		{true, cty.NumberIntVal(1), map[string]string{"MCPFN_TASK_RUNNER": "lambda", "MCPFN_TASK_CLAIM_TIMEOUT": "1"}},
		{true, cty.NumberIntVal(21600), map[string]string{"MCPFN_TASK_RUNNER": "lambda", "MCPFN_TASK_CLAIM_TIMEOUT": "21600"}},
	} {
		got := taskWiring(t, m, map[string]cty.Value{"tasks": cty.BoolVal(c.tasks), "task_claim_timeout": c.timeout})
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("tasks = %v, task_claim_timeout = %#v: task wiring %v, want %v", c.tasks, c.timeout, got, c.want)
			continue
		}
		// What Lambda and the rest of the module give the function.
		for k, v := range map[string]string{
			"AWS_LAMBDA_FUNCTION_NAME": "mock", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIDTEST",
			"AWS_SECRET_ACCESS_KEY": "test", "MCPFN_DYNAMODB_TABLE": "mock-sessions", "MCPFN_KEYS_SECRET_ID": "",
			"MCPFN_STATE_KEY": "", "MCPFN_TASK_CLAIM_TIMEOUT": "", "MCPFN_LOG_LEVEL": "error",
		} {
			t.Setenv(k, v)
		}
		for k, v := range got {
			t.Setenv(k, v)
		}
		cfg, err := lambdaenv.Load(t.Context(), nil)
		if err != nil {
			t.Errorf("lambdaenv.Load refuses the module's task wiring %v: %v", got, err)
			continue
		}
		if _, ok := cfg.Server.TaskRunner.(*taskrunner.Runner); ok != (got["MCPFN_TASK_RUNNER"] == "lambda") {
			t.Errorf("task wiring %v: the kit's runner is %T", got, cfg.Server.TaskRunner)
		}
		var want time.Duration
		if s, ok := got["MCPFN_TASK_CLAIM_TIMEOUT"]; ok {
			n, _ := strconv.Atoi(s)
			want = time.Duration(n) * time.Second
		}
		if cfg.Server.TaskClaimTimeout != want {
			t.Errorf("task wiring %v: TaskClaimTimeout %v, want %v", got, cfg.Server.TaskClaimTimeout, want)
		}
	}

	// The validation accepts 1 to 21600 whole seconds, and the description
	// states the kit's default.
	v := m.named(t, "variable", "task_claim_timeout")
	validations := children(v, "validation")
	if len(validations) != 1 {
		t.Fatalf("var.task_claim_timeout has %d validation blocks, want 1", len(validations))
	}
	cond := attr(t, validations[0], "condition")
	for _, c := range []struct {
		v  cty.Value
		ok bool
	}{
		{noTimeout, true}, {cty.NumberIntVal(1), true}, {cty.NumberIntVal(21600), true},
		{cty.NumberIntVal(0), false}, {cty.NumberIntVal(-5), false}, {cty.NumberIntVal(21601), false}, {cty.NumberFloatVal(1.5), false},
	} {
		if got := eval(t, m.fakesWith(map[string]cty.Value{"task_claim_timeout": c.v}), cond); got.True() != c.ok {
			t.Errorf("task_claim_timeout = %#v: the validation says %v, want %v", c.v, got.True(), c.ok)
		}
	}
	desc := literalString(t, attr(t, v, "description"))
	if want := fmt.Sprintf("%d s", int(core.DefaultTaskClaimTimeout.Seconds())); !strings.Contains(desc, want) {
		t.Errorf("var.task_claim_timeout's description does not state the kit's default, core.DefaultTaskClaimTimeout (%s): %q", want, desc)
	}
}

// TestGCFMaxInstances checks that the mcp-gcf module tells the deploy kit
// the function's bound on instances (MCPFN_MAX_INSTANCES, by which the kit
// serves task tools on one instance only) from the same variable as the
// function's max_instance_count, and refuses it in var.environment.
func TestGCFMaxInstances(t *testing.T) {
	t.Parallel()
	m := loadModule(t, gcfModule)
	fn := m.one(t, "resource", "google_cloudfunctions2_function")
	sc := children(fn, "service_config")
	if len(sc) != 1 {
		t.Fatalf("the function has %d service_config blocks, want 1", len(sc))
	}
	if r := refs(attr(t, sc[0], "max_instance_count")); len(r) != 1 || r[0] != "var.max_instance_count" {
		t.Errorf("service_config.max_instance_count = %v, want var.max_instance_count", r)
	}
	ctx := m.fakesWith(map[string]cty.Value{"max_instance_count": cty.NumberIntVal(1),
		"auth": cty.NullVal(cty.DynamicPseudoType), "allowed_origins": cty.ListValEmpty(cty.String)})
	wiring := eval(t, ctx, m.local(t, "wiring")).AsValueMap()
	if v, ok := wiring["MCPFN_MAX_INSTANCES"]; !ok || v.AsString() != "1" {
		t.Errorf("max_instance_count = 1: MCPFN_MAX_INSTANCES = %#v, want \"1\"", v)
	}
	env := m.named(t, "variable", "environment")
	refused := false
	for _, val := range children(env, "validation") {
		hclsyntax.VisitAll(attr(t, val, "condition"), func(n hclsyntax.Node) hcl.Diagnostics {
			if tmpl, ok := n.(*hclsyntax.TemplateExpr); ok && tmpl.IsStringLiteral() {
				if s, _ := tmpl.Value(nil); s.AsString() == "MCPFN_MAX_INSTANCES" {
					refused = true
				}
			}
			return nil
		})
	}
	if !refused {
		t.Error("var.environment does not refuse MCPFN_MAX_INSTANCES, which the module sets")
	}
}
