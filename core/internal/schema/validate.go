package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	validator "github.com/google/jsonschema-go/jsonschema"
)

// Compiled is a JSON Schema validator (2020-12, or draft-07 when the
// schema says so) with a fast path for the simple schemas most tools have.
// The full validator is resolved at registration for schemas a user wrote
// (so that a broken one is a registration error), and on first use for
// schemas derived from Go types, which are valid by construction: a cold
// start then pays only for the tools it calls with arguments the fast path
// cannot prove.
type Compiled struct {
	raw  json.RawMessage
	fast *fastSchema // nil when the schema has no fast path

	once sync.Once
	s    *validator.Resolved
	err  error
}

// ProvenValid reports whether the raw instance is valid by the fast path
// alone; false means the full validator must decide.
func (c *Compiled) ProvenValid(raw []byte) bool {
	return c.fast != nil && c.fast.valid(raw)
}

// resolve builds the full validator once.
func (c *Compiled) resolve() (*validator.Resolved, error) {
	c.once.Do(func() {
		var s validator.Schema
		if err := json.Unmarshal(c.raw, &s); err != nil {
			c.err = fmt.Errorf("invalid schema: %w", err)
			return
		}
		// No BaseURI loader: external references are never loaded (no
		// network and no file access; a $ref outside the schema is an
		// error).
		c.s, c.err = s.Resolve(&validator.ResolveOptions{BaseURI: "mem:///schema.json"})
		if c.err != nil {
			c.err = fmt.Errorf("invalid schema: %w", c.err)
		}
	})
	return c.s, c.err
}

// Compile prepares raw for validation; eager resolves the full
// validator now, so that an invalid schema is reported at once.
func Compile(raw json.RawMessage, eager bool) (*Compiled, error) {
	c := &Compiled{raw: raw, fast: compileFast(raw)}
	if eager {
		if _, err := c.resolve(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// DecodeForValidation decodes JSON the way the validator needs it: integers
// that fit as int64 (exact), other numbers as float64.
func DecodeForValidation(raw []byte) (any, error) {
	v, err := decodeNumbers(raw)
	if err != nil {
		return nil, err
	}
	return numbersForValidation(v), nil
}

// decodeNumbers decodes one JSON value with numbers as json.Number.
func decodeNumbers(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func numbersForValidation(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersForValidation(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersForValidation(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// Validate reports why v does not satisfy the schema, phrased for a model to
// act on.
func (c *Compiled) Validate(v any) error {
	r, err := c.resolve()
	if err != nil {
		return err
	}
	err = r.Validate(v)
	if err == nil {
		return nil
	}
	// "validating root: validating /properties/a: type: ..." becomes
	// "at '/a': type: ...".
	msg := strings.ReplaceAll(err.Error(), "validating root: ", "")
	msg = schemaPathRE.ReplaceAllStringFunc(msg, func(m string) string {
		p := strings.TrimSuffix(strings.TrimPrefix(m, "validating "), ": ")
		p = strings.ReplaceAll(p, "/properties/", "/")
		return "at '" + p + "': "
	})
	return errors.New(msg)
}

var schemaPathRE = regexp.MustCompile(`validating (/[^:]*): `)
