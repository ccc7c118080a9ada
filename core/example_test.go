package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/mcpfn/mcpfn/core"
)

// post sends one 2026-07-28 request to h, with the _meta and the mirrored
// headers every request carries, and returns the decoded "result" (or
// "error") member.
func post(h http.Handler, method, name string, params map[string]any, caps map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", core.EncodeHeaderValue(name))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var res map[string]any
	json.Unmarshal(rec.Body.Bytes(), &res)
	if r, ok := res["result"].(map[string]any); ok {
		return r
	}
	return res
}

func ExampleNewServer() {
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, &core.ServerOptions{
		Instructions: "Use add for sums.",
		Mode:         core.ModeModern,
	})
	res := post(srv, "server/discover", "", nil, nil)
	fmt.Println(res["resultType"], res["supportedVersions"], res["instructions"])
	fmt.Println(res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"])
	// Output:
	// complete [2026-07-28] Use add for sums.
	// map[name:calculator version:2.0.0]
}

// A plain error from a tool handler is a generic -32603 unless
// ToolErrorResults reports it, as go-sdk does, as an isError result the
// model can read.
func ExampleServerOptions_toolErrorResults() {
	lookup := func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "", errors.New("no order 42 in the last 90 days")
	}
	for _, report := range []bool{false, true} {
		srv := core.NewServer(core.Implementation{Name: "orders", Version: "1.0.0"}, &core.ServerOptions{ToolErrorResults: report})
		core.AddTool(srv, &core.Tool{Name: "lookup"}, lookup)
		res := post(srv, "tools/call", "lookup", map[string]any{"name": "lookup"}, nil)
		if e, ok := res["error"].(map[string]any); ok {
			fmt.Println("error:", e["code"], e["message"])
		} else {
			fmt.Println("result:", res["isError"], res["content"])
		}
	}
	// Output:
	// error: -32603 Internal error
	// result: true [map[text:no order 42 in the last 90 days type:text]]
}

func ExampleAddTool() {
	type AddArgs struct {
		Left  int `json:"left" jsonschema:"description=The first addend"`
		Right int `json:"right"`
	}
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
			return in.Left + in.Right, nil
		})

	list := post(srv, "tools/list", "", nil, nil)
	schema, _ := json.Marshal(list["tools"].([]any)[0].(map[string]any)["inputSchema"])
	fmt.Println(string(schema))

	res := post(srv, "tools/call", "add", map[string]any{"name": "add", "arguments": map[string]any{"left": 2, "right": 3}}, nil)
	fmt.Println(res["content"], res["structuredContent"])

	bad := post(srv, "tools/call", "add", map[string]any{"name": "add", "arguments": map[string]any{"left": "two", "right": 3}}, nil)
	fmt.Println(bad["isError"], bad["content"])
	// Output:
	// {"additionalProperties":false,"properties":{"left":{"description":"The first addend","type":"integer"},"right":{"type":"integer"}},"required":["left","right"],"type":"object"}
	// [map[text:5 type:text]] 5
	// true [map[text:Invalid arguments for tool "add": at '/left': type: two has type "string", want "integer" type:text]]
}

func ExampleInputRequired() {
	type Confirm struct {
		OK bool `json:"ok"`
	}
	confirm := core.MustForm[Confirm]()
	srv := core.NewServer(core.Implementation{Name: "repos", Version: "1.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "delete_repo", Description: "Deletes a repository."},
		func(ctx context.Context, req *core.CallToolRequest, in struct {
			Repo string `json:"repo"`
		}) (string, error) {
			c, action, err := confirm.Answer(req.Input, "confirm")
			switch {
			case err != nil:
				return "", err // the client's answer does not fit the form
			case action == "":
				// Not answered yet (the first round): ask.
				return "", core.InputRequired(core.InputRequests{"confirm": confirm.Request("Delete " + in.Repo + "?")}, "")
			case action != core.ActionAccept || !c.OK:
				// Declined, cancelled or unchecked: the call ends here;
				// asking again would show the user the same form.
				return "kept " + in.Repo, nil
			}
			return "deleted " + in.Repo, nil
		})

	caps := map[string]any{"elicitation": map[string]any{}}
	args := map[string]any{"repo": "acme/site"}
	first := post(srv, "tools/call", "delete_repo", map[string]any{"name": "delete_repo", "arguments": args}, caps)
	ask := first["inputRequests"].(map[string]any)["confirm"].(map[string]any)
	fmt.Println(first["resultType"], ask["method"], ask["params"].(map[string]any)["message"])

	// The client asks the user, then retries with the answer and the state.
	final := post(srv, "tools/call", "delete_repo", map[string]any{"name": "delete_repo", "arguments": args,
		"requestState":   first["requestState"],
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}},
	}, caps)
	fmt.Println(final["resultType"], final["content"])

	// A user who declines (or cancels) is not asked again: the call ends.
	declined := post(srv, "tools/call", "delete_repo", map[string]any{"name": "delete_repo", "arguments": args,
		"requestState":   first["requestState"],
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "decline"}},
	}, caps)
	fmt.Println(declined["resultType"], declined["content"])
	// Output:
	// input_required elicitation/create Delete acme/site?
	// complete [map[text:deleted acme/site type:text]]
	// complete [map[text:kept acme/site type:text]]
}

func ExampleNewForm() {
	type Booking struct {
		Name   string `json:"name" jsonschema:"title=Name,description=Who is the table for?"`
		Guests int    `json:"guests" jsonschema:"minimum=1,maximum=12,default=2"`
		Time   string `json:"time" jsonschema:"enum=18:00,enum=19:00,enum=20:00"`
		Notes  string `json:"notes,omitempty" jsonschema:"Anything we should know"`
	}
	form, err := core.NewForm[Booking]()
	if err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	json.Indent(&out, form.Schema(), "", "  ")
	out.WriteTo(os.Stdout)
	fmt.Println()
	// Output:
	// {
	//   "type": "object",
	//   "properties": {
	//     "name": {
	//       "description": "Who is the table for?",
	//       "title": "Name",
	//       "type": "string"
	//     },
	//     "guests": {
	//       "default": 2,
	//       "maximum": 12,
	//       "minimum": 1,
	//       "type": "integer"
	//     },
	//     "time": {
	//       "enum": [
	//         "18:00",
	//         "19:00",
	//         "20:00"
	//       ],
	//       "type": "string"
	//     },
	//     "notes": {
	//       "description": "Anything we should know",
	//       "type": "string"
	//     }
	//   },
	//   "required": [
	//     "name",
	//     "time"
	//   ]
	// }
}
