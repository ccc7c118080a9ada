package core

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// ResourceHandler reads a resource. It returns the contents (never empty for
// an existing resource), ResourceNotFoundError for a missing one, or an
// input-required error (see InputRequired) to ask the client for input.
type ResourceHandler func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error)

type serverResource struct {
	res     *Resource
	handler ResourceHandler
	order   int64
}

type serverTemplate struct {
	tmpl    *ResourceTemplate
	handler ResourceHandler
	re      *regexp.Regexp
	vars    []string
	order   int64
}

var resourceSeq atomic.Int64

// AddResource registers a resource with a fixed URI, replacing any resource
// with the same URI, and notifies listeners. Resources are listed in the
// order they were first added. It panics on an invalid definition.
func (s *Server) AddResource(r *Resource, h ResourceHandler) {
	if r == nil || h == nil {
		panic("core: AddResource: nil resource or handler")
	}
	if u, err := url.Parse(r.URI); err != nil || u.Scheme == "" {
		panic(fmt.Sprintf("core: AddResource %q: the URI must be absolute", r.URI))
	}
	if r.Name == "" {
		panic(fmt.Sprintf("core: AddResource %q: a name is required", r.URI))
	}
	rc := *r
	s.update(func(reg *registry) {
		order := resourceSeq.Add(1)
		if old, ok := reg.resources[rc.URI]; ok {
			order = old.order
		}
		reg.resources[rc.URI] = &serverResource{res: &rc, handler: h, order: order}
	})
	s.hub.publish(changeResources, "")
}

// RemoveResources unregisters resources by URI and notifies listeners.
func (s *Server) RemoveResources(uris ...string) {
	unregister(s, changeResources, uris, func(r *registry) map[string]*serverResource { return r.resources })
}

// AddResourceTemplate registers a family of resources by an RFC 6570 URI
// template. Supported expressions: {var} (one path segment), {+var} and
// {#var} (any characters), {/var} and {.var}, and {?a,b} / {&a} query
// parameters. A read whose URI matches no resource but a template goes to
// the template's handler with the variables in req.Vars. It panics on an
// invalid template.
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceHandler) {
	if t == nil || h == nil {
		panic("core: AddResourceTemplate: nil template or handler")
	}
	if t.Name == "" {
		panic(fmt.Sprintf("core: AddResourceTemplate %q: a name is required", t.URITemplate))
	}
	re, vars, err := compileURITemplate(t.URITemplate)
	if err != nil {
		panic(fmt.Sprintf("core: AddResourceTemplate %q: %v", t.URITemplate, err))
	}
	tc := *t
	s.update(func(reg *registry) {
		st := &serverTemplate{tmpl: &tc, handler: h, re: re, vars: vars, order: resourceSeq.Add(1)}
		for i, old := range reg.templates {
			if old.tmpl.URITemplate == tc.URITemplate {
				st.order = old.order
				reg.templates[i] = st
				return
			}
		}
		reg.templates = append(reg.templates, st)
	})
	s.hub.publish(changeResources, "")
}

// NotifyResourceUpdated tells clients subscribed to uri (legacy
// resources/subscribe, or resourceSubscriptions of subscriptions/listen)
// that it changed.
func (s *Server) NotifyResourceUpdated(uri string) { s.hub.publish(changeResourceUpdated, uri) }

// compileURITemplate turns an RFC 6570 template into a matching regexp.
func compileURITemplate(t string) (*regexp.Regexp, []string, error) {
	var b strings.Builder
	var vars []string
	b.WriteString("^")
	rest := t
	query := false
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, nil, errors.New("unclosed expression")
		}
		expr := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		if expr == "" {
			return nil, nil, errors.New("empty expression")
		}
		op := byte(0)
		if strings.IndexByte("+#/.?&;", expr[0]) >= 0 {
			op, expr = expr[0], expr[1:]
		}
		names := strings.Split(expr, ",")
		for _, n := range names {
			n = strings.TrimSuffix(n, "*")
			if n == "" || !varName.MatchString(n) {
				return nil, nil, fmt.Errorf("invalid variable name %q", n)
			}
		}
		switch op {
		case 0:
			for k, n := range names {
				if k > 0 {
					b.WriteString(",")
				}
				b.WriteString("(?P<" + groupName(len(vars)) + ">[^/?#,]*)")
				vars = append(vars, strings.TrimSuffix(n, "*"))
			}
		case '+', '#':
			if op == '#' {
				b.WriteString("#")
			}
			b.WriteString("(?P<" + groupName(len(vars)) + ">.*)")
			vars = append(vars, strings.TrimSuffix(names[0], "*"))
			if len(names) > 1 {
				return nil, nil, errors.New("only one variable is supported in {+...} and {#...}")
			}
		case '/', '.', ';':
			for _, n := range names {
				sep := string(op)
				b.WriteString(regexp.QuoteMeta(sep))
				if op == ';' {
					b.WriteString(regexp.QuoteMeta(strings.TrimSuffix(n, "*")) + "=?")
				}
				b.WriteString("(?P<" + groupName(len(vars)) + ">[^/?#.;]*)")
				vars = append(vars, strings.TrimSuffix(n, "*"))
			}
		case '?', '&':
			if query {
				return nil, nil, errors.New("only one query expression is supported")
			}
			query = true
			b.WriteString("(?P<q>(?:[?&].*)?)")
			for _, n := range names {
				vars = append(vars, "?"+strings.TrimSuffix(n, "*"))
			}
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return re, vars, err
}

var varName = regexp.MustCompile(`^[A-Za-z0-9_.%]+$`)

func groupName(i int) string { return fmt.Sprintf("v%d", i) }

// match returns the template's variables for uri, or nil.
func (t *serverTemplate) match(uri string) map[string]string {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil
	}
	vars := map[string]string{}
	gi := 0
	for i, name := range t.re.SubexpNames() {
		if i == 0 || name == "" {
			continue
		}
		if name == "q" {
			q, _ := url.ParseQuery(strings.TrimLeft(m[i], "?&"))
			for _, v := range t.vars {
				if strings.HasPrefix(v, "?") {
					if val, ok := q[v[1:]]; ok {
						vars[v[1:]] = strings.Join(val, ",")
					}
				}
			}
			continue
		}
		val, err := url.PathUnescape(m[i])
		if err != nil {
			val = m[i]
		}
		vars[t.vars[gi]] = val
		gi++
	}
	return vars
}

// listResources answers resources/list.
func (s *Server) listResources(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	return listPage(r, params, s.reg.Load().resList, func(x *serverResource) string { return fmt.Sprintf("%016d", x.order) },
		func(x *serverResource) *Resource { return x.res }, "resources", "resources/list")
}

// listTemplates answers resources/templates/list.
func (s *Server) listTemplates(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	return listPage(r, params, s.reg.Load().templates, func(x *serverTemplate) string { return fmt.Sprintf("%016d", x.order) },
		func(x *serverTemplate) *ResourceTemplate { return x.tmpl }, "resourceTemplates", "resources/templates/list")
}

// readResource answers resources/read.
func (s *Server) readResource(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	req := &ReadResourceRequest{Request: r}
	var hasURI, hasState bool
	err := parseParams(params, func(k, v []byte) bool {
		if !jsonwire.KeyIs(k, "uri") {
			return false
		}
		req.URI, hasURI = jsonwire.RawString(v)
		return true
	}, &req.inputResponses, &req.requestState, &hasState)
	if err != nil {
		return nil, err
	}
	if !hasURI || req.URI == "" {
		return nil, InvalidParamsError("Invalid params: uri must be a non-empty string")
	}
	if u, err := url.Parse(req.URI); err != nil || u.Scheme == "" {
		return nil, InvalidParamsError("Invalid params: uri %q is not an absolute URI", req.URI)
	}
	reg := s.reg.Load()
	var h ResourceHandler
	if x, ok := reg.resources[req.URI]; ok {
		h = x.handler
	} else {
		for _, t := range reg.templates {
			if vars := t.match(req.URI); vars != nil {
				h, req.Vars = t.handler, vars
				break
			}
		}
	}
	if h == nil {
		return nil, s.notFound(r, req.URI)
	}
	if err := s.authorize(ctx, Operation{Method: "resources/read", Name: req.URI, ProtocolVersion: r.ProtocolVersion}); err != nil {
		return nil, err
	}
	binding := stateBinding{method: "resources/read", target: req.URI, principal: r.Principal}
	if err := s.setInput(ctx, r, mrtrCall{binding: binding, responses: req.inputResponses, token: req.requestState, hasToken: hasState}); err != nil {
		return nil, err
	}
	res, err := h(ctx, req)
	if err != nil {
		var ir *InputRequiredError
		if errors.As(err, &ir) {
			return s.inputRequired(ctx, r, ir, binding)
		}
		if errors.Is(err, errResourceNotFound) {
			return nil, s.notFound(r, req.URI)
		}
		return nil, err
	}
	if res == nil || len(res.Contents) == 0 {
		return nil, s.notFound(r, req.URI)
	}
	v := struct {
		Contents []ResourceContents `json:"contents"`
	}{res.Contents}
	return r.encodeResult(v, "resources/read", res.Meta, nil)
}
