package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// trim reads the output of `tofu providers schema -json` and returns, as
// indented JSON with sorted keys, the provider_schemas entry of address (e.g.
// registry.opentofu.org/hashicorp/aws) with only its provider configuration
// schema and the resource and data source types named in types
// ("resource:aws_iam_role", "data:aws_region"). A named type the provider does
// not have is an error. The schema files under schemas/ are its output for the
// real providers; the full stage compares it again with theirs, and the fast
// stage with what this provider reports.
func trim(r io.Reader, address string, types []string) ([]byte, error) {
	var all struct {
		Schemas map[string]map[string]json.RawMessage `json:"provider_schemas"`
	}
	if err := json.NewDecoder(r).Decode(&all); err != nil {
		return nil, fmt.Errorf("trim: %w", err)
	}
	p, ok := all.Schemas[address]
	if !ok {
		return nil, fmt.Errorf("trim: no provider %s in the schema", address)
	}
	out := map[string]any{}
	if raw, ok := p["provider"]; ok {
		out["provider"] = raw
	}
	sections := map[string]string{"resource": "resource_schemas", "data": "data_source_schemas"}
	for _, t := range types {
		kind, name, ok := strings.Cut(t, ":")
		section := sections[kind]
		if !ok || section == "" {
			return nil, fmt.Errorf("trim: %q: want resource:TYPE or data:TYPE", t)
		}
		var m map[string]json.RawMessage
		if raw, ok := p[section]; ok {
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("trim: %s: %w", section, err)
			}
		}
		s, ok := m[name]
		if !ok {
			return nil, fmt.Errorf("trim: %s has no %s %s", address, kind, name)
		}
		sec, _ := out[section].(map[string]json.RawMessage)
		if sec == nil {
			sec = map[string]json.RawMessage{}
			out[section] = sec
		}
		sec[name] = s
	}
	// Through a generic value: the keys come out sorted, whatever order tofu printed.
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	b, err = json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
