package core

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// methodHandler answers one request: it returns the encoded result object.
type methodHandler func(s *Server, ctx context.Context, r *Request, params []byte) ([]byte, error)

// methodSpec describes a method of the 2026-07-28 endpoint.
type methodSpec struct {
	handle methodHandler
	// available reports whether the capability behind the method is served;
	// if not, the method is answered -32601 / 404.
	available func(s *Server, reg *registry) bool
	// nameParam is the params member mirrored in Mcp-Name ("name" or "uri").
	nameParam string
}

func always(*Server, *registry) bool { return true }

var methodTable = map[string]*methodSpec{
	"server/discover":          {handle: (*Server).discover, available: always},
	"tools/list":               {handle: (*Server).listTools, available: (*Server).hasTools},
	"tools/call":               {handle: (*Server).callTool, available: (*Server).hasTools, nameParam: "name"},
	"resources/list":           {handle: (*Server).listResources, available: (*Server).hasResources},
	"resources/templates/list": {handle: (*Server).listTemplates, available: (*Server).hasResources},
	"resources/read":           {handle: (*Server).readResource, available: (*Server).hasResources, nameParam: "uri"},
	"prompts/list":             {handle: (*Server).listPrompts, available: (*Server).hasPrompts},
	"prompts/get":              {handle: (*Server).getPrompt, available: (*Server).hasPrompts, nameParam: "name"},
	"completion/complete": {handle: (*Server).complete, available: func(s *Server, _ *registry) bool {
		return s.opts.CompletionHandler != nil
	}},
	"subscriptions/listen": {handle: (*Server).listen, available: always},
}

// invoke runs a method handler, turning a panic into a logged -32603.
func (s *Server) invoke(ctx context.Context, h methodHandler, r *Request, params []byte) (result []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "handler panicked", "method", r.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, err = nil, errors.New("panic")
		}
	}()
	if !r.ownCaps {
		// The handler gets its own copy; the server decides on r.caps.
		if r.caps == nil {
			r.caps = r.ClientCapabilities
		}
		r.ClientCapabilities = cloneCaps(r.caps)
		r.ownCaps = true
	}
	return h(s, ctx, r, params)
}
