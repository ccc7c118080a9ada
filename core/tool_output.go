package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpfn/mcpfn/core/internal/schema"
)

// checkOutput holds a tool's result to the tool's outputSchema
// (2026-07-28 server/tools, "Output Schema": a server MUST provide
// structured results that conform to it; 2025-06-18 and 2025-11-25 say
// the same), in every era: a result that breaks the schema a tool declares
// is a fault of the server whoever asks. It returns nil for a conforming
// result, an isError result (a tool execution error, which carries no
// structured result), a tool without a check (st.output nil: no schema,
// or one derived from the result type alone, which conforms by
// construction) and with ServerOptions.SkipOutputValidation.
//
// Otherwise the answer is -32603 (docs/design.md, "Structured output needs
// an advertised schema"): the client asked nothing wrong, and an isError
// result would invite the model to retry a call that fails the same way.
// Its message names the tool and where the schema failed (the keyword and
// its location in the advertised schema), never a value of the result,
// which may hold what the client should not see in an error; the
// validator's detail goes to the log.
func (s *Server) checkOutput(ctx context.Context, st *serverTool, res *CallToolResult) *Error {
	if st.output == nil || res.IsError || s.opts.SkipOutputValidation {
		return nil
	}
	name := st.tool.Name
	var raw []byte
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		raw = sc
	default:
		b, err := json.Marshal(sc)
		if err != nil {
			s.log.ErrorContext(ctx, "tool result: structuredContent does not encode", "tool", name, "error", err.Error())
			return outputMismatch(fmt.Sprintf("the structuredContent of tool %q does not encode as JSON", name), name, "")
		}
		raw = b
	}
	if len(raw) == 0 {
		s.log.ErrorContext(ctx, "tool result without the structuredContent its outputSchema requires", "tool", name)
		return outputMismatch(fmt.Sprintf("the result of tool %q has no structuredContent, which its outputSchema requires", name), name, "")
	}
	if st.output.ProvenValid(raw) {
		return nil
	}
	v, err := schema.DecodeForValidation(raw)
	if err != nil {
		s.log.ErrorContext(ctx, "tool result: structuredContent is not valid JSON", "tool", name, "error", err.Error())
		return outputMismatch(fmt.Sprintf("the structuredContent of tool %q is not valid JSON", name), name, "")
	}
	m, err := st.output.Check(v)
	if err != nil {
		// A derived schema is resolved on its first result.
		s.log.ErrorContext(ctx, "tool outputSchema does not resolve", "tool", name, "error", err.Error())
		return internalf("the outputSchema of tool %q is invalid", name)
	}
	if m == nil {
		return nil
	}
	s.log.ErrorContext(ctx, "tool result does not conform to its outputSchema", "tool", name,
		"keywordLocation", m.KeywordLocation, "error", m.Detail)
	where := fmt.Sprintf("at %q", m.KeywordLocation)
	if m.Keyword != "" {
		where = fmt.Sprintf("keyword %q failed at %q", m.Keyword, m.KeywordLocation)
	}
	return outputMismatch(fmt.Sprintf("the result of tool %q does not conform to its outputSchema: %s", name, where), name, m.KeywordLocation)
}

// outputMismatch is the -32603 of a result that breaks its tool's
// outputSchema: data.reason "output_schema_mismatch", data.tool, and
// data.keywordLocation where known.
func outputMismatch(msg, tool, location string) *Error {
	data := map[string]any{"reason": "output_schema_mismatch", "tool": tool}
	if location != "" {
		data["keywordLocation"] = location
	}
	return NewError(CodeInternalError, "Internal error: "+msg).WithData(data)
}
