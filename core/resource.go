package core

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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
	uri     *uriTemplate
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
	s.changed(changeResources, "")
}

// RemoveResources unregisters resources by URI and notifies listeners.
func (s *Server) RemoveResources(uris ...string) {
	unregister(s, changeResources, uris, func(r *registry) map[string]*serverResource { return r.resources })
}

// AddResourceTemplate registers a family of resources by an RFC 6570 URI
// template (Level 4 syntax: {var} is one path segment, {+var} and {#var}
// any characters, {/var}, {.var} and {;var} path parameters, {?a,b} and
// {&c} query parameters in any order, with prefix modifiers and exploded
// lists). A read whose URI matches no resource but a template goes to the
// template's handler with the variables, percent-decoded, in req.Vars (an
// exploded list's items joined with commas). Templates are tried in the
// order they were added; a URI over 64 KiB matches none. It panics on an
// invalid template.
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceHandler) {
	if t == nil || h == nil {
		panic("core: AddResourceTemplate: nil template or handler")
	}
	if t.Name == "" {
		panic(fmt.Sprintf("core: AddResourceTemplate %q: a name is required", t.URITemplate))
	}
	ut, err := compileURITemplate(t.URITemplate)
	if err != nil {
		panic(fmt.Sprintf("core: AddResourceTemplate %q: %v", t.URITemplate, err))
	}
	tc := *t
	s.update(func(reg *registry) {
		st := &serverTemplate{tmpl: &tc, handler: h, uri: ut, order: resourceSeq.Add(1)}
		for i, old := range reg.templates {
			if old.tmpl.URITemplate == tc.URITemplate {
				st.order = old.order
				reg.templates[i] = st
				return
			}
		}
		reg.templates = append(reg.templates, st)
	})
	s.changed(changeResources, "")
}

// NotifyResourceUpdated tells clients subscribed to uri (legacy
// resources/subscribe, or resourceSubscriptions of subscriptions/listen)
// that it changed.
func (s *Server) NotifyResourceUpdated(uri string) { s.changed(changeResourceUpdated, uri) }

// listResources answers resources/list.
func (s *Server) listResources(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	return listPage(ctx, r, params, s.reg.Load().resList, func(x *serverResource) string { return fmt.Sprintf("%016d", x.order) },
		func(x *serverResource) *Resource { return x.res }, resourceFeature, "resources", "resources/list")
}

// listTemplates answers resources/templates/list.
func (s *Server) listTemplates(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	return listPage(ctx, r, params, s.reg.Load().templates, func(x *serverTemplate) string { return fmt.Sprintf("%016d", x.order) },
		func(x *serverTemplate) *ResourceTemplate { return x.tmpl }, templateFeature, "resourceTemplates", "resources/templates/list")
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
	if x, ok := reg.resources[req.URI]; ok && s.visible(ctx, r, resourceFeature(x)) {
		h = x.handler
	} else {
		for _, t := range reg.templates {
			if vars := t.uri.match(req.URI); vars != nil && s.visible(ctx, r, templateFeature(t)) {
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

func resourceFeature(x *serverResource) Feature {
	return Feature{Kind: FeatureResource, Resource: x.res}
}

func templateFeature(x *serverTemplate) Feature {
	return Feature{Kind: FeatureResourceTemplate, ResourceTemplate: x.tmpl}
}
