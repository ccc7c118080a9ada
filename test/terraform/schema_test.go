package terraform_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/store/secretsmanager"
)

// TestSessionTable compares the aws_dynamodb_table of modules/mcp-lambda
// with dynamo.TableInput and the constants of store/dynamo: key schema,
// attribute definitions, the index with its key schema and projection,
// billing mode and time to live; and the table's name with
// dynamo.DefaultTableName.
func TestSessionTable(t *testing.T) {
	t.Parallel()
	m := loadModule(t, lambdaModule)
	table := m.one(t, "resource", "aws_dynamodb_table")
	want := dynamo.TableInput(dynamo.DefaultTableName)

	if got := literalString(t, attr(t, table, "billing_mode")); got != string(want.BillingMode) {
		t.Errorf("billing_mode = %q, want %q", got, want.BillingMode)
	}

	// Key schema: hash_key and range_key of the table.
	wantKeys := keyNames(want.KeySchema)
	if got := literalString(t, attr(t, table, "hash_key")); got != wantKeys[types.KeyTypeHash] {
		t.Errorf("hash_key = %q, want %q", got, wantKeys[types.KeyTypeHash])
	}
	if a, ok := table.Body.Attributes["range_key"]; ok || wantKeys[types.KeyTypeRange] != "" {
		got := ""
		if ok {
			got = literalString(t, a.Expr)
		}
		if got != wantKeys[types.KeyTypeRange] {
			t.Errorf("range_key = %q, want %q", got, wantKeys[types.KeyTypeRange])
		}
	}

	// Attribute definitions: exactly the key attributes of the table and
	// its indexes, with their types.
	gotAttrs := map[string]string{}
	for _, a := range children(table, "attribute") {
		name := literalString(t, attr(t, a, "name"))
		if _, dup := gotAttrs[name]; dup {
			t.Errorf("attribute %q defined twice", name)
		}
		gotAttrs[name] = literalString(t, attr(t, a, "type"))
	}
	wantAttrs := map[string]string{}
	for _, d := range want.AttributeDefinitions {
		wantAttrs[aws.ToString(d.AttributeName)] = string(d.AttributeType)
	}
	if !maps.Equal(gotAttrs, wantAttrs) {
		t.Errorf("attributes = %v, want %v", gotAttrs, wantAttrs)
	}

	// Global secondary indexes.
	gsis := children(table, "global_secondary_index")
	if len(gsis) != len(want.GlobalSecondaryIndexes) {
		t.Fatalf("%d global_secondary_index blocks, want %d", len(gsis), len(want.GlobalSecondaryIndexes))
	}
	for i, w := range want.GlobalSecondaryIndexes {
		g := gsis[i]
		name := literalString(t, attr(t, g, "name"))
		if name != aws.ToString(w.IndexName) {
			t.Errorf("global_secondary_index[%d].name = %q, want %q", i, name, aws.ToString(w.IndexName))
		}
		for _, deprecated := range []string{"hash_key", "range_key", "hash_keys", "range_keys"} {
			if _, ok := g.Body.Attributes[deprecated]; ok {
				t.Errorf("index %s: set its keys with key_schema blocks, not %s", name, deprecated)
			}
		}
		var gotSchema, wantSchema [][2]string
		for _, k := range children(g, "key_schema") {
			gotSchema = append(gotSchema, [2]string{literalString(t, attr(t, k, "attribute_name")), literalString(t, attr(t, k, "key_type"))})
		}
		for _, k := range w.KeySchema {
			wantSchema = append(wantSchema, [2]string{aws.ToString(k.AttributeName), string(k.KeyType)})
		}
		if !slices.Equal(gotSchema, wantSchema) {
			t.Errorf("index %s: key_schema = %v, want %v", name, gotSchema, wantSchema)
		}
		if got := literalString(t, attr(t, g, "projection_type")); got != string(w.Projection.ProjectionType) {
			t.Errorf("index %s: projection_type = %q, want %q", name, got, w.Projection.ProjectionType)
		}
		var gotNonKey []string
		if a, ok := g.Body.Attributes["non_key_attributes"]; ok {
			gotNonKey = literalStrings(t, a.Expr)
		}
		if !sameSet(gotNonKey, w.Projection.NonKeyAttributes) {
			t.Errorf("index %s: non_key_attributes = %q, want %q", name, gotNonKey, w.Projection.NonKeyAttributes)
		}
	}
	if n := len(children(table, "local_secondary_index")); n != len(want.LocalSecondaryIndexes) {
		t.Errorf("%d local_secondary_index blocks, want %d", n, len(want.LocalSecondaryIndexes))
	}

	// Time to live on dynamo.TTLAttribute.
	ttl := children(table, "ttl")
	if len(ttl) != 1 {
		t.Fatalf("%d ttl blocks, want 1", len(ttl))
	}
	if got := literalString(t, attr(t, ttl[0], "attribute_name")); got != dynamo.TTLAttribute {
		t.Errorf("ttl.attribute_name = %q, want dynamo.TTLAttribute %q", got, dynamo.TTLAttribute)
	}
	if got := literal(t, attr(t, ttl[0], "enabled")); !got.Equals(cty.True).True() {
		t.Errorf("ttl.enabled = %#v, want true", got)
	}

	// Point-in-time recovery: on by default.
	pitr := children(table, "point_in_time_recovery")
	if len(pitr) != 1 {
		t.Fatalf("%d point_in_time_recovery blocks, want 1", len(pitr))
	}
	if got := defaultOf(t, m, attr(t, pitr[0], "enabled")); !got.Equals(cty.True).True() {
		t.Errorf("point_in_time_recovery.enabled is %#v by default, want true", got)
	}

	// The name: var.table_name, else "<name>-sessions"; the example's
	// default is store/dynamo's.
	ctx := m.fakes()
	if got := eval(t, ctx, attr(t, table, "name")); got.AsString() != "var.table_name" {
		t.Errorf("the table's name evaluates to %q with var.table_name set, want var.table_name", got.AsString())
	}
	if d := m.variableDefault(t, "table_name"); d != cty.NilVal && !d.IsNull() && d.AsString() != dynamo.DefaultTableName {
		t.Errorf("module variable table_name defaults to %q, want null or dynamo.DefaultTableName %q", d.AsString(), dynamo.DefaultTableName)
	}
	ex := loadModule(t, lambdaExample)
	if d := ex.variableDefault(t, "table_name"); d == cty.NilVal || d.IsNull() || d.AsString() != dynamo.DefaultTableName {
		t.Errorf("examples/lambda: variable table_name defaults to %#v, want dynamo.DefaultTableName %q", d, dynamo.DefaultTableName)
	}
	if got := refs(attr(t, ex.named(t, "module", "calculator"), "table_name")); !slices.Equal(got, []string{"var.table_name"}) {
		t.Errorf("examples/lambda: the module's table_name is %v, want var.table_name", got)
	}
}

// TestInitialSecret evaluates the secret_string of the first secret
// version with a random_bytes of the configured length, and parses it with
// secretsmanager.ParseSecretString: the key must come back, and the JSON
// object must have the members of secretsmanager.SecretValue.
func TestInitialSecret(t *testing.T) {
	t.Parallel()
	m := loadModule(t, lambdaModule)
	version := m.one(t, "resource", "aws_secretsmanager_secret_version")
	secret := m.one(t, "resource", "aws_secretsmanager_secret")
	ctx := m.fakes()
	if got, want := eval(t, ctx, attr(t, version, "secret_id")).AsString(), "aws_secretsmanager_secret."+secret.Labels[1]+".id"; got != want {
		t.Errorf("secret version: secret_id is %s, want %s", got, want)
	}

	// The key: a random_bytes of at least core.MinKeyBytes.
	expr := attr(t, version, "secret_string")
	var rbName string
	for _, tr := range expr.Variables() {
		if tr.RootName() == "random_bytes" && len(tr) > 1 {
			rbName = tr[1].(hcl.TraverseAttr).Name
		}
	}
	if rbName == "" {
		t.Fatalf("%s: secret_string does not use a random_bytes resource", expr.Range())
	}
	rb := m.named(t, "resource", "random_bytes", rbName)
	n64, _ := literal(t, attr(t, rb, "length")).AsBigFloat().Int64()
	if n64 < core.MinKeyBytes {
		t.Errorf("random_bytes.%s.length = %d, want at least core.MinKeyBytes = %d", rbName, n64, core.MinKeyBytes)
	}
	key := make([]byte, n64)
	rand.Read(key)
	rbVal := cty.ObjectVal(map[string]cty.Value{"base64": cty.StringVal(base64.StdEncoding.EncodeToString(key))})
	if _, counted := rb.Body.Attributes["count"]; counted {
		rbVal = cty.TupleVal([]cty.Value{rbVal})
	}
	ctx.Variables["random_bytes"] = cty.ObjectVal(map[string]cty.Value{rbName: rbVal})

	s := eval(t, ctx, expr).AsString()
	v, err := secretsmanager.ParseSecretString(s)
	if err != nil {
		t.Fatalf("ParseSecretString(the initial secret_string): %v", err)
	}
	if !bytes.Equal(v.Key, key) {
		t.Errorf("the initial secret holds another key than random_bytes.%s", rbName)
	}
	ref, _ := json.Marshal(secretsmanager.SecretValue{Key: key})
	if got, want := jsonMembers(t, s), jsonMembers(t, string(ref)); !slices.Equal(got, want) {
		t.Errorf("the initial secret has members %q, secretsmanager.SecretValue has %q", got, want)
	}
}

func keyNames(ks []types.KeySchemaElement) map[types.KeyType]string {
	out := map[types.KeyType]string{}
	for _, k := range ks {
		out[k.KeyType] = aws.ToString(k.AttributeName)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(slices.Compact(a), slices.Compact(b)) && len(a) == len(b)
}

func jsonMembers(t *testing.T, s string) []string {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		t.Fatalf("not a JSON object: %v", err)
	}
	return slices.Sorted(maps.Keys(obj))
}

// defaultOf returns the value of e if it is literal, or the default of
// the variable it is (var.NAME).
func defaultOf(t *testing.T, m *module, e hclsyntax.Expression) cty.Value {
	t.Helper()
	if v, diags := e.Value(nil); !diags.HasErrors() {
		return v
	}
	vars := e.Variables()
	if len(vars) != 1 || vars[0].RootName() != "var" || len(vars[0]) != 2 {
		t.Fatalf("want a literal or a variable, got %d references", len(vars))
	}
	return m.variableDefault(t, vars[0][1].(hcl.TraverseAttr).Name)
}
