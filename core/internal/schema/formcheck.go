package schema

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// CheckForm checks a form elicitation's requestedSchema: a flat object
// of primitive properties with consistent bounds and enums.
func CheckForm(raw json.RawMessage, modern bool) error {
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || s.Type != "object" || s.Properties == nil {
		return fmt.Errorf(`the form schema must be an object schema with "properties"`)
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			return fmt.Errorf("required field %q is not among the properties", r)
		}
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := checkFormField(s.Properties[n], modern); err != nil {
			return fmt.Errorf("field %q: %v", n, err)
		}
	}
	return nil
}

type formField struct {
	Type      string            `json:"type"`
	Enum      []json.RawMessage `json:"enum"`
	EnumNames []string          `json:"enumNames"`
	OneOf     []struct {
		Const json.RawMessage `json:"const"`
		Title string          `json:"title"`
	} `json:"oneOf"`
	Items *struct {
		Type  string            `json:"type"`
		Enum  []json.RawMessage `json:"enum"`
		AnyOf []struct {
			Const json.RawMessage `json:"const"`
		} `json:"anyOf"`
	} `json:"items"`
	Default   json.RawMessage `json:"default"`
	MinLength *float64        `json:"minLength"`
	MaxLength *float64        `json:"maxLength"`
	Minimum   *float64        `json:"minimum"`
	Maximum   *float64        `json:"maximum"`
	MinItems  *float64        `json:"minItems"`
	MaxItems  *float64        `json:"maxItems"`
	Format    string          `json:"format"`
}

func checkBounds(lo, hi *float64, what string, nonNegative bool) error {
	if nonNegative && ((lo != nil && *lo < 0) || (hi != nil && *hi < 0)) {
		return fmt.Errorf("negative %s bound", what)
	}
	if lo != nil && hi != nil && *lo > *hi {
		return fmt.Errorf("inverted %s bounds (%v > %v)", what, *lo, *hi)
	}
	return nil
}

func checkFormField(raw json.RawMessage, modern bool) error {
	var f formField
	if err := json.Unmarshal(raw, &f); err != nil {
		return fmt.Errorf("malformed property schema: %v", err)
	}
	if f.EnumNames != nil && modern {
		return fmt.Errorf("enumNames is the legacy titled-enum shape; use oneOf with const and title")
	}
	switch f.Type {
	case "string":
		if err := checkBounds(f.MinLength, f.MaxLength, "length", true); err != nil {
			return err
		}
		if f.Enum != nil || f.EnumNames != nil {
			if len(f.Enum) == 0 {
				return fmt.Errorf("empty enum")
			}
			if f.EnumNames != nil && len(f.EnumNames) != len(f.Enum) {
				return fmt.Errorf("enumNames and enum differ in length")
			}
			if f.Default != nil && !containsJSON(f.Enum, f.Default) {
				return fmt.Errorf("default %s is not in the enum", f.Default)
			}
		}
		if f.OneOf != nil {
			if len(f.OneOf) == 0 {
				return fmt.Errorf("empty oneOf")
			}
			consts := make([]json.RawMessage, len(f.OneOf))
			for i, o := range f.OneOf {
				consts[i] = o.Const
			}
			if f.Default != nil && !containsJSON(consts, f.Default) {
				return fmt.Errorf("default %s is not among the options", f.Default)
			}
		}
	case "number", "integer":
		if err := checkBounds(f.Minimum, f.Maximum, "value", false); err != nil {
			return err
		}
	case "boolean":
	case "array":
		if err := checkBounds(f.MinItems, f.MaxItems, "item count", true); err != nil {
			return err
		}
		if f.Items == nil {
			return fmt.Errorf("a multi-select needs items")
		}
		if f.Items.Enum == nil && f.Items.AnyOf == nil {
			return fmt.Errorf("a multi-select needs items.enum or items.anyOf")
		}
		if (f.Items.Enum != nil && len(f.Items.Enum) == 0) || (f.Items.AnyOf != nil && len(f.Items.AnyOf) == 0) {
			return fmt.Errorf("empty enum")
		}
	default:
		return fmt.Errorf("type %q is not allowed in a form (string, number, integer, boolean, or an array multi-select)", f.Type)
	}
	return nil
}

func containsJSON(list []json.RawMessage, v json.RawMessage) bool {
	cv, err := jsonwire.Canonical(v)
	if err != nil {
		return false
	}
	for _, e := range list {
		if ce, err := jsonwire.Canonical(e); err == nil && string(ce) == string(cv) {
			return true
		}
	}
	return false
}
