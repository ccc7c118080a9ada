package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The validators' check against a provider (tfcheck.sh --validators):
// validatorConfig writes a configuration with one resource (or data source)
// per value of each line of validators.txt, each in its own file; `tofu
// validate -json` validates it with the providers of the stage; report reads
// that output, writes each case's diagnostics, and fails if a value the line
// allows is refused or one it does not allow is accepted. The full stage
// compares the report of the real providers with this provider's.

// A case: one value of one validator.
type validatorCase struct {
	name  string // the file (without .tf) and the block's name: v03_ok_1, v03_bad_0
	v     *validator
	value string // the value as written in validators.txt's terms (a string, or an integer)
	ok    bool
}

func validatorCases(vs []*validator) []validatorCase {
	var cases []validatorCase
	for i, v := range vs {
		var ok, bad []string
		switch v.Check {
		case "one-of":
			ok = v.Args
			bad = []string{"tfcheck-bogus"}
			if l := strings.ToLower(v.Args[0]); l != v.Args[0] {
				bad = append(bad, l)
			} else if u := strings.ToUpper(v.Args[0]); u != v.Args[0] {
				bad = append(bad, u)
			}
		case "int-one-of":
			ok = v.Args
			ints := v.ints()
			for n := ints[0] + 1; ; n++ {
				found := false
				for _, x := range ints {
					found = found || x == n
				}
				if !found {
					bad = append(bad, strconv.FormatInt(n, 10))
					break
				}
			}
		case "int-between":
			ints := v.ints()
			ok = []string{v.Args[0], v.Args[1]}
			bad = []string{strconv.FormatInt(ints[0]-1, 10), strconv.FormatInt(ints[1]+1, 10)}
		case "int-at-least":
			ints := v.ints()
			ok = []string{v.Args[0], strconv.FormatInt(ints[0]+1, 10)}
			bad = []string{strconv.FormatInt(ints[0]-1, 10)}
		}
		for j, x := range ok {
			cases = append(cases, validatorCase{fmt.Sprintf("v%02d_ok_%d", i, j), v, x, true})
		}
		for j, x := range bad {
			cases = append(cases, validatorCase{fmt.Sprintf("v%02d_bad_%d", i, j), v, x, false})
		}
	}
	return cases
}

// bases: "base KIND TYPE PATH VALUE" lines of validators.txt: for an
// attribute, the expression every generated block of the type sets it to (a
// required one the generic stand-ins "tfcheck", 1, false would not satisfy,
// or one the provider's other checks need); for a block, the body ("; "
// between attributes) of one more such block in every generated block.
func parseBases(data []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[0] == "base" {
			out[f[1]+" "+f[2]+" "+f[3]] = strings.Join(f[4:], " ")
		}
	}
	return out
}

type generator struct {
	bases      map[string]string
	validators []*validator
}

func (g *generator) literal(v *validator, value string, t json.RawMessage) string {
	lit := value
	if v.Check == "one-of" {
		lit = strconv.Quote(value)
	}
	var kind []any
	if json.Unmarshal(t, &kind) == nil && len(kind) == 2 && (kind[0] == "list" || kind[0] == "set") {
		return "[" + lit + "]"
	}
	return lit
}

// fill: the value of a required attribute the case does not test.
func (g *generator) fill(kind, typ, path string, t json.RawMessage) string {
	if b, ok := g.bases[kind+" "+typ+" "+path]; ok {
		return b
	}
	for _, v := range g.validators {
		if v.Kind == kind && v.Type == typ && v.Path == path {
			return g.literal(v, v.Args[0], t)
		}
	}
	switch strings.Trim(string(t), `"`) {
	case "string":
		return `"tfcheck"`
	case "number":
		return "1"
	case "bool":
		return "false"
	}
	var k []any
	if json.Unmarshal(t, &k) == nil && len(k) == 2 {
		switch k[0] {
		case "list", "set":
			return `["tfcheck"]`
		case "map":
			return "{}"
		}
	}
	return "null"
}

// body writes the block's required attributes and blocks, and the tested
// attribute at steps (the path below this block) set to lit.
func (g *generator) body(w io.Writer, kind, typ string, b *blockJSON, prefix string, steps []string, lit func(json.RawMessage) string, indent string) {
	for _, name := range sortedKeys(b.Attributes) {
		a := b.Attributes[name]
		base, hasBase := g.bases[kind+" "+typ+" "+prefix+name]
		switch {
		case len(steps) == 1 && steps[0] == name:
			fmt.Fprintf(w, "%s%s = %s\n", indent, name, lit(a.Type))
		case hasBase:
			fmt.Fprintf(w, "%s%s = %s\n", indent, name, base)
		case a.Required:
			fmt.Fprintf(w, "%s%s = %s\n", indent, name, g.fill(kind, typ, prefix+name, a.Type))
		}
	}
	for _, name := range sortedKeys(b.BlockTypes) {
		bt := b.BlockTypes[name]
		// A base line for a block: one more such block, with that body ("; " between attributes).
		base, hasBase := g.bases[kind+" "+typ+" "+prefix+name]
		if hasBase {
			fmt.Fprintf(w, "%s%s {\n%s  %s\n%s}\n", indent, name, indent, strings.ReplaceAll(base, "; ", "\n"+indent+"  "), indent)
		}
		if len(steps) > 1 && steps[0] == name {
			fmt.Fprintf(w, "%s%s {\n", indent, name)
			g.body(w, kind, typ, bt.Block, prefix+name+".", steps[1:], lit, indent+"  ")
			fmt.Fprintf(w, "%s}\n", indent)
		} else if bt.MinItems > 0 && !hasBase {
			fmt.Fprintf(w, "%s%s {\n", indent, name)
			g.body(w, kind, typ, bt.Block, prefix+name+".", nil, lit, indent+"  ")
			fmt.Fprintf(w, "%s}\n", indent)
		}
	}
}

// validatorConfig writes the cases into dir: main.tf (the providers) and one
// file per case.
func validatorConfig(dir string) error {
	vs, err := parseValidators(validatorsTxt)
	if err != nil {
		return err
	}
	g := &generator{bases: parseBases(validatorsTxt), validators: vs}
	schemas := map[string]*providerSchemaJSON{}
	for name, data := range map[string][]byte{"aws": awsSchema, "random": randomSchema} {
		var pj providerSchemaJSON
		if err := json.Unmarshal(data, &pj); err != nil {
			return err
		}
		schemas[name] = &pj
	}
	main := "terraform {\n  required_providers {\n    aws = {\n      source = \"hashicorp/aws\"\n    }\n    random = {\n      source = \"hashicorp/random\"\n    }\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		return err
	}
	for _, c := range validatorCases(vs) {
		pj := schemas[strings.SplitN(c.v.Type, "_", 2)[0]]
		if pj == nil {
			return fmt.Errorf("validators.txt:%d: no provider for %s", c.v.Line, c.v.Type)
		}
		s := pj.ResourceSchemas[c.v.Type]
		if c.v.Kind == "data" {
			s = pj.DataSourceSchemas[c.v.Type]
		}
		if s == nil || s.Block == nil {
			return fmt.Errorf("validators.txt:%d: %s %s is not in the schema", c.v.Line, c.v.Kind, c.v.Type)
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "# validators.txt line %d: %s %s %s = %s (%s)\n", c.v.Line, c.v.Kind, c.v.Type, c.v.Path, c.value, map[bool]string{true: "allowed", false: "refused"}[c.ok])
		fmt.Fprintf(&sb, "%s %q %q {\n", c.v.Kind, c.v.Type, c.name)
		v, value := c.v, c.value
		g.body(&sb, c.v.Kind, c.v.Type, s.Block, "", strings.Split(c.v.Path, "."), func(t json.RawMessage) string { return g.literal(v, value, t) }, "  ")
		sb.WriteString("}\n")
		if err := os.WriteFile(filepath.Join(dir, c.name+".tf"), []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// report reads `tofu validate -json` of validatorConfig's configuration and
// writes one line per diagnostic (case, severity, summary, detail) and per
// case without any ("case ok"), sorted. It returns the cases whose verdict is
// wrong: an error for an allowed value, none for a refused one, or a
// diagnostic outside every case.
func report(r io.Reader, w io.Writer) ([]string, error) {
	var out struct {
		Diagnostics []struct {
			Severity, Summary, Detail string
			Range                     *struct{ Filename string }
		}
	}
	if err := json.NewDecoder(r).Decode(&out); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	vs, err := parseValidators(validatorsTxt)
	if err != nil {
		return nil, err
	}
	errs := map[string]int{}
	var lines, wrong []string
	for _, d := range out.Diagnostics {
		name := "-"
		if d.Range != nil {
			name = strings.TrimSuffix(filepath.Base(d.Range.Filename), ".tf")
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s", name, d.Severity, d.Summary, strings.ReplaceAll(d.Detail, "\n", `\n`)))
		if d.Severity == "error" {
			errs[name]++
		}
	}
	known := map[string]bool{}
	for _, c := range validatorCases(vs) {
		known[c.name] = true
		if n, seen := errs[c.name]; !seen {
			lines = append(lines, c.name+"\tok")
			if !c.ok {
				wrong = append(wrong, fmt.Sprintf("%s: %s %s %s = %s: accepted, want an error", c.name, c.v.Kind, c.v.Type, c.v.Path, c.value))
			}
		} else if c.ok {
			wrong = append(wrong, fmt.Sprintf("%s: %s %s %s = %s: %d errors, want none", c.name, c.v.Kind, c.v.Type, c.v.Path, c.value, n))
		}
	}
	for name := range errs {
		if !known[name] {
			wrong = append(wrong, fmt.Sprintf("%s: an error outside the cases", name))
		}
	}
	sort.Strings(lines)
	sort.Strings(wrong)
	_, err = io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return wrong, err
}
