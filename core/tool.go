package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unsafe"

	"github.com/mcpfn/mcpfn/core/internal/schema"
	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/internal/mcpheader"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// ToolOptions say how the server treats a tool: the settings that are not
// part of its definition on the wire (mcp.Tool). AddTool and AddSessionTool
// take them as an optional last argument; nil, or none, means the zero
// value: OutputAuto, no required capabilities, and (AddSessionTool) a
// session required.
type ToolOptions struct {
	// StructuredOutput is the structured output policy of the tool.
	StructuredOutput OutputPolicy
	// RequiredCapabilities are client capabilities every call needs. A call
	// whose client lacks them is answered -32021 before the handler runs.
	RequiredCapabilities *ClientCapabilities
	// SessionOptional, for a tool registered with AddSessionTool, lets the
	// tool serve calls without a session (every 2026-07-28 call, and
	// sessionless legacy calls): its handler then gets a nil *Session.
	SessionOptional bool
	// TaskSupport says whether calls of the tool run as tasks of the
	// Tasks extension (io.modelcontextprotocol/tasks) for 2026-07-28
	// clients that declare it on the call: TaskOptional runs a declaring
	// call as a task and any other synchronously; TaskRequired answers a
	// call that does not declare the extension -32021 (before the
	// handler runs). The zero value, like TaskForbidden, never makes a
	// task. Legacy calls always run synchronously. A task runs the same
	// handler, in a context detached from the request: see
	// Server.RunTask for what it may do inside a task.
	TaskSupport TaskSupport
	// DeferTask, with TaskSupport, runs the handler inside the tools/call
	// request first, so that it can gather input through multi
	// round-trip requests before the task exists; the call becomes a task
	// where the handler calls Request.StartTask. Without it the task is
	// created before the handler runs.
	DeferTask bool
	// SkipOutputValidation sends the tool's results without checking
	// their structuredContent against the outputSchema, for a tool whose
	// handler validates its own results. By default a result whose
	// structuredContent does not conform to a schema the tool declares
	// (Tool.OutputSchema, or a derived schema with constraints from
	// jsonschema tags) is answered -32603 instead; the results of a
	// schema derived from the Go type alone are never validated, as they
	// conform by construction (see AddTool). ServerOptions.SkipOutputValidation
	// does the same for every tool of a server.
	SkipOutputValidation bool
}

// toolOptions returns the one *ToolOptions of a registration, or the zero
// value; more than one is a programming error.
func toolOptions(fn string, t *Tool, opts []*ToolOptions) ToolOptions {
	switch len(opts) {
	case 0:
		return ToolOptions{}
	case 1:
		if opts[0] == nil {
			return ToolOptions{}
		}
		return *opts[0]
	}
	name := ""
	if t != nil {
		name = t.Name
	}
	panic(fmt.Sprintf("core: %s %q: more than one *ToolOptions", fn, name))
}

// OutputPolicy says whether a typed tool returns structured content.
type OutputPolicy int

const (
	// OutputAuto (the default) advertises the output schema derived from
	// the result type (or supplied in Tool.OutputSchema) as outputSchema and
	// returns the result as structuredContent, whatever its JSON root, plus
	// a text block: the string itself for a string, none for a nil result,
	// else its JSON. A result type without a JSON Schema (an interface type
	// such as any, or json.RawMessage) gets no outputSchema and stays
	// unstructured: the text block only. So does a result whose schema the
	// legacy revision of the request cannot list (2025-06-18 and 2025-11-25
	// list object roots only: a pointer, map or non-object result is text
	// only there; 2025-03-26 has no structured output). Every result sent
	// with structuredContent has its outputSchema in that revision's list.
	OutputAuto OutputPolicy = iota
	// OutputRequired is OutputAuto, but registration fails when the result
	// type has no JSON Schema and no Tool.OutputSchema is supplied.
	OutputRequired
	// OutputDisabled returns only the text block; supplying an OutputSchema
	// with it is a registration error.
	OutputDisabled
)

// ToolFunc is a typed tool handler. In is the arguments type (a struct, or a
// map); its JSON Schema is derived once, at registration, and arguments are
// validated against it before the handler runs. Out is the result type; a
// *CallToolResult is returned as is.
//
// The handler's error decides the outcome: nil, the result; a ToolError, an
// isError result the model can act on; an *Error, that JSON-RPC error (e.g.
// InvalidParamsError); an input-required error (see InputRequired), a multi
// round-trip request; any other ("plain") error is logged and answered with
// a generic -32603 whose message says nothing of it, unless
// ServerOptions.ToolErrorResults reports it as an isError result with its
// message. (go-sdk's ToolHandlerFor reports a plain error as an isError
// result; mark3labs/mcp-go sends its message in a -32603 error.)
type ToolFunc[In, Out any] func(ctx context.Context, req *CallToolRequest, in In) (Out, error)

// ToolError is a tool execution failure reported to the model as a result with
// isError: true, not as a protocol error.
type ToolError struct {
	Message string
}

func (e *ToolError) Error() string { return e.Message }

// ToolErrorf returns a *ToolError with a formatted message.
func ToolErrorf(format string, args ...any) error {
	return &ToolError{Message: fmt.Sprintf(format, args...)}
}

// serverTool is a registered tool.
type serverTool struct {
	tool       *Tool
	modernJSON json.RawMessage // tools/list entry, 2026-07-28
	legacyJSON json.RawMessage // tools/list entry, 2025-06-18 and 2025-11-25
	// legacy0326JSON is the tools/list entry for 2025-03-26, which has no
	// structured output (outputSchema came in 2025-06-18).
	legacy0326JSON json.RawMessage
	input          *schema.Compiled
	// output validates the structuredContent of results against the
	// outputSchema (checkOutput); nil when no check is needed: no schema,
	// a schema derived from the result type alone (exact by
	// construction), or validation skipped.
	output  *schema.Compiled
	headers []headerParam
	raw     bool // a typed tool returning *CallToolResult: its results are its own
	// typedOutput: the server builds the tool's results from a typed
	// handler's return value, with structuredContent exactly where an
	// outputSchema is advertised (legacyOutput in the legacy revisions).
	typedOutput bool
	// legacyOutput: legacyJSON lists an outputSchema (object root).
	legacyOutput bool
	// needsSession: the tool only serves legacy calls with a session; it is
	// not listed for, or callable by, 2026-07-28 clients.
	needsSession bool
	// required are the client capabilities every call needs
	// (ToolOptions.RequiredCapabilities).
	required *ClientCapabilities
	// taskSupport and deferTask are ToolOptions.TaskSupport and DeferTask.
	taskSupport TaskSupport
	deferTask   bool
	handler     func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)
}

var callToolResultType = reflect.TypeFor[*CallToolResult]()

// AddTool registers a typed tool, replacing any tool of the same name, and
// notifies clients listening for tool list changes. It panics if s, t or h
// is nil or the definition is invalid (a bad name, an input schema without
// an object root, an invalid x-mcp-header, a structured output policy that
// cannot be met, a jsonschema tag the dialect does not read, a field type
// with no JSON Schema): a registration error is a programming error, and
// the message names the tool, the field and the fix.
//
// Results are held to the tool's outputSchema (2026-07-28 server/tools,
// "Output Schema"): a result whose structuredContent does not conform is
// answered -32603 (the fault is the server's), its detail logged. A schema
// derived from Out alone describes what encoding/json writes for every
// value of Out, so those results are sent without a check; a supplied
// Tool.OutputSchema, or a derived one with constraints from jsonschema
// tags (minimum, enum, ...), is checked on every result unless
// ToolOptions.SkipOutputValidation is set.
// opts, at most one, say how the server treats the tool (nil or none: the
// defaults of ToolOptions):
//
//	core.AddTool(s, &core.Tool{Name: "echo"}, echo, &core.ToolOptions{StructuredOutput: core.OutputDisabled})
//
// A plain error the handler returns (neither a ToolError nor an *Error) is
// logged and answered -32603 with a generic message; set
// ServerOptions.ToolErrorResults to report it as an isError result with its
// message, as go-sdk does (see ToolFunc).
func AddTool[In, Out any](s *Server, t *Tool, h ToolFunc[In, Out], opts ...*ToolOptions) {
	checkServer("AddTool", s, t)
	st, err := newTypedTool(t, h, toolOptions("AddTool", t, opts))
	if err != nil {
		panic(err.Error())
	}
	s.addTool(st)
}

// SessionToolFunc is a typed tool handler that also receives the legacy
// session of the call (nil when ToolOptions.SessionOptional is set and the
// call has none). Its error decides the outcome as ToolFunc's does.
type SessionToolFunc[In, Out any] func(ctx context.Context, req *CallToolRequest, sess *Session, in In) (Out, error)

// AddSessionTool registers a typed tool whose handler keeps state in the
// legacy session (see Session.Get and Session.Set). Unless
// ToolOptions.SessionOptional is set, the tool needs a session: 2026-07-28 requests never have one, so
// it is not listed for or callable by modern clients, a sessionless legacy
// call gets an error, and registering it on a ModeModern server panics. With
// SessionOptional on a ModeAuto server, registration logs a warning: the tool
// behaves differently for the two eras. Prefer explicit handles in arguments
// (the stateless way) for new tools.
func AddSessionTool[In, Out any](s *Server, t *Tool, h SessionToolFunc[In, Out], opts ...*ToolOptions) {
	checkServer("AddSessionTool", s, t)
	if t == nil || h == nil {
		panic("core: AddSessionTool: nil tool or handler")
	}
	o := toolOptions("AddSessionTool", t, opts)
	if !o.SessionOptional && s.opts.Mode == ModeModern {
		panic(fmt.Sprintf("core: AddSessionTool %q: the tool needs a session, which 2026-07-28 requests never have (set SessionOptional or use ModeAuto/ModeLegacy)", t.Name))
	}
	if o.SessionOptional && s.opts.Mode == ModeAuto {
		s.log.Warn("tool with an optional session parameter: it gets a session from legacy clients only", "tool", t.Name)
	}
	needs := !o.SessionOptional
	st, err := newTypedTool(t, func(ctx context.Context, req *CallToolRequest, in In) (Out, error) {
		if needs && req.Session == nil {
			var zero Out
			return zero, InternalError("Tool %q needs a session: initialize one first", t.Name)
		}
		return h(ctx, req, req.Session, in)
	}, o)
	if err != nil {
		panic(strings.Replace(err.Error(), "AddTool", "AddSessionTool", 1))
	}
	st.needsSession = needs
	s.addTool(st)
}

// checkServer panics, naming the registration and the tool, when s is nil.
func checkServer(fn string, s *Server, t *Tool) {
	if s == nil {
		name := ""
		if t != nil {
			name = t.Name
		}
		panic(fmt.Sprintf("core: %s %q: nil *Server: build one with NewServer", fn, name))
	}
}

// RemoveTools unregisters the named tools and notifies listeners.
func (s *Server) RemoveTools(names ...string) {
	unregister(s, changeTools, names, func(r *registry) map[string]*serverTool { return r.tools })
}

func (s *Server) addTool(st *serverTool) {
	s.update(func(r *registry) { r.tools[st.tool.Name] = st })
	s.changed(changeTools, "")
}

func newTypedTool[In, Out any](t *Tool, h ToolFunc[In, Out], o ToolOptions) (*serverTool, error) {
	if t == nil || h == nil {
		return nil, errors.New("core: AddTool: nil tool or handler")
	}
	tc := *t
	fail := func(format string, args ...any) error {
		return fmt.Errorf("core: AddTool %q: %s", tc.Name, fmt.Sprintf(format, args...))
	}
	if err := checkToolName(tc.Name); err != nil {
		return nil, fail("%v", err)
	}
	// Input schema.
	var in json.RawMessage
	var err error
	if tc.InputSchema != nil {
		in, err = schema.Normalize(tc.InputSchema)
	} else {
		in, err = schema.For(reflect.TypeFor[In]())
	}
	if err != nil {
		return nil, fail("input schema: %v", err)
	}
	// Output schema, and the check of results against it.
	outType := reflect.TypeFor[Out]()
	raw := outType == callToolResultType
	var out json.RawMessage
	var check *schema.Compiled
	switch {
	case tc.OutputSchema != nil:
		if o.StructuredOutput == OutputDisabled {
			return nil, fail("an OutputSchema was supplied but structured output is disabled")
		}
		if out, err = schema.Normalize(tc.OutputSchema); err != nil {
			return nil, fail("output schema: %v", err)
		}
		if !jsonwire.IsObject(out) {
			// Tool.outputSchema is a JSON object in every revision's schema.
			return nil, fail("output schema: must be a JSON Schema object, not %s", out)
		}
		// A schema the user wrote must be valid; it is resolved now.
		if check, err = schema.Compile(out, true); err != nil {
			return nil, fail("output schema: %v", err)
		}
	case raw:
		if o.StructuredOutput == OutputRequired {
			return nil, fail("structured output is required but the handler returns a *CallToolResult and no OutputSchema was supplied")
		}
	case o.StructuredOutput == OutputDisabled:
	default:
		// An interface type (any, error, a type of the user's) has no JSON
		// Schema, and json.RawMessage derives one that describes nothing
		// ({}): their results stay unstructured unless an OutputSchema is
		// supplied. A derived schema fits what encoding/json writes (a nil
		// pointer, slice or map as null: schema.Output); one that is exact
		// needs no check of results.
		if outType.Kind() != reflect.Interface {
			var exact bool
			if out, exact, err = schema.Output(outType); err != nil {
				return nil, fail("output schema: %v", err)
			}
			if schema.AcceptsAnything(out) {
				out = nil
			} else if !exact {
				check, _ = schema.Compile(out, false) // resolved on the first result
			}
		}
		if out == nil && o.StructuredOutput == OutputRequired {
			return nil, fail("structured output is required but %v has no JSON Schema: supply Tool.OutputSchema", outType)
		}
	}
	derivedInput := tc.InputSchema == nil
	tc.InputSchema, tc.OutputSchema = in, nil
	if out != nil {
		tc.OutputSchema = out
	}
	st, err := prepareTool(&tc, !derivedInput)
	if err != nil {
		return nil, fail("%v", err)
	}
	st.raw = raw
	if !o.SkipOutputValidation {
		st.output = check
	}
	st.required = o.RequiredCapabilities
	switch o.TaskSupport {
	case "", TaskForbidden, TaskOptional, TaskRequired:
	default:
		return nil, fail("invalid TaskSupport %q", o.TaskSupport)
	}
	st.taskSupport, st.deferTask = o.TaskSupport, o.DeferTask
	st.typedOutput = !raw
	// structuredContent only where an outputSchema is advertised.
	structured := !raw && out != nil
	fast, enc := newFastBinder(reflect.TypeFor[In]()), newFastEncoder(outType)
	st.handler = func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		args, err := bindArguments[In](fast, req.Params.Arguments) // checkArguments passed
		if err != nil {
			return &CallToolResult{
				Content: []Content{&TextContent{Text: fmt.Sprintf("Invalid arguments for tool %q: %v", tc.Name, bindError(err))}},
				IsError: true,
			}, nil
		}
		res, err := h(ctx, req, args)
		if err != nil {
			return nil, err
		}
		if raw {
			r := any(res).(*CallToolResult)
			if r == nil {
				return nil, serverFault{errors.New("tool returned a nil *CallToolResult")}
			}
			return r, nil
		}
		r, err := encodeResult(enc, &res, structured)
		if err != nil {
			return nil, serverFault{err}
		}
		return r, nil
	}
	return st, nil
}

// serverFault is an error of the server's own part of a tool call (the
// handler returned nothing, or a result that does not encode), not the
// tool's: it is never reported as the tool's error
// (ServerOptions.ToolErrorResults).
type serverFault struct{ error }

func (f serverFault) Unwrap() error { return f.error }

// bindValidated decodes JSON that a JSON Schema has validated (or that
// nothing but T describes) into T, with names matched case-sensitively as
// the schema matches them.
func bindValidated[T any](raw []byte) (T, error) {
	return bindValidatedWith[T](raw, bindOptions)
}

// bindValidatedWith is bindValidated with the options o.
func bindValidatedWith[T any](raw []byte, o jsonv2.Options) (T, error) {
	var v T
	err := jsonv2.Unmarshal(raw, &v, o)
	if err == nil {
		return v, nil
	}
	// Declared after the success return: errors.As makes te escape, so it
	// is allocated where it is declared, on failures only.
	var te *jsonv1.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		// The schema accepts 42.0 as an integer; the decoder does not.
		// Retry with numbers in canonical form.
		if canon, cerr := jsonwire.Canonical(raw); cerr == nil {
			v = *new(T)
			err = jsonv2.Unmarshal(canon, &v, o)
		}
	}
	return v, err
}

// bindOptions decode handler input (tool arguments, accepted form content)
// with encoding/json's semantics in all but two points: member names match
// struct fields case-sensitively, as the JSON Schema that validated them
// does, and a duplicate name is an error. encoding/json would bind "REGION"
// to the field named "region", a value the schema never saw.
var bindOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsonv2.MatchCaseInsensitiveNames(false), jsontext.AllowDuplicateNames(false))

// bindCheckedOptions are bindOptions for input that jsonwire.Check has
// passed (tool arguments): it refuses every name an object repeats, after
// decoding escapes, so the decoder need not track names again.
var bindCheckedOptions = jsonv2.JoinOptions(bindOptions, jsontext.AllowDuplicateNames(true))

// bindError shortens the decoder's messages for the model.
func bindError(err error) string {
	var te *jsonv1.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %q: got JSON %s, want %v", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// typedResult turns a typed handler's return value into a result: the value
// as structuredContent (when enabled) and its text form.
func typedResult(v any, structured bool) (*CallToolResult, error) {
	if s, ok := v.(string); ok {
		r := &CallToolResult{Content: []Content{&TextContent{Text: s}}}
		if structured {
			r.StructuredContent = json.RawMessage(jsonwire.AppendString(nil, s))
		}
		return r, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding tool result: %w", err)
	}
	return bytesResult(b, structured), nil
}

// bytesResult is the result of a typed handler whose value encodes to b,
// which becomes the result's own: its text block (none for null) and, when
// structured, its structuredContent.
func bytesResult(b []byte, structured bool) *CallToolResult {
	// The result, its one content block and the block's slot in one
	// allocation.
	t := &struct {
		r     CallToolResult
		text  TextContent
		slots [1]Content
	}{}
	r := &t.r
	r.Content = t.slots[:0]
	if !jsonwire.IsNull(b) {
		// The text block and structuredContent are the same bytes: b is
		// the result's own, and nothing writes to it after its encoder.
		t.text.Text = unsafe.String(unsafe.SliceData(b), len(b))
		t.slots[0] = &t.text
		r.Content = t.slots[:]
	}
	if structured {
		r.StructuredContent = json.RawMessage(b)
	}
	return r
}

// checkToolName enforces the spec's name rules: 1 to 128 characters of
// A-Z, a-z, 0-9, '_', '-', '.' and '/'.
func checkToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("the name must have 1 to 128 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.', c == '/':
		default:
			return fmt.Errorf("the name may only contain A-Z, a-z, 0-9, '_', '-', '.' and '/'")
		}
	}
	return nil
}

// prepareTool checks a tool definition whose schemas are normalized JSON and
// precomputes its list entries, input validator and header parameters.
func prepareTool(t *Tool, explicitInput bool) (*serverTool, error) {
	in, _ := t.InputSchema.(json.RawMessage)
	if in == nil {
		return nil, errors.New("missing input schema")
	}
	if schema.RootType(in) != "object" {
		return nil, errors.New(`the input schema must have an object root ("type": "object")`)
	}
	v, err := schema.Compile(in, explicitInput)
	if err != nil {
		return nil, fmt.Errorf("input schema: %v", err)
	}
	hp, err := findHeaderParams(in)
	if err != nil {
		return nil, err
	}
	st := &serverTool{tool: t, input: v, headers: hp}
	if st.modernJSON, err = toolJSON(t); err != nil {
		return nil, err
	}
	// 2025-06-18 and 2025-11-25 list an outputSchema only with an object
	// root (2025-06-18 server/tools §Output Schema: "type": "object");
	// 2025-03-26 has no structured output at all.
	lt := *t
	if out, ok := t.OutputSchema.(json.RawMessage); ok && schema.RootType(out) != "object" {
		lt.OutputSchema = nil
	}
	if st.legacyJSON, err = toolJSON(&lt); err != nil {
		return nil, err
	}
	st.legacyOutput = lt.OutputSchema != nil
	st.legacy0326JSON = st.legacyJSON
	if lt.OutputSchema != nil {
		lt.OutputSchema = nil
		if st.legacy0326JSON, err = toolJSON(&lt); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// toolJSON encodes a prepared tool (schemas are compact JSON) as
// encoding/json would, reflecting only over the optional members a tool has.
func toolJSON(t *Tool) ([]byte, error) {
	in, ok1 := t.InputSchema.(json.RawMessage)
	out, ok2 := t.OutputSchema.(json.RawMessage)
	if !ok1 || (t.OutputSchema != nil && !ok2) {
		return json.Marshal(t)
	}
	b := jsonwire.AppendString(append(make([]byte, 0, 64+len(in)+len(out)+len(t.Description)), `{"name":`...), t.Name)
	if t.Title != "" {
		b = jsonwire.AppendString(append(b, `,"title":`...), t.Title)
	}
	if t.Description != "" {
		b = jsonwire.AppendString(append(b, `,"description":`...), t.Description)
	}
	for _, f := range [...]struct {
		k  string
		v  any
		ok bool
	}{{"icons", t.Icons, len(t.Icons) > 0}, {"annotations", t.Annotations, t.Annotations != nil}, {"_meta", t.Meta, len(t.Meta) > 0}} {
		if !f.ok {
			continue
		}
		j, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, `,"`...), f.k...), `":`...), j...)
	}
	b = append(append(b, `,"inputSchema":`...), in...)
	if out != nil {
		b = append(append(b, `,"outputSchema":`...), out...)
	}
	return append(b, '}'), nil
}

// headerParam is a tool argument mirrored into an Mcp-Param-{Name} header.
type headerParam struct {
	name   string   // as declared (x-mcp-header value)
	canon  string   // canonical HTTP header name
	path   []string // property path from the root
	schema string   // "string", "integer" or "boolean"
}

// findHeaderParams validates every x-mcp-header annotation of an input schema
// (internal/mcpheader, which the client shares) and returns them sorted by
// header name.
func findHeaderParams(raw json.RawMessage) ([]headerParam, error) {
	decls, err := mcpheader.Find(raw)
	if err != nil || len(decls) == 0 {
		return nil, err
	}
	out := make([]headerParam, len(decls))
	for i, d := range decls {
		out[i] = headerParam{name: d.Name, canon: canonicalHeader(HeaderParamPrefix + d.Name), path: d.Path, schema: d.Type}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].canon < out[j].canon })
	return out, nil
}
