package core

import "context"

// FeatureKind names what a [Feature] is.
type FeatureKind uint8

// The kinds of features a server lists.
const (
	FeatureTool FeatureKind = iota + 1
	FeaturePrompt
	FeatureResource
	FeatureResourceTemplate
)

// Feature is a tool, prompt, resource or resource template, as
// ServerOptions.Filter sees it: Kind says which field is set.
type Feature struct {
	Kind             FeatureKind
	Tool             *Tool
	Prompt           *Prompt
	Resource         *Resource
	ResourceTemplate *ResourceTemplate
}

// Name returns the tool's or prompt's name, the resource's URI or the
// template's URI template.
func (f Feature) Name() string {
	switch f.Kind {
	case FeatureTool:
		return f.Tool.Name
	case FeaturePrompt:
		return f.Prompt.Name
	case FeatureResource:
		return f.Resource.URI
	case FeatureResourceTemplate:
		return f.ResourceTemplate.URITemplate
	}
	return ""
}

// method is the request that uses the feature, as Operation.Method says it.
func (f Feature) method() string {
	switch f.Kind {
	case FeatureTool:
		return "tools/call"
	case FeaturePrompt:
		return "prompts/get"
	}
	return "resources/read"
}

// ListAuthorizer is implemented by an [Authenticator] that can also hide
// from lists what its Authorize would refuse: package auth does, with
// auth.Options.HideUnauthorized. The server asks once, in NewServer.
//
// Unlike ServerOptions.Filter, what the authenticator hides is hidden from
// lists only: a direct use of it is authorized as before, and refused with
// the authenticator's answer (for auth, 403 insufficient_scope naming the
// scopes to obtain), so that a client holding too narrow a token can step
// up (2026-07-28 basic/authorization §Scope Challenge Handling).
type ListAuthorizer interface {
	// ListFilter returns the function that reports whether the caller in
	// ctx may be shown op's target (Method and Name set: "tools/call",
	// "prompts/get" or "resources/read"; no arguments), or nil when the
	// authenticator hides nothing.
	ListFilter() func(ctx context.Context, op Operation) bool
}

// filters is the server's per-caller view of its features.
type filters struct {
	user func(context.Context, *Request, Feature) bool // ServerOptions.Filter
	auth func(ctx context.Context, op Operation) bool  // ListAuthorizer's
}

func (s *Server) initFilters() {
	s.filter.user = s.opts.Filter
	if la, ok := s.opts.Authenticator.(ListAuthorizer); ok {
		s.filter.auth = la.ListFilter()
	}
}

// perCaller reports whether lists depend on the caller: their cache scope
// is then never public.
func (s *Server) perCaller() bool { return s.filter.user != nil || s.filter.auth != nil }

// visible reports whether f exists for the caller of r: a feature
// ServerOptions.Filter hides is answered as one the server does not have.
func (s *Server) visible(ctx context.Context, r *Request, f Feature) bool {
	return s.filter.user == nil || s.filter.user(ctx, r, f)
}

// listed reports whether a list shows f to the caller of r: visible, and
// not hidden by the authenticator.
func (s *Server) listed(ctx context.Context, r *Request, f Feature) bool {
	if !s.visible(ctx, r, f) {
		return false
	}
	return s.filter.auth == nil || s.filter.auth(ctx, Operation{Method: f.method(), Name: f.Name(), ProtocolVersion: r.ProtocolVersion})
}

// listedOnly returns the items of list that a list shows to the caller of
// r; list itself when nothing is filtered.
func listedOnly[T any](ctx context.Context, s *Server, r *Request, list []T, feature func(T) Feature) []T {
	if !s.perCaller() {
		return list
	}
	var out []T
	for i, x := range list {
		if s.listed(ctx, r, feature(x)) {
			if out == nil {
				out = make([]T, 0, len(list)-i)
			}
			out = append(out, x)
		}
	}
	return out
}
