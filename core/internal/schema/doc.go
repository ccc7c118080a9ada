// Package schema holds core's JSON Schema work, none of which knows the
// transport: deriving a tool's input and output schema from a Go type with
// invopop/jsonschema and the jsonschema tag dialect (schema.go, tag.go),
// validating arguments against it with a fast path for simple schemas
// (fast.go) and the full 2020-12 validator behind it (validate.go), and
// deriving and checking the flat object schemas of form elicitations
// (form.go, formcheck.go).
package schema
