package core

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// A resource template (2025-11-25 and 2026-07-28 server/resources §Resource
// Templates) is an RFC 6570 URI template; resources/read matches a URI
// against it and hands the variables to the handler. uriTemplate compiles
// a template into one regexp (Go's regexp runs in time linear in the URI)
// with a capture group per variable. It reads the whole Level 4 syntax;
// what matching cannot recover from an expansion is said where it is
// decided:
//
//   - a prefix modifier ({var:3}) bounds the characters the variable
//     matches; where the same variable also appears whole, the whole value
//     wins;
//   - an exploded list ({list*}, {/list*}, {.list*}, {;list*}, {?list*}) is
//     given as its items joined with commas, as the query's repeated
//     parameters are;
//   - in a reserved or fragment expression of several variables
//     ({+a,b}), every variable but the last stops at a comma;
//   - the query ({?a,b} and {&c}, one query part per template) is read as
//     a query: parameters in any order, others ignored.
//
// The templates' libraries (github.com/yosida95/uritemplate/v3, which both
// Go SDKs use) match by a backtracking machine of their own that takes
// seconds on a long URI, and read a query only in the template's order;
// docs/design.md, "URI templates", gives the measurements.
type uriTemplate struct {
	re     *regexp.Regexp
	groups []templateVar // one per capture group, in order
	query  []string      // the variables of the query expression
}

// templateVar is one variable of a template, as a capture group.
type templateVar struct {
	name    string
	prefix  bool // a prefix modifier: the value is cut
	explode bool
	sep     byte // between an exploded list's items in the URI
	named   bool // ';' expressions: each item is name=value
}

// maxTemplateURIBytes bounds the URIs matched against templates: a longer
// one matches none (it may still name a resource exactly). Matching is
// linear, and this bounds its work per template for a hostile URI.
const maxTemplateURIBytes = 64 << 10

// maxPrefix is RFC 6570 §2.4.1's bound on a prefix modifier's max-length.
const maxPrefix = 9999

var templateVarName = regexp.MustCompile(`^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$`)

// compileURITemplate compiles an RFC 6570 template for matching.
func compileURITemplate(t string) (*uriTemplate, error) {
	ut := &uriTemplate{}
	var b strings.Builder
	b.WriteString("^")
	rest := t
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return nil, errors.New("unopened expression")
			}
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		if strings.IndexByte(rest[:i], '}') >= 0 {
			return nil, errors.New("unopened expression")
		}
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, errors.New("unclosed expression")
		}
		expr := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		if err := ut.expression(&b, expr); err != nil {
			return nil, err
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	ut.re = re
	return ut, nil
}

// expression appends the regexp of one expression (the text between the
// braces).
func (ut *uriTemplate) expression(b *strings.Builder, expr string) error {
	if expr == "" {
		return errors.New("empty expression")
	}
	op := byte(0)
	if strings.IndexByte("+#./;?&", expr[0]) >= 0 {
		op, expr = expr[0], expr[1:]
	} else if strings.IndexByte("=,!@|", expr[0]) >= 0 {
		return fmt.Errorf("operator %q is reserved (RFC 6570 §2.2)", expr[0])
	}
	specs := strings.Split(expr, ",")
	vars := make([]templateVar, len(specs))
	prefixes := make([]int, len(specs))
	for k, spec := range specs {
		v := &vars[k]
		switch {
		case strings.HasSuffix(spec, "*"):
			spec, v.explode = spec[:len(spec)-1], true
		case strings.Contains(spec, ":"):
			var n string
			spec, n, _ = strings.Cut(spec, ":")
			p, err := strconv.Atoi(n)
			if err != nil || p < 1 || p > maxPrefix || n[0] == '0' {
				return fmt.Errorf("invalid prefix modifier %q", n)
			}
			v.prefix, prefixes[k] = true, p
		}
		if !templateVarName.MatchString(spec) {
			return fmt.Errorf("invalid variable name %q", spec)
		}
		v.name = spec
	}
	switch op {
	case '?', '&':
		if ut.query != nil {
			return errors.New("only one query expression is supported")
		}
		// The rest of the URI is read as a query (match).
		b.WriteString(`(?P<q>(?:[?&][^#]*)?)`)
		for _, v := range vars {
			ut.query = append(ut.query, v.name)
		}
		return nil
	case 0, '+', '#':
		if op == '#' {
			b.WriteString("(?:#")
		}
		for k, v := range vars {
			if k > 0 {
				b.WriteString(",")
			}
			class := `[^/?#,]`
			switch {
			case op == 0 && len(vars) == 1:
				class = `[^/?#]` // a list's items and the commas between them
			case op != 0 && k == len(vars)-1:
				class = `.`
			case op != 0:
				class = `[^,]`
			}
			v.sep = ','
			pattern := class + "*"
			switch {
			case v.prefix:
				pattern = prefixPattern(class, prefixes[k])
			case v.explode && op == 0:
				pattern = `[^/?#]*` // the items and the commas between them
			}
			ut.group(b, v, pattern)
		}
		if op == '#' {
			b.WriteString(")?")
		}
		return nil
	}
	// '/', '.' and ';': each defined variable is preceded by the operator;
	// an undefined one leaves nothing, so each part is optional.
	sep := regexp.QuoteMeta(string(op))
	class := `[^/?#` + regexp.QuoteMeta(string(op)) + `]`
	if op == '/' {
		class = `[^/?#]`
	}
	for k, v := range vars {
		v.sep = op
		b.WriteString("(?:" + sep)
		name := ""
		if op == ';' {
			name = regexp.QuoteMeta(v.name) + "=?"
			v.named = true
			b.WriteString(name)
		}
		pattern := class + "*"
		switch {
		case v.prefix:
			pattern = prefixPattern(class, prefixes[k])
		case v.explode:
			// As few items as the rest of the template allows: in
			// {/list*,path:4} the path takes the last segment.
			pattern = class + "*(?:" + sep + name + class + "*)*?"
		}
		ut.group(b, v, pattern)
		b.WriteString(")?")
	}
	return nil
}

// prefixPattern matches at most n characters of class, a percent-encoded
// octet counting as one (RFC 6570 §2.4.1 counts characters before
// encoding). Go's regexp repeats at most 1000 times: a longer prefix is
// unbounded.
func prefixPattern(class string, n int) string {
	unit := `(?:%[0-9A-Fa-f]{2}|` + strings.Replace(class, "]", "%]", 1) + `)`
	if class == "." {
		unit = `(?:%[0-9A-Fa-f]{2}|[^%])`
	}
	if n > 1000 {
		return unit + "*"
	}
	return unit + "{0," + strconv.Itoa(n) + "}"
}

func (ut *uriTemplate) group(b *strings.Builder, v templateVar, pattern string) {
	fmt.Fprintf(b, "(?P<v%d>%s)", len(ut.groups), pattern)
	ut.groups = append(ut.groups, v)
}

// matches reports whether uri is an expansion of the template.
func (ut *uriTemplate) matches(uri string) bool {
	return len(uri) <= maxTemplateURIBytes && ut.re.MatchString(uri)
}

// match returns the template's variables for uri, or nil when uri is not
// an expansion of it. Values are percent-decoded; an exploded list's items
// are joined with commas.
func (ut *uriTemplate) match(uri string) map[string]string {
	if len(uri) > maxTemplateURIBytes {
		return nil
	}
	m := ut.re.FindStringSubmatchIndex(uri)
	if m == nil {
		return nil
	}
	vars := map[string]string{}
	gi := 0
	for i, name := range ut.re.SubexpNames() {
		if i == 0 || name == "" || m[2*i] < 0 {
			if name != "" && name != "q" {
				gi++
			}
			continue
		}
		s := uri[m[2*i]:m[2*i+1]]
		if name == "q" {
			q, _ := url.ParseQuery(strings.TrimLeft(s, "?&"))
			for _, n := range ut.query {
				if val, ok := q[n]; ok {
					vars[n] = strings.Join(val, ",")
				}
			}
			continue
		}
		v := ut.groups[gi]
		gi++
		if _, seen := vars[v.name]; v.prefix && seen {
			continue // a prefix never replaces a value read before
		}
		vars[v.name] = v.value(s)
	}
	return vars
}

// value decodes the text s a variable matched.
func (v templateVar) value(s string) string {
	if !v.explode || v.sep == ',' {
		return unescape(s)
	}
	items := strings.Split(s, string(v.sep))
	for k, it := range items {
		if v.named {
			it = strings.TrimPrefix(strings.TrimPrefix(it, v.name), "=")
		}
		items[k] = unescape(it)
	}
	return strings.Join(items, ",")
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
