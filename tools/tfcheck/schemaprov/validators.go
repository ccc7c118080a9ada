package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A validator of validators.txt: one attribute of one resource or data source
// type, the values the real provider accepts, and the form of its error.
//
//	resource aws_lambda_function_url invoke_mode sdk one-of BUFFERED RESPONSE_STREAM
//
// KIND TYPE PATH STYLE CHECK ARGS...: PATH is the attribute's name, or block
// names and the attribute's name joined by dots (logging_config.log_format);
// through a list, set or map (of blocks or of values) it applies to each
// element. STYLE is how the provider words the error: sdk (terraform-plugin-sdk:
// "expected NAME to be ..."; sdk-key: the same with the flatmap key,
// "attribute.0.type", in place of NAME) or framework (terraform-plugin-framework:
// "Invalid Attribute Value..." with "Attribute PATH value must be ..."). CHECK is
// one-of (strings), int-one-of, int-between MIN MAX, or int-at-least MIN. The
// words are the real providers' for the combinations validators.txt uses (the
// full stage compares them); a new combination is checked when a line uses it.
type validator struct {
	Kind, Type, Path, Style, Check string
	Args                           []string
	Line                           int
}

func parseValidators(data []byte) ([]*validator, error) {
	var vs []*validator
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "base ") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			return nil, fmt.Errorf("validators.txt:%d: want KIND TYPE PATH STYLE CHECK ARGS...", n)
		}
		v := &validator{Kind: f[0], Type: f[1], Path: f[2], Style: f[3], Check: f[4], Args: f[5:], Line: n}
		if v.Kind != "resource" && v.Kind != "data" {
			return nil, fmt.Errorf("validators.txt:%d: kind %q", n, v.Kind)
		}
		switch v.Style {
		case "sdk", "sdk-key", "framework":
		default:
			return nil, fmt.Errorf("validators.txt:%d: style %q", n, v.Style)
		}
		switch v.Check {
		case "one-of":
		case "int-one-of", "int-between", "int-at-least":
			for _, a := range v.Args {
				if _, err := strconv.ParseInt(a, 10, 64); err != nil {
					return nil, fmt.Errorf("validators.txt:%d: %q is not an integer", n, a)
				}
			}
			if (v.Check == "int-between" && len(v.Args) != 2) || (v.Check == "int-at-least" && len(v.Args) != 1) {
				return nil, fmt.Errorf("validators.txt:%d: %s: wrong number of arguments", n, v.Check)
			}
		default:
			return nil, fmt.Errorf("validators.txt:%d: check %q", n, v.Check)
		}
		vs = append(vs, v)
	}
	return vs, sc.Err()
}

func (v *validator) ints() []int64 {
	out := make([]int64, len(v.Args))
	for i, a := range v.Args {
		out[i], _ = strconv.ParseInt(a, 10, 64)
	}
	return out
}

// validate applies v to a configuration value of its type: one diagnostic per
// refused value. Unknown and null values pass, as in the real providers.
func (v *validator) validate(config tftypes.Value) []*tfprotov5.Diagnostic {
	var diags []*tfprotov5.Diagnostic
	steps := strings.Split(v.Path, ".")
	var walk func(val tftypes.Value, i int, path *tftypes.AttributePath, key string)
	walk = func(val tftypes.Value, i int, path *tftypes.AttributePath, key string) {
		if !val.IsKnown() || val.IsNull() {
			return
		}
		switch {
		case val.Type().Is(tftypes.List{}) || val.Type().Is(tftypes.Set{}) || val.Type().Is(tftypes.Tuple{}):
			var elems []tftypes.Value
			if err := val.As(&elems); err != nil {
				return
			}
			for n, e := range elems {
				p := path.WithElementKeyInt(n)
				if val.Type().Is(tftypes.Set{}) {
					p = path.WithElementKeyValue(e)
				}
				walk(e, i, p, key+"."+strconv.Itoa(n))
			}
			return
		case val.Type().Is(tftypes.Map{}):
			var elems map[string]tftypes.Value
			if err := val.As(&elems); err != nil {
				return
			}
			for _, k := range sortedKeys(elems) {
				walk(elems[k], i, path.WithElementKeyString(k), key+"."+k)
			}
			return
		}
		if i < len(steps) {
			var attrs map[string]tftypes.Value
			if err := val.As(&attrs); err != nil {
				return
			}
			next, ok := attrs[steps[i]]
			if !ok {
				return
			}
			k := steps[i]
			if key != "" {
				k = key + "." + k
			}
			walk(next, i+1, path.WithAttributeName(steps[i]), k)
			return
		}
		if d := v.check(val, path, key); d != nil {
			diags = append(diags, d)
		}
	}
	walk(config, 0, tftypes.NewAttributePath(), "")
	return diags
}

// check returns the diagnostic the real provider gives for a refused value.
func (v *validator) check(val tftypes.Value, path *tftypes.AttributePath, key string) *tfprotov5.Diagnostic {
	name := v.Path[strings.LastIndex(v.Path, ".")+1:]
	if v.Style == "sdk-key" {
		name = key
	}
	var got string
	var gotInt int64
	isInt := false
	switch {
	case val.Type().Is(tftypes.String):
		_ = val.As(&got)
	case val.Type().Is(tftypes.Number):
		var f big.Float
		_ = val.As(&f)
		gotInt, _ = f.Int64()
		got = f.Text('f', -1)
		isInt = f.IsInt()
	default:
		return nil
	}
	fail := func(sdk, fwSummary, fwDetail string) *tfprotov5.Diagnostic {
		if v.Style == "framework" {
			return &tfprotov5.Diagnostic{Severity: tfprotov5.DiagnosticSeverityError, Summary: fwSummary, Detail: fwDetail, Attribute: path}
		}
		return &tfprotov5.Diagnostic{Severity: tfprotov5.DiagnosticSeverityError, Summary: sdk, Attribute: path}
	}
	fwPath := frameworkPath(path)
	switch v.Check {
	case "one-of":
		for _, a := range v.Args {
			if a == got {
				return nil
			}
		}
		quoted := make([]string, len(v.Args))
		for i, a := range v.Args {
			quoted[i] = strconv.Quote(a)
		}
		return fail(fmt.Sprintf("expected %s to be one of %q, got %s", name, v.Args, got),
			"Invalid Attribute Value Match",
			fmt.Sprintf("Attribute %s value must be one of: %q, got: %q", fwPath, quoted, got))
	case "int-one-of":
		ints := v.ints()
		for _, a := range ints {
			if isInt && a == gotInt {
				return nil
			}
		}
		return fail(fmt.Sprintf("expected %s to be one of %v, got %s", name, ints, got),
			"Invalid Attribute Value",
			fmt.Sprintf("Attribute %s value must be one of: %v, got: %s", fwPath, ints, got))
	case "int-between":
		ints := v.ints()
		if isInt && gotInt >= ints[0] && gotInt <= ints[1] {
			return nil
		}
		return fail(fmt.Sprintf("expected %s to be in the range (%d - %d), got %s", name, ints[0], ints[1], got),
			"Invalid Attribute Value",
			fmt.Sprintf("Attribute %s value must be between %d and %d, got: %s", fwPath, ints[0], ints[1], got))
	case "int-at-least":
		ints := v.ints()
		if isInt && gotInt >= ints[0] {
			return nil
		}
		return fail(fmt.Sprintf("expected %s to be at least (%d), got %s", name, ints[0], got),
			"Invalid Attribute Value",
			fmt.Sprintf("Attribute %s value must be at least %d, got: %s", fwPath, ints[0], got))
	}
	return nil
}

// frameworkPath writes a path as terraform-plugin-framework does: a.b[0].c,
// ["key"] for map keys; set elements as [Value], which is not the
// framework's form (no line of validators.txt validates one in that style).
func frameworkPath(p *tftypes.AttributePath) string {
	var sb strings.Builder
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case tftypes.AttributeName:
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(string(s))
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&sb, "[%d]", int64(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&sb, "[%q]", string(s))
		case tftypes.ElementKeyValue:
			sb.WriteString("[Value]")
		}
	}
	return sb.String()
}
