package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestFormPassesCheckForm derives a form and checks it passes CheckForm in
// both eras, with the fields that have no default and are not omitempty
// required.
func TestFormPassesCheckForm(t *testing.T) {
	t.Parallel()
	type booking struct {
		Guests int      `json:"guests" jsonschema:"minimum=1,maximum=12,default=2"`
		Time   string   `json:"time" jsonschema:"enum=18:00,enum=19:00"`
		Extras []string `json:"extras,omitempty" jsonschema:"enum=a,enum=b"`
	}
	raw, err := Form(reflect.TypeFor[booking]())
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(raw) {
		t.Fatalf("not JSON: %s", raw)
	}
	for _, modern := range []bool{true, false} {
		if err := CheckForm(raw, modern); err != nil {
			t.Errorf("modern=%v: %v", modern, err)
		}
	}
	var s struct{ Required []string }
	json.Unmarshal(raw, &s)
	if !reflect.DeepEqual(s.Required, []string{"time"}) {
		t.Errorf("required %v, want [time]", s.Required)
	}
}

// FuzzCheckForm checks that CheckForm never panics, and that every schema
// Form derives passes it in both eras.
func FuzzCheckForm(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","enum":["x","y"],"default":"x"}},"required":["a"]}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":3,"maximum":1}}}`,
		`{"type":"object","properties":{"m":{"type":"array","items":{"type":"string","enum":[]}}}}`,
		`{"type":"object","properties":{"e":{"type":"string","enum":["a"],"enumNames":["A"]}}}`,
		`{"type":"object"}`, `null`, `[]`, `{"type":"object","properties":{"x":{"type":"object"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		modern := CheckForm(raw, true)
		legacy := CheckForm(raw, false)
		if modern == nil && legacy != nil {
			t.Fatalf("accepted for 2026-07-28 but refused for legacy: %v", legacy)
		}
	})
}
