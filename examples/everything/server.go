package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// The conformance fixture: the tools, resources and prompts the official MCP
// conformance suite calls (CONFORMANCE_FIXTURE.md), for both protocol eras
// from one server. Tools that need the client's input are written once in
// the multi round-trip style; legacy clients are served by the framework's
// bridge to server-to-client requests.

const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

var png, _ = base64.StdEncoding.DecodeString(pngBase64)

// silentWAV is a valid 8 kHz mono 16-bit WAV holding 8 samples of silence.
var silentWAV = func() []byte {
	const samples = 8
	b := make([]byte, 44+2*samples)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*samples))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], 8000)
	binary.LittleEndian.PutUint32(b[28:], 16000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], 2*samples)
	return b
}()

type none struct{}

func text(s string) *core.CallToolResult {
	return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: s}}}
}

// newServer builds the fixture.
func newServer(opts *core.ServerOptions) *core.Server {
	if opts == nil {
		opts = &core.ServerOptions{}
	}
	opts.Instructions = "Conformance fixture of the mcpfn framework."
	opts.CompletionHandler = func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
		total := 0
		return &core.CompleteResult{Completion: core.Completion{Values: []string{}, Total: &total}}, nil
	}
	s := core.NewServer(core.Implementation{Name: "mcpfn-everything", Version: "1.0.0"}, opts)
	addContentTools(s)
	addClientInputTools(s)
	addModernDiagnosticTools(s)
	addTaskTools(s)
	if opts.Mode != core.ModeModern {
		addSessionTools(s)
	}
	addResources(s)
	addPrompts(s)
	return s
}

func addContentTools(s *core.Server) {
	core.AddTool(s, &core.Tool{Name: "test_simple_text", Description: "Returns a simple text response."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return text("This is a simple text response for testing."), nil
		})
	core.AddTool(s, &core.Tool{Name: "test_image_content", Description: "Returns a 1x1 PNG image."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.ImageContent{Data: png, MIMEType: "image/png"}}}, nil
		})
	core.AddTool(s, &core.Tool{Name: "test_audio_content", Description: "Returns a short silent WAV."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.AudioContent{Data: silentWAV, MIMEType: "audio/wav"}}}, nil
		})
	core.AddTool(s, &core.Tool{Name: "test_embedded_resource", Description: "Returns an embedded text resource."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.EmbeddedResource{Resource: core.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}, nil
		})
	core.AddTool(s, &core.Tool{Name: "test_multiple_content_types", Description: "Returns text, an image and a resource."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{
				&core.TextContent{Text: "Multiple content types test:"},
				&core.ImageContent{Data: png, MIMEType: "image/png"},
				&core.EmbeddedResource{Resource: core.ResourceContents{URI: "test://mixed-content-resource",
					MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
			}}, nil
		})
	core.AddTool(s, &core.Tool{Name: "test_error_handling", Description: "Always fails with a tool error."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return nil, core.ToolErrorf("This tool intentionally returns an error for testing")
		})
	core.AddTool(s, &core.Tool{Name: "test_tool_with_progress", Description: "Reports progress 0, 50, 100 of 100."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					sleep(ctx, 50*time.Millisecond)
				}
				if err := req.NotifyProgress(ctx, p, 100, fmt.Sprintf("step %d", i+1)); err != nil {
					return nil, err
				}
			}
			tok := "no progress token"
			var m struct {
				Token json.RawMessage `json:"progressToken"`
			}
			if json.Unmarshal(req.Meta, &m) == nil && m.Token != nil {
				tok = strings.Trim(string(m.Token), `"`)
			}
			return text(tok), nil
		})
	core.AddTool(s, &core.Tool{Name: "test_tool_with_logging", Description: "Logs three info messages."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					sleep(ctx, 50*time.Millisecond)
				}
				if err := req.Log(ctx, core.LevelInfo, "everything", m); err != nil {
					return nil, err
				}
			}
			return text("Logging completed"), nil
		})
	core.AddTool(s, &core.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "A tool whose input schema uses JSON Schema 2020-12 keywords.",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"$defs":{"address":{"$anchor":"addr","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
			`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"email":{"type":"string","format":"email"},` +
			`"phone":{"type":"string","pattern":"^\\+?[0-9]+$"},"kind":{"type":"string"}},` +
			`"allOf":[{"anyOf":[{"required":["email"]},{"required":["phone"]}]}],` +
			`"if":{"properties":{"kind":{"const":"business"}}},"then":{"required":["address"]},"else":{"required":["name"]},` +
			`"additionalProperties":false}`),
	}, func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (*core.CallToolResult, error) {
		b, _ := json.Marshal(in)
		return text("Received: " + string(b)), nil
	})
	type headerArgs struct {
		Region string `json:"region" jsonschema:"description=Deployment region" jsonschema_extras:"x-mcp-header=Region"`
		Level  int    `json:"level,omitempty" jsonschema_extras:"x-mcp-header=Level"`
	}
	core.AddTool(s, &core.Tool{Name: "test_x_mcp_header", Description: "Mirrors region and level into Mcp-Param headers."},
		func(ctx context.Context, req *core.CallToolRequest, in headerArgs) (string, error) {
			return fmt.Sprintf("region=%s level=%d", in.Region, in.Level), nil
		})
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Tools that ask the client for input, written once for both eras.
func addClientInputTools(s *core.Server) {
	type promptArgs struct {
		Prompt string `json:"prompt" jsonschema:"description=The prompt to send to the client's model"`
	}
	core.AddTool(s, &core.Tool{Name: "test_sampling", Description: "Asks the client's model to complete a prompt."},
		func(ctx context.Context, req *core.CallToolRequest, in promptArgs) (*core.CallToolResult, error) {
			if r, ok := req.Input.Sampling("llm"); ok {
				return text("LLM response: " + r.Text()), nil
			}
			return nil, core.InputRequired(core.InputRequests{"llm": core.SampleText(in.Prompt, 100)}, "")
		})
	type messageArgs struct {
		Message string `json:"message" jsonschema:"description=The message to show the user"`
	}
	type user struct {
		Username string `json:"username"`
		Email    string `json:"email"`
	}
	core.AddTool(s, &core.Tool{Name: "test_elicitation", Description: "Asks the user for a username and email."},
		func(ctx context.Context, req *core.CallToolRequest, in messageArgs) (*core.CallToolResult, error) {
			if r, ok := req.Input.Elicitation("user"); ok {
				b, _ := json.Marshal(r.Content)
				return text(fmt.Sprintf("User response: action=%s, content=%s", r.Action, b)), nil
			}
			return nil, core.InputRequired(core.InputRequests{"user": core.ElicitForm(in.Message, json.RawMessage(
				`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},`+
					`"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`))}, "")
		})
	core.AddTool(s, &core.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Asks for a form whose fields have defaults."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			if r, ok := req.Input.Elicitation("defaults"); ok {
				b, _ := json.Marshal(r.Content)
				return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", r.Action, b)), nil
			}
			return nil, core.InputRequired(core.InputRequests{"defaults": core.ElicitForm("Please review and update the form fields with defaults",
				json.RawMessage(`{"type":"object","properties":{`+
					`"name":{"type":"string","description":"User name","default":"John Doe"},`+
					`"age":{"type":"integer","description":"User age","default":30},`+
					`"score":{"type":"number","description":"User score","default":95.5},`+
					`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},`+
					`"verified":{"type":"boolean","description":"Verification status","default":true}}}`))}, "")
		})
	core.AddTool(s, &core.Tool{Name: "test_elicitation_sep1330_enums", Description: "Asks for a form with every enum shape."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			if r, ok := req.Input.Elicitation("enums"); ok {
				b, _ := json.Marshal(r.Content)
				return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", r.Action, b)), nil
			}
			return nil, core.InputRequired(core.InputRequests{"enums": core.ElicitForm("Please select options from the enum fields",
				json.RawMessage(`{"type":"object","properties":{`+
					`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},`+
					`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},`+
					`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},`+
					`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},`+
					`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`))}, "")
		})

	type name struct {
		Name string `json:"name"`
	}
	nameForm := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`)
	confirmForm := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","description":"Confirm"}},"required":["ok"]}`)
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_elicitation", Description: "MRTR: asks for the user's name."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			n, action, err := core.Answer[name](req.Input, "user_name")
			switch {
			case err != nil:
				return nil, err
			case action == core.ActionAccept && n.Name != "":
				return text("Hello, " + n.Name + "!"), nil
			case action == core.ActionDecline || action == core.ActionCancel:
				return text("No name given (" + action + ")."), nil // the call ends: no second ask
			}
			return nil, core.InputRequired(core.InputRequests{"user_name": core.ElicitForm("What is your name?", nameForm)}, "")
		})
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_sampling", Description: "MRTR: asks the client's model a question."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			if r, ok := req.Input.Sampling("capital_question"); ok {
				return text("Sampling response: " + r.Text()), nil
			}
			return nil, core.InputRequired(core.InputRequests{"capital_question": core.SampleText("What is the capital of France?", 100)}, "")
		})
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_list_roots", Description: "MRTR: asks for the client's roots."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			if r, ok := req.Input.Roots("client_roots"); ok {
				var uris []string
				for _, root := range r.Roots {
					uris = append(uris, root.URI)
				}
				return text("Roots: " + strings.Join(uris, ", ")), nil
			}
			return nil, core.InputRequired(core.InputRequests{"client_roots": core.ListRoots()}, "")
		})
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_request_state", Description: "MRTR: asks for confirmation and carries state."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			if req.Input.State() == "awaiting-confirmation" {
				if _, ok := req.Input.Elicitation("confirm"); ok {
					return text("state-ok: confirmation received"), nil
				}
			}
			return nil, core.InputRequired(core.InputRequests{"confirm": core.ElicitForm("Please confirm", confirmForm)}, "awaiting-confirmation")
		})
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_multiple_inputs", Description: "MRTR: asks for three inputs at once."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			n, okName := core.Accepted[name](req.Input, "user_name")
			g, okGreet := req.Input.Sampling("greeting")
			r, okRoots := req.Input.Roots("client_roots")
			if okName && okGreet && okRoots {
				return text(fmt.Sprintf("name=%s greeting=%s roots=%d", n.Name, g.Text(), len(r.Roots))), nil
			}
			return nil, core.InputRequired(core.InputRequests{
				"user_name":    core.ElicitForm("What is your name?", nameForm),
				"greeting":     core.SampleText("Write a short greeting.", 100),
				"client_roots": core.ListRoots(),
			}, "multiple-inputs")
		})
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_multi_round", Description: "MRTR: asks in two rounds."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			state := req.Input.State()
			if strings.HasPrefix(state, "round2:") {
				c, action, err := core.Answer[struct {
					Color string `json:"color"`
				}](req.Input, "step2")
				switch {
				case err != nil:
					return nil, err
				case action == core.ActionAccept:
					return text(fmt.Sprintf("Hello %s, your favorite color is %s.", strings.TrimPrefix(state, "round2:"), c.Color)), nil
				case action != "":
					return text("No color given (" + action + ")."), nil
				}
				return nil, core.InputRequired(core.InputRequests{"step2": colorRequest()}, state)
			}
			if state == "round1" {
				n, action, err := core.Answer[name](req.Input, "step1")
				switch {
				case err != nil:
					return nil, err
				case action == core.ActionAccept:
					return nil, core.InputRequired(core.InputRequests{"step2": colorRequest()}, "round2:"+n.Name)
				case action != "":
					return text("No name given (" + action + ")."), nil
				}
			}
			return nil, core.InputRequired(core.InputRequests{"step1": core.ElicitForm("Step 1: What is your name?", nameForm)}, "round1")
		})
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_tampered_state", Description: "MRTR: carries integrity-protected state."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			if req.Input.State() == "protected" {
				if _, ok := req.Input.Elicitation("confirm"); ok {
					return text("state verified"), nil
				}
			}
			return nil, core.InputRequired(core.InputRequests{"confirm": core.ElicitForm("Please confirm", confirmForm)}, "protected")
		})
	core.AddTool(s, &core.Tool{Name: "test_input_required_result_capabilities", Description: "MRTR: asks only for what the client declared."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			caps := req.ClientCapabilities
			if req.Input.Len() > 0 {
				return text("input received"), nil
			}
			switch {
			case caps.SupportsFormElicitation():
				return nil, core.InputRequired(core.InputRequests{"user_name": core.ElicitForm("What is your name?", nameForm)}, "")
			case caps.SupportsSampling():
				return nil, core.InputRequired(core.InputRequests{"capital_question": core.SampleText("What is the capital of France?", 100)}, "")
			case caps.SupportsRoots():
				return nil, core.InputRequired(core.InputRequests{"client_roots": core.ListRoots()}, "")
			}
			return nil, core.MissingCapabilityError(&core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}})
		})
}

func colorRequest() *core.InputRequest {
	return core.ElicitForm("Step 2: What is your favorite color?", json.RawMessage(
		`{"type":"object","properties":{"color":{"type":"string","description":"Your favorite color"}},"required":["color"]}`))
}

var dynamicCount atomic.Int64

type counterArgs struct {
	Add int `json:"add" jsonschema:"description=How much to add"`
}

// addSessionTools registers a legacy-session counter, used by the
// multi-replica tests to show that no session update is lost.
func addSessionTools(s *core.Server) {
	core.AddSessionTool(s, &core.Tool{Name: "test_session_counter", Description: "Adds to a counter kept in the legacy session and returns it."},
		func(ctx context.Context, req *core.CallToolRequest, sess *core.Session, in counterArgs) (int, error) {
			return core.UpdateSessionValue(ctx, sess, "counter", func(n int) (int, error) { return n + in.Add, nil })
		})
}

func addModernDiagnosticTools(s *core.Server) {
	core.AddTool(s, &core.Tool{Name: "test_missing_capability", Description: "Needs the client's sampling capability."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return text("sampling is available"), nil
		}, &core.ToolOptions{RequiredCapabilities: &core.ClientCapabilities{Sampling: &core.SamplingCapabilities{}}})
	core.AddTool(s, &core.Tool{Name: "test_streaming_elicitation", Description: "Answers on a response stream without server requests."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return text("streaming elicitation completed"), nil
		})
	core.AddTool(s, &core.Tool{Name: "test_logging_tool", Description: "Tries to log; the log is dropped unless the request asked for it."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			req.Log(ctx, core.LevelInfo, "everything", "a log message")
			return text("logging tool completed"), nil
		})
	core.AddTool(s, &core.Tool{Name: "test_trigger_tool_change", Description: "Changes the tool list."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			n := dynamicCount.Add(1)
			core.AddTool(s, &core.Tool{Name: "test_dynamic_tool", Description: fmt.Sprintf("A tool added at run time (version %d).", n)},
				func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) { return "dynamic", nil })
			return text("tool list changed"), nil
		})
	core.AddTool(s, &core.Tool{Name: "test_trigger_prompt_change", Description: "Changes the prompt list."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			n := dynamicCount.Add(1)
			s.AddPrompt(&core.Prompt{Name: "test_dynamic_prompt", Description: fmt.Sprintf("A prompt added at run time (version %d).", n)},
				func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
					return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: core.RoleUser, Content: &core.TextContent{Text: "dynamic"}}}}, nil
				})
			return text("prompt list changed"), nil
		})
}

const watchedURI = "test://watched-resource"

func addResources(s *core.Server) {
	s.AddResource(&core.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "text/plain",
				Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&core.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource.", MIMEType: "image/png"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "image/png", Blob: png}}}, nil
		})
	s.AddResource(&core.Resource{URI: watchedURI, Name: "watched-resource", Description: "A resource that changes every 3 seconds.", MIMEType: "text/plain"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "text/plain",
				Text: "Watched resource content at " + time.Now().UTC().Format(time.RFC3339)}}}, nil
		})
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template",
		Description: "A resource template with an id.", MIMEType: "application/json"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			id := req.Vars["id"]
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
}

// watchResource publishes an update of the watched resource every period
// until ctx ends; a period of 0 publishes none.
func watchResource(ctx context.Context, s *core.Server, period time.Duration) {
	if period <= 0 {
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.NotifyResourceUpdated(watchedURI)
		}
	}
}

func addPrompts(s *core.Server) {
	s.AddPrompt(&core.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments."},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: core.RoleUser,
				Content: &core.TextContent{Text: "This is a simple prompt for testing."}}}}, nil
		})
	s.AddPrompt(&core.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments.",
		Arguments: []core.PromptArgument{{Name: "arg1", Description: "First argument", Required: true}, {Name: "arg2", Description: "Second argument", Required: true}}},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: core.RoleUser, Content: &core.TextContent{
				Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])}}}}, nil
		})
	s.AddPrompt(&core.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource.",
		Arguments: []core.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{
				{Role: core.RoleUser, Content: &core.EmbeddedResource{Resource: core.ResourceContents{URI: req.Arguments["resourceUri"],
					MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
				{Role: core.RoleUser, Content: &core.TextContent{Text: "Please process the embedded resource above."}},
			}}, nil
		})
	s.AddPrompt(&core.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{
				{Role: core.RoleUser, Content: &core.ImageContent{Data: png, MIMEType: "image/png"}},
				{Role: core.RoleUser, Content: &core.TextContent{Text: "Please analyze the image above."}},
			}}, nil
		})
	s.AddPrompt(&core.Prompt{Name: "test_input_required_result_prompt", Description: "MRTR: a prompt that asks for context."},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			c, ok := core.Accepted[struct {
				Context string `json:"context"`
			}](req.Input, "user_context")
			if !ok || c.Context == "" {
				return nil, core.InputRequired(core.InputRequests{"user_context": core.ElicitForm("What context should the prompt use?",
					json.RawMessage(`{"type":"object","properties":{"context":{"type":"string","description":"Context"}},"required":["context"]}`))}, "")
			}
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: core.RoleUser, Content: &core.TextContent{Text: "Context: " + c.Context}}}}, nil
		})
}
