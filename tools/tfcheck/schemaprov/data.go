package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// regions: the AWS regions aws_region knows here, with the description the
// real provider gives (from its endpoints table).
var regions = map[string]string{
	"us-east-1":      "US East (N. Virginia)",
	"us-east-2":      "US East (Ohio)",
	"us-west-1":      "US West (N. California)",
	"us-west-2":      "US West (Oregon)",
	"eu-west-1":      "Europe (Ireland)",
	"eu-west-2":      "Europe (London)",
	"eu-west-3":      "Europe (Paris)",
	"eu-central-1":   "Europe (Frankfurt)",
	"eu-north-1":     "Europe (Stockholm)",
	"ap-northeast-1": "Asia Pacific (Tokyo)",
	"ap-southeast-1": "Asia Pacific (Singapore)",
	"ap-southeast-2": "Asia Pacific (Sydney)",
	"ap-south-1":     "Asia Pacific (Mumbai)",
	"ca-central-1":   "Canada (Central)",
	"sa-east-1":      "South America (Sao Paulo)",
}

func partitionOf(region string) map[string]string {
	p := map[string]string{"partition": "aws", "dns_suffix": "amazonaws.com", "reverse_dns_prefix": "com.amazonaws"}
	switch {
	case strings.HasPrefix(region, "cn-"):
		p = map[string]string{"partition": "aws-cn", "dns_suffix": "amazonaws.com.cn", "reverse_dns_prefix": "cn.com.amazonaws"}
	case strings.HasPrefix(region, "us-gov-"):
		p["partition"] = "aws-us-gov"
	}
	p["id"] = p["partition"]
	return p
}

// readRegion: the region named by region (or the deprecated name), else the
// provider's.
func readRegion(attrs map[string]tftypes.Value, providerRegion string) (map[string]string, error) {
	name := ""
	for _, k := range []string{"region", "name"} {
		if v, ok := attrs[k]; ok && v.IsKnown() && !v.IsNull() && name == "" {
			_ = v.As(&name)
		}
	}
	if name == "" {
		name = providerRegion
	}
	desc, ok := regions[name]
	if !ok {
		return nil, fmt.Errorf("finding Region by name (%s): not in the tfcheck schema provider's table", name)
	}
	return map[string]string{
		"region": name, "name": name, "id": name, "description": desc,
		"endpoint": "ec2." + name + "." + partitionOf(name)["dns_suffix"],
	}, nil
}

// The IAM policy document, as the real data source renders it: statements
// in order, Effect defaulting to Allow, a single action, resource or
// identifier as a string and several as a list sorted in reverse, principals
// and conditions as objects keyed by type (test, then variable), "&{" written
// as "${"; json indented by two spaces, minified_json without, id the CRC-32
// of json.
type policyDoc struct {
	Version    string             `json:",omitempty"`
	ID         string             `json:"Id,omitempty"`
	Statements []*policyStatement `json:"Statement,omitempty"`
}

type policyStatement struct {
	Sid          string         `json:",omitempty"`
	Effect       string         `json:",omitempty"`
	Actions      any            `json:"Action,omitempty"`
	NotActions   any            `json:"NotAction,omitempty"`
	Resources    any            `json:"Resource,omitempty"`
	NotResources any            `json:"NotResource,omitempty"`
	Principals   principalSet   `json:"Principal,omitempty"`
	NotPrincipal principalSet   `json:"NotPrincipal,omitempty"`
	Conditions   map[string]any `json:"Condition,omitempty"`
}

type principal struct {
	typ         string
	identifiers []string
}

type principalSet []principal

func (ps principalSet) MarshalJSON() ([]byte, error) {
	if len(ps) == 1 && ps[0].typ == "*" && len(ps[0].identifiers) == 1 && ps[0].identifiers[0] == "*" {
		return []byte(`"*"`), nil
	}
	byType := map[string][]string{}
	for _, p := range ps {
		byType[p.typ] = append(byType[p.typ], p.identifiers...)
	}
	out := map[string]any{}
	for t, ids := range byType {
		out[t] = oneOrList(ids, false)
	}
	return json.Marshal(out)
}

// oneOrList: a single value as itself, several as a list (sorted in reverse
// when sorted is set, as the provider does for sets).
func oneOrList(vs []string, sorted bool) any {
	if len(vs) == 1 {
		return vs[0]
	}
	out := slices.Clone(vs)
	if sorted {
		slices.Sort(out)
		slices.Reverse(out)
	}
	return out
}

var policyVars = strings.NewReplacer("&{", "${")

// policyStrs is strs with the policy variables written &{...} (to escape
// Terraform's interpolation) turned into IAM's ${...}.
func policyStrs(v tftypes.Value) ([]string, error) {
	vs, err := strs(v)
	for i := range vs {
		vs[i] = policyVars.Replace(vs[i])
	}
	return vs, err
}

func strs(v tftypes.Value) ([]string, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, errors.New("unknown value")
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		if !e.IsNull() {
			if err := e.As(&s); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func objs(v tftypes.Value) ([]map[string]tftypes.Value, error) {
	if v.IsNull() {
		return nil, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, err
	}
	out := make([]map[string]tftypes.Value, len(elems))
	for i, e := range elems {
		if err := e.As(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func str(v tftypes.Value) string {
	var s string
	if v.IsKnown() && !v.IsNull() {
		_ = v.As(&s)
	}
	return s
}

func readPolicyDocument(attrs map[string]tftypes.Value) (map[string]string, error) {
	for _, k := range []string{"source_policy_documents", "override_policy_documents", "source_json", "override_json"} {
		if v, ok := attrs[k]; ok && !v.IsNull() {
			if l, _ := strs(v); v.Type().Is(tftypes.String) || len(l) > 0 {
				return nil, fmt.Errorf("tfcheck schema provider: aws_iam_policy_document: %s is not implemented", k)
			}
		}
	}
	doc := &policyDoc{Version: str(attrs["version"]), ID: str(attrs["policy_id"])}
	if doc.Version == "" {
		doc.Version = "2012-10-17"
	}
	stmts, err := objs(attrs["statement"])
	if err != nil {
		return nil, err
	}
	sids := map[string]bool{}
	for _, st := range stmts {
		s := &policyStatement{Sid: str(st["sid"]), Effect: str(st["effect"])}
		if s.Effect == "" {
			s.Effect = "Allow"
		}
		if s.Sid != "" {
			if sids[s.Sid] {
				return nil, fmt.Errorf("writing IAM Policy Document: duplicate Sid (%s). Remove the Sid or ensure the Sid is unique.", s.Sid)
			}
			sids[s.Sid] = true
		}
		lists := []struct {
			name string
			dst  *any
			vars bool
		}{{"actions", &s.Actions, false}, {"not_actions", &s.NotActions, false}, {"resources", &s.Resources, true}, {"not_resources", &s.NotResources, true}}
		for _, l := range lists {
			read := strs
			if l.vars {
				read = policyStrs
			}
			vs, err := read(st[l.name])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.name, err)
			}
			if len(vs) == 0 {
				continue
			}
			*l.dst = oneOrList(vs, true)
		}
		for _, pk := range []struct {
			name string
			dst  *principalSet
		}{{"principals", &s.Principals}, {"not_principals", &s.NotPrincipal}} {
			ps, err := objs(st[pk.name])
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				ids, err := policyStrs(p["identifiers"])
				if err != nil {
					return nil, err
				}
				if len(ids) > 1 {
					slices.Sort(ids)
					slices.Reverse(ids)
				}
				*pk.dst = append(*pk.dst, principal{typ: str(p["type"]), identifiers: ids})
			}
		}
		conds, err := objs(st["condition"])
		if err != nil {
			return nil, err
		}
		for _, c := range conds {
			vals, err := policyStrs(c["values"])
			if err != nil {
				return nil, err
			}
			if s.Conditions == nil {
				s.Conditions = map[string]any{}
			}
			test, variable := str(c["test"]), str(c["variable"])
			m, _ := s.Conditions[test].(map[string][]string)
			if m == nil {
				m = map[string][]string{}
				s.Conditions[test] = m
			}
			m[variable] = append(m[variable], vals...)
		}
		for t, m := range s.Conditions {
			out := map[string]any{}
			for k, vs := range m.(map[string][]string) {
				out[k] = oneOrList(vs, false)
			}
			s.Conditions[t] = out
		}
		doc.Statements = append(doc.Statements, s)
	}
	indented, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	minified, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"json":          string(indented),
		"minified_json": string(minified),
		"id":            strconv.Itoa(hashcode(string(indented))),
	}, nil
}

func hashcode(s string) int {
	v := int(crc32.ChecksumIEEE([]byte(s)))
	if v < 0 {
		v = -v
	}
	return v
}
