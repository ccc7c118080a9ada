package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func mustServer(t *testing.T, name string) *server {
	t.Helper()
	s, err := newNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// object builds a value of the schema's type from a few attributes (the
// others null).
func object(t *testing.T, sch *tfprotov5.Schema, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	typ := sch.ValueType().(tftypes.Object)
	for name := range set {
		if _, ok := typ.AttributeTypes[name]; !ok {
			t.Fatalf("no attribute %s in the schema", name)
		}
	}
	return objectOf(typ, set)
}

// objectOf builds a value of type o from the attributes set (the others
// null).
func objectOf(o tftypes.Object, set map[string]tftypes.Value) tftypes.Value {
	attrs := map[string]tftypes.Value{}
	for name, at := range o.AttributeTypes {
		if v, ok := set[name]; ok {
			attrs[name] = v
		} else {
			attrs[name] = tftypes.NewValue(at, nil)
		}
	}
	return tftypes.NewValue(o, attrs)
}

func dynamic(t *testing.T, sch *tfprotov5.Schema, v tftypes.Value) *tfprotov5.DynamicValue {
	t.Helper()
	dv, err := tfprotov5.NewDynamicValue(sch.ValueType(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

func sv(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

// Both providers load: the committed schemas parse, and every line of
// validators.txt names an attribute of its type.
func TestLoad(t *testing.T) {
	for _, name := range []string{"aws", "random"} {
		s := mustServer(t, name)
		if len(s.schema.resources) == 0 {
			t.Errorf("%s: no resource types", name)
		}
		if len(s.validators) == 0 {
			t.Errorf("%s: no validators", name)
		}
	}
	if _, err := newNamed("google"); err == nil {
		t.Error("newNamed(google) succeeded")
	}
	if got := providerName("/x/terraform-provider-aws_v6.47.1"); got != "aws" {
		t.Errorf("providerName = %q, want aws", got)
	}
}

// The wrong invoke_mode that check.sh's negative test makes: refused with
// the real provider's words; the right ones, an unknown and a null pass.
func TestInvokeMode(t *testing.T) {
	s := mustServer(t, "aws")
	sch := s.schema.resources["aws_lambda_function_url"]
	validate := func(v tftypes.Value) []*tfprotov5.Diagnostic {
		resp, err := s.ValidateResourceTypeConfig(context.Background(), &tfprotov5.ValidateResourceTypeConfigRequest{
			TypeName: "aws_lambda_function_url",
			Config:   dynamic(t, sch, object(t, sch, map[string]tftypes.Value{"function_name": sv("f"), "authorization_type": sv("AWS_IAM"), "invoke_mode": v})),
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Diagnostics
	}
	d := validate(sv("RESPONSE_STREAMED"))
	want := `expected invoke_mode to be one of ["BUFFERED" "RESPONSE_STREAM"], got RESPONSE_STREAMED`
	if len(d) != 1 || d[0].Summary != want || d[0].Severity != tfprotov5.DiagnosticSeverityError {
		t.Fatalf("diagnostics %+v, want one error %q", d, want)
	}
	if !d[0].Attribute.Equal(tftypes.NewAttributePath().WithAttributeName("invoke_mode")) {
		t.Errorf("attribute path %v, want invoke_mode", d[0].Attribute)
	}
	for _, v := range []tftypes.Value{sv("BUFFERED"), sv("RESPONSE_STREAM"), tftypes.NewValue(tftypes.String, tftypes.UnknownValue), tftypes.NewValue(tftypes.String, nil)} {
		if d := validate(v); len(d) != 0 {
			t.Errorf("%v: diagnostics %+v, want none", v, d)
		}
	}
}

// Validators reach into nested blocks and lists, and word the error as the
// real provider does (the flatmap key for sdk-key, the last name for sdk).
func TestNestedValidators(t *testing.T) {
	s := mustServer(t, "aws")
	var vs []*validator
	for _, v := range s.validators["resource aws_secretsmanager_secret_rotation"] {
		vs = append(vs, v)
	}
	sch := s.schema.resources["aws_secretsmanager_secret_rotation"]
	rules := sch.ValueType().(tftypes.Object).AttributeTypes["rotation_rules"].(tftypes.List)
	rule := func(days int) tftypes.Value {
		o := rules.ElementType.(tftypes.Object)
		attrs := map[string]tftypes.Value{}
		for n, at := range o.AttributeTypes {
			attrs[n] = tftypes.NewValue(at, nil)
		}
		attrs["automatically_after_days"] = tftypes.NewValue(tftypes.Number, days)
		return tftypes.NewValue(o, attrs)
	}
	cfg := object(t, sch, map[string]tftypes.Value{"secret_id": sv("s"), "rotation_rules": tftypes.NewValue(rules, []tftypes.Value{rule(1001)})})
	var diags []*tfprotov5.Diagnostic
	for _, v := range vs {
		diags = append(diags, v.validate(cfg)...)
	}
	want := "expected rotation_rules.0.automatically_after_days to be in the range (1 - 1000), got 1001"
	if len(diags) != 1 || diags[0].Summary != want {
		t.Fatalf("diagnostics %+v, want %q", diags, want)
	}

	fn := s.schema.resources["aws_lambda_function"]
	archs := tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{sv("arm64"), sv("amd64")})
	resp, err := s.ValidateResourceTypeConfig(context.Background(), &tfprotov5.ValidateResourceTypeConfigRequest{
		TypeName: "aws_lambda_function",
		Config:   dynamic(t, fn, object(t, fn, map[string]tftypes.Value{"function_name": sv("f"), "role": sv("arn:aws:iam::123456789012:role/r"), "architectures": archs})),
	})
	if err != nil {
		t.Fatal(err)
	}
	want = `expected architectures to be one of ["x86_64" "arm64"], got amd64`
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != want {
		t.Fatalf("diagnostics %+v, want %q", resp.Diagnostics, want)
	}
}

func TestRandomBytesLength(t *testing.T) {
	s := mustServer(t, "random")
	sch := s.schema.resources["random_bytes"]
	resp, err := s.ValidateResourceTypeConfig(context.Background(), &tfprotov5.ValidateResourceTypeConfigRequest{
		TypeName: "random_bytes",
		Config:   dynamic(t, sch, object(t, sch, map[string]tftypes.Value{"length": tftypes.NewValue(tftypes.Number, 0)})),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != "Invalid Attribute Value" ||
		resp.Diagnostics[0].Detail != "Attribute length value must be at least 1, got: 0" {
		t.Fatalf("diagnostics %+v", resp.Diagnostics)
	}
}

func TestParseValidatorsRefuses(t *testing.T) {
	for _, line := range []string{
		"resource aws_x a sdk one-of",
		"module aws_x a sdk one-of A",
		"resource aws_x a sdk int-between 1",
		"resource aws_x a sdk int-one-of 1 x",
		"resource aws_x a plain one-of A",
		"resource aws_x a sdk regexp A",
	} {
		if _, err := parseValidators([]byte(line)); err == nil {
			t.Errorf("parseValidators(%q) succeeded", line)
		}
	}
}

// The policy document as the real data source renders the module's
// documents: statements in order, Allow by default, one value as a string,
// several in reverse order, principals and conditions keyed by type.
func TestPolicyDocument(t *testing.T) {
	s := mustServer(t, "aws")
	sch := s.schema.dataSources["aws_iam_policy_document"]
	typ := sch.ValueType().(tftypes.Object)
	stmtType := typ.AttributeTypes["statement"].(tftypes.List).ElementType.(tftypes.Object)
	strset := func(vs ...string) tftypes.Value {
		var out []tftypes.Value
		for _, v := range vs {
			out = append(out, sv(v))
		}
		return tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, out)
	}
	princType := stmtType.AttributeTypes["principals"].(tftypes.Set).ElementType.(tftypes.Object)
	condType := stmtType.AttributeTypes["condition"].(tftypes.Set).ElementType.(tftypes.Object)
	stmts := []tftypes.Value{
		objectOf(stmtType, map[string]tftypes.Value{
			"actions":    strset("sts:AssumeRole"),
			"principals": tftypes.NewValue(tftypes.Set{ElementType: princType}, []tftypes.Value{objectOf(princType, map[string]tftypes.Value{"type": sv("Service"), "identifiers": strset("lambda.amazonaws.com")})}),
		}),
		objectOf(stmtType, map[string]tftypes.Value{
			"sid":       sv("SessionTable"),
			"actions":   strset("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"),
			"resources": strset("arn:aws:dynamodb:us-east-1:1:table/t", "arn:aws:dynamodb:us-east-1:1:table/t/index/*"),
			"condition": tftypes.NewValue(tftypes.Set{ElementType: condType}, []tftypes.Value{objectOf(condType, map[string]tftypes.Value{
				"test": sv("StringEquals"), "variable": sv("kms:ViaService"),
				"values": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{sv("secretsmanager.us-east-1.amazonaws.com")}),
			})}),
		}),
	}
	cfg := objectOf(typ, map[string]tftypes.Value{"statement": tftypes.NewValue(typ.AttributeTypes["statement"], stmts)})
	resp, err := s.ReadDataSource(context.Background(), &tfprotov5.ReadDataSourceRequest{TypeName: "aws_iam_policy_document", Config: dynamic(t, sch, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) > 0 {
		t.Fatalf("diagnostics %+v", resp.Diagnostics)
	}
	state, err := resp.State.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	_ = state.As(&attrs)
	var got, minified, id string
	_ = attrs["json"].As(&got)
	_ = attrs["minified_json"].As(&minified)
	_ = attrs["id"].As(&id)
	want := `{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": "sts:AssumeRole",
      "Principal": {
        "Service": "lambda.amazonaws.com"
      }
    },
    {
      "Sid": "SessionTable",
      "Effect": "Allow",
      "Action": [
        "dynamodb:PutItem",
        "dynamodb:GetItem",
        "dynamodb:DeleteItem"
      ],
      "Resource": [
        "arn:aws:dynamodb:us-east-1:1:table/t/index/*",
        "arn:aws:dynamodb:us-east-1:1:table/t"
      ],
      "Condition": {
        "StringEquals": {
          "kms:ViaService": "secretsmanager.us-east-1.amazonaws.com"
        }
      }
    }
  ]
}`
	if got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	var a, b any
	_ = json.Unmarshal([]byte(got), &a)
	_ = json.Unmarshal([]byte(minified), &b)
	if strings.Contains(minified, "\n") || !jsonEqual(a, b) {
		t.Errorf("minified_json %s is not json minified", minified)
	}
	if id == "" || strings.Trim(id, "0123456789") != "" {
		t.Errorf("id %q, want the decimal hash of json", id)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A plan of a new resource: computed attributes the configuration leaves
// unset are unknown; set ones keep their values.
func TestPlanCreate(t *testing.T) {
	s := mustServer(t, "aws")
	sch := s.schema.resources["aws_iam_role"]
	cfg := object(t, sch, map[string]tftypes.Value{"name_prefix": sv("mcp-"), "assume_role_policy": sv("{}")})
	resp, err := s.PlanResourceChange(context.Background(), &tfprotov5.PlanResourceChangeRequest{
		TypeName:         "aws_iam_role",
		PriorState:       dynamic(t, sch, tftypes.NewValue(sch.ValueType(), nil)),
		ProposedNewState: dynamic(t, sch, cfg),
		Config:           dynamic(t, sch, cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	planned, err := resp.PlannedState.Unmarshal(sch.ValueType())
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	_ = planned.As(&attrs)
	if attrs["arn"].IsKnown() || attrs["id"].IsKnown() || attrs["name"].IsKnown() {
		t.Errorf("arn, id, name known in the plan: %v", planned)
	}
	var p string
	_ = attrs["name_prefix"].As(&p)
	if p != "mcp-" {
		t.Errorf("name_prefix = %q", p)
	}
}

func TestRegionAndPartition(t *testing.T) {
	got, err := readRegion(map[string]tftypes.Value{}, "eu-west-1")
	if err != nil || got["region"] != "eu-west-1" || got["endpoint"] != "ec2.eu-west-1.amazonaws.com" {
		t.Errorf("readRegion = %v, %v", got, err)
	}
	if _, err := readRegion(map[string]tftypes.Value{}, "xx-nowhere-1"); err == nil {
		t.Error("readRegion accepted an unknown region")
	}
	if p := partitionOf("cn-north-1"); p["partition"] != "aws-cn" || p["dns_suffix"] != "amazonaws.com.cn" {
		t.Errorf("partitionOf(cn-north-1) = %v", p)
	}
}

func TestTrim(t *testing.T) {
	in := `{"format_version":"1.0","provider_schemas":{"registry.opentofu.org/hashicorp/aws":{
		"provider":{"version":0,"block":{"attributes":{"region":{"type":"string","optional":true}}}},
		"resource_schemas":{"aws_a":{"version":1,"block":{}},"aws_b":{"version":0,"block":{}}},
		"data_source_schemas":{"aws_d":{"version":0,"block":{}}}}}}`
	out, err := trim(strings.NewReader(in), "registry.opentofu.org/hashicorp/aws", []string{"resource:aws_b", "data:aws_d"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "aws_a") || !strings.Contains(string(out), `"aws_b"`) || !strings.Contains(string(out), `"region"`) {
		t.Errorf("trim:\n%s", out)
	}
	if _, err := trim(strings.NewReader(in), "registry.opentofu.org/hashicorp/aws", []string{"resource:aws_missing"}); err == nil {
		t.Error("trim accepted a type the provider does not have")
	}
}

// The validators' own check: every case of an allowed value is "ok", a
// refused one reported wrong if accepted.
func TestReport(t *testing.T) {
	vs, _ := parseValidators(validatorsTxt)
	cases := validatorCases(vs)
	var bad validatorCase
	for _, c := range cases {
		if !c.ok {
			bad = c
			break
		}
	}
	in := `{"diagnostics":[]}`
	var sb strings.Builder
	wrong, err := report(strings.NewReader(in), &sb)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range wrong {
		found = found || strings.HasPrefix(w, bad.name+":")
	}
	if !found {
		t.Errorf("no error for %s accepted: %v", bad.name, wrong)
	}
}
