package core

import (
	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// Limits on the client-supplied objects that the server canonicalizes,
// validates and binds (tool and prompt arguments, inputResponses). A request
// over a limit is answered -32602 before any handler runs. See
// docs/design.md, "Hardening: request bodies and arguments".
const (
	// MaxArgumentDepth is how deeply objects and arrays may nest inside
	// arguments (the arguments object itself is depth 1).
	MaxArgumentDepth = 32
	// MaxArgumentMembers is how many members one object inside arguments
	// may have.
	MaxArgumentMembers = 10000
)

// checkArguments enforces MaxArgumentDepth and MaxArgumentMembers on the
// valid JSON value v and rejects an object, at any depth, that names a key
// twice (jsonwire.Check). what names the value in the -32602 message.
func checkArguments(what string, v []byte) error {
	if err := jsonwire.Check(v); err != nil {
		return InvalidParamsError("Invalid params: %s: %v", what, err)
	}
	return nil
}
