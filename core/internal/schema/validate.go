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

// Mismatch says where an instance failed its schema.
type Mismatch struct {
	// KeywordLocation is the JSON pointer, in the schema, of the keyword
	// that failed (JSON Schema 2020-12 §12.3.1 "keywordLocation"): it
	// names nothing of the instance's values.
	KeywordLocation string
	// Keyword is the keyword that failed ("" when the validator did not
	// say).
	Keyword string
	// Detail is the validator's message, which may quote the instance's
	// values: for the operator's log, not for the client.
	Detail string
}

// Check validates v; it returns nil when v is valid, else where it failed.
// The error is that of a schema that does not resolve.
func (c *Compiled) Check(v any) (*Mismatch, error) {
	r, err := c.resolve()
	if err != nil {
		return nil, err
	}
	if verr := r.Validate(v); verr != nil {
		return mismatchOf(verr), nil
	}
	return nil, nil
}

// mismatchOf reads the validator's error (google/jsonschema-go): each
// schema on the way wraps the next as "validating <its location>: %w"
// ("root" for the root), and the innermost error names its keyword first
// ("required: ...", "type: ...").
func mismatchOf(err error) *Mismatch {
	m := &Mismatch{Detail: err.Error()}
	loc := ""
	for e := err; e != nil; {
		inner := errors.Unwrap(e)
		if inner == nil {
			m.Keyword = keywordOf(e.Error())
			break
		}
		if at, ok := strings.CutPrefix(e.Error(), "validating "); ok {
			if at, ok = strings.CutSuffix(at, ": "+inner.Error()); ok {
				switch {
				case at == "root":
					loc = ""
				case strings.HasPrefix(at, "/"):
					loc = at
				}
			}
		}
		e = inner
	}
	m.KeywordLocation = loc
	if m.Keyword != "" {
		m.KeywordLocation += "/" + m.Keyword
	}
	return m
}

var keywordRE = regexp.MustCompile(`^[a-zA-Z$]+`)

// keywordOf returns the keyword a validator message starts with.
func keywordOf(msg string) string {
	if strings.HasPrefix(msg, "unexpected additional properties") {
		return "additionalProperties"
	}
	k := keywordRE.FindString(msg)
	if k == "" || !strings.HasPrefix(msg[len(k):], ":") && !strings.HasPrefix(msg[len(k):], "[") {
		return ""
	}
	return k
}
