// Command client is the conformance client: the program the official MCP
// conformance suite (@modelcontextprotocol/conformance, "client" scenarios)
// runs against its scenario servers. It drives package client.
//
//	MCP_CONFORMANCE_SCENARIO=tools_call client http://localhost:PORT/mcp
//
// The endpoint URL is the last argument. MCP_CONFORMANCE_PROTOCOL_VERSION
// picks the mode (2026-07-28: modern; a 2025 revision: legacy) and
// MCP_CONFORMANCE_CONTEXT carries the scenario's data (toolCalls,
// credentials). Authorization scenarios get their token source from auth.go.
// Diagnostics go to stderr; the exit status is 0 when the scenario's steps
// ran, 1 otherwise.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// scenarioContext is MCP_CONFORMANCE_CONTEXT.
type scenarioContext struct {
	Name      string     `json:"name"`
	ToolCalls []toolCall `json:"toolCalls"`
	// Raw is the whole context, for the authorization scenarios.
	Raw json.RawMessage `json:"-"`
}

type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME client URL")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	var sc scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			fmt.Fprintln(os.Stderr, "client: MCP_CONFORMANCE_CONTEXT:", err)
			os.Exit(2)
		}
		sc.Raw = json.RawMessage(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	err := run(ctx, scenario, version, url, &sc)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "client: "+format+"\n", args...) }

// elicit accepts every form: fields with a default are left for the client
// to fill (SEP-1034), others get a value of their type.
func elicit(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Mode == "url" {
		return &mcp.ElicitResult{Action: mcp.ActionAccept}, nil
	}
	var s struct {
		Properties map[string]struct {
			Type    string          `json:"type"`
			Default json.RawMessage `json:"default"`
			Enum    []any           `json:"enum"`
		} `json:"properties"`
	}
	json.Unmarshal(req.RequestedSchema, &s)
	content := map[string]any{}
	for name, p := range s.Properties {
		if p.Default != nil {
			continue
		}
		switch {
		case len(p.Enum) > 0:
			content[name] = p.Enum[0]
		case p.Type == "boolean":
			content[name] = true
		case p.Type == "integer" || p.Type == "number":
			content[name] = 1
		case p.Type == "string":
			content[name] = "test"
		}
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}

func run(ctx context.Context, scenario, version, url string, sc *scenarioContext) error {
	opts := &client.Options{
		Mode:                client.ModeModern,
		ClientInfo:          mcp.Implementation{Name: "mcpfn-conformance-client", Version: "1.0.0"},
		Elicitation:         elicit,
		ElicitationDefaults: true,
		Logger:              slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if strings.HasPrefix(version, "2025-") {
		opts.Mode = client.ModeLegacy
	}
	if strings.HasPrefix(scenario, "auth/") {
		ts, cleanup, err := tokenSource(ctx, scenario, url, sc)
		if err != nil {
			return err
		}
		defer cleanup()
		opts.TokenSource = ts
	}
	c, err := client.Connect(ctx, url, opts)
	if err != nil {
		return err
	}
	defer c.Close()

	switch scenario {
	case "sep-2322-client-request-state":
		return runMRTR(ctx, c)
	case "json-schema-ref-no-deref":
		// List only: the tool's network $ref must never be fetched.
		_, err := c.ListTools(ctx, nil)
		return err
	case "json-schema-2020-12-preservation":
		return runPreservation(ctx, c)
	}
	return runGeneric(ctx, c, sc)
}

// runGeneric: discover (modern), list tools, call the context's toolCalls
// or every tool, then read every resource and get every prompt the server
// offers.
func runGeneric(ctx context.Context, c *client.Conn, sc *scenarioContext) error {
	var caps *mcp.ServerCapabilities
	if c.Modern() {
		d, err := c.Discover(ctx, nil)
		if err != nil {
			return fmt.Errorf("server/discover: %w", err)
		}
		caps = &d.Capabilities
	} else if ir := c.InitializeResult(); ir != nil {
		caps = &ir.Capabilities
	}
	tools, err := c.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var errs []error
	if len(sc.ToolCalls) > 0 {
		for _, tc := range sc.ToolCalls {
			if _, err := c.CallTool(ctx, tc.Name, tc.Arguments, nil); err != nil {
				errs = append(errs, fmt.Errorf("tools/call %s: %w", tc.Name, err))
			}
		}
	} else {
		for _, t := range tools {
			schema, _ := t.InputSchema.(json.RawMessage)
			var raw json.RawMessage
			if _, err := c.CallTool(ctx, t.Name, sampleArgs(schema), &client.CallOptions{RawResult: &raw}); err != nil {
				errs = append(errs, fmt.Errorf("tools/call %s: %w", t.Name, err))
				continue
			}
			logf("tools/call %s: %s", t.Name, raw)
		}
	}
	if caps != nil && caps.Resources != nil {
		if rl, err := c.ListResources(ctx, nil, nil); err != nil {
			errs = append(errs, fmt.Errorf("resources/list: %w", err))
		} else {
			for _, r := range rl.Resources {
				if _, err := c.ReadResource(ctx, r.URI, nil); err != nil {
					errs = append(errs, fmt.Errorf("resources/read %s: %w", r.URI, err))
				}
			}
		}
	}
	if caps != nil && caps.Prompts != nil {
		if pl, err := c.ListPrompts(ctx, nil, nil); err != nil {
			errs = append(errs, fmt.Errorf("prompts/list: %w", err))
		} else {
			for _, p := range pl.Prompts {
				if _, err := c.GetPrompt(ctx, p.Name, nil, nil); err != nil {
					errs = append(errs, fmt.Errorf("prompts/get %s: %w", p.Name, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// sampleArgs builds arguments for a tool from its input schema: a value of
// each property's type (numbers 2 and 3, as the suite's examples use).
func sampleArgs(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	args := map[string]any{}
	n := 2
	for name, p := range s.Properties {
		switch p.Type {
		case "number", "integer":
			args[name] = n
			n++
		case "boolean":
			args[name] = true
		case "string":
			args[name] = "test"
		}
	}
	return args
}

// runMRTR: one input round left pending while an unrelated call runs, then
// answered; a round without requestState; a result without resultType.
func runMRTR(ctx context.Context, c *client.Conn) error {
	if _, err := c.ListTools(ctx, nil); err != nil {
		return err
	}
	var raw json.RawMessage
	r, k, err := c.CallToolOnce(ctx, "test_mrtr_echo_state", map[string]any{}, &client.CallOptions{RawResult: &raw})
	if err != nil {
		return err
	}
	if _, err := c.CallTool(ctx, "test_mrtr_unrelated", map[string]any{}, nil); err != nil {
		return err
	}
	for k != nil {
		if r, k, err = k.Answer(ctx); err != nil {
			return err
		}
	}
	if r != nil {
		logf("test_mrtr_echo_state: %s", raw)
	}
	for _, name := range []string{"test_mrtr_no_state", "test_mrtr_no_result_type"} {
		if _, err := c.CallTool(ctx, name, map[string]any{}, nil); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// runPreservation echoes the focal tool's inputSchema, as received, to the
// echo tool.
func runPreservation(ctx context.Context, c *client.Conn) error {
	tools, err := c.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name == "json_schema_2020_12_tool" {
			schema, _ := t.InputSchema.(json.RawMessage) // as received
			args := append(append([]byte(`{"schema":`), schema...), '}')
			_, err := c.CallTool(ctx, "json_schema_echo", json.RawMessage(args), nil)
			return err
		}
	}
	return errors.New("json_schema_2020_12_tool not listed")
}
