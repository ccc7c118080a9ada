package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/internal/mcptest"
)

type toolResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	ResultType        string          `json:"resultType"`
	InputRequests     map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

func call(t *testing.T, c *mcptest.Client, params map[string]any) toolResult {
	t.Helper()
	r, err := c.Call(context.Background(), "tools/call", params, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res toolResult
	if err := r.Decode(&res); err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	return res
}

// The modern round trip: input_required, then the retry with the answer.
func TestDeleteConfirmModern(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(newServer())
	defer ts.Close()
	c := &mcptest.Client{URL: ts.URL, Caps: map[string]any{"elicitation": map[string]any{}}}
	args := map[string]any{"path": "notes.txt"}
	first := call(t, c, map[string]any{"name": "delete_file", "arguments": args})
	if first.ResultType != "input_required" || first.InputRequests["confirm"].Method != "elicitation/create" || first.RequestState == "" {
		t.Fatalf("first round = %+v, want an elicitation with state", first)
	}
	// The user declines: nothing is deleted.
	declined := call(t, c, map[string]any{"name": "delete_file", "arguments": args, "requestState": first.RequestState,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "decline"}}})
	if declined.ResultType != "complete" || !strings.Contains(declined.Content[0].Text, "Kept") {
		t.Fatalf("declined: %+v", declined)
	}
	done := call(t, c, map[string]any{"name": "delete_file", "arguments": args, "requestState": first.RequestState,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}})
	if done.Content[0].Text != "Deleted notes.txt." {
		t.Fatalf("accepted: %+v", done)
	}
	again := call(t, c, map[string]any{"name": "delete_file", "arguments": args})
	if !again.IsError {
		t.Fatalf("deleting twice should fail: %+v", again)
	}
	// A client without elicitation cannot be asked: -32021.
	c.Caps = map[string]any{}
	r, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "delete_file", "arguments": map[string]any{"path": "draft.md"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 400 || r.Error == nil || r.Error.Code != -32021 {
		t.Fatalf("without elicitation: HTTP %d, %+v", r.Status, r.Error)
	}
}

// The legacy round trip: the same tool asks with elicitation/create on the
// call's stream, and the form comes from the Booking struct.
func TestBookTableLegacy(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(newServer())
	defer ts.Close()
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(context.Background(), "2025-11-25", map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var asked json.RawMessage
	r, err := c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "book_table", "arguments": map[string]any{"restaurant": "Chez Go"}},
		func(method string, params json.RawMessage) (any, error) {
			if method != "elicitation/create" {
				t.Errorf("server asked %s", method)
			}
			asked = params
			return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "time": "19:00", "guests": 4}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(asked, &p); err != nil {
		t.Fatal(err)
	}
	if p.Message != "Book a table at Chez Go" || strings.Join(p.RequestedSchema.Required, ",") != "name,time" || len(p.RequestedSchema.Properties) != 4 {
		t.Fatalf("elicitation params: %s", asked)
	}
	var res toolResult
	if err := r.Decode(&res); err != nil {
		t.Fatal(err)
	}
	// 2025-11-25 results of typed tools with an object result carry
	// structuredContent beside the text form.
	if res.IsError || !strings.Contains(res.Content[0].Text, `"name":"Ada"`) || !strings.Contains(string(res.StructuredContent), `"name":"Ada"`) {
		t.Fatalf("legacy result: %+v (want the text form and structuredContent)", res)
	}
}

// A user who declines or cancels is asked once: the call ends after one
// round, in both eras, for both tools, and nothing is deleted.
func TestDeclineEndsTheCall(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(newServer())
	defer ts.Close()
	tools := map[string]struct {
		args map[string]any
		want string // in the final text
	}{
		"delete_file": {map[string]any{"path": "notes.txt"}, "Kept notes.txt"},
		"book_table":  {map[string]any{"restaurant": "Chez Go"}, "did not book"},
	}
	for tool, tc := range tools {
		for _, action := range []string{"decline", "cancel"} {
			c := &mcptest.Client{URL: ts.URL, Caps: map[string]any{"elicitation": map[string]any{}}}
			first := call(t, c, map[string]any{"name": tool, "arguments": tc.args})
			if first.ResultType != "input_required" {
				t.Fatalf("%s: first round %+v", tool, first)
			}
			final := call(t, c, map[string]any{"name": tool, "arguments": tc.args, "requestState": first.RequestState,
				"inputResponses": map[string]any{first.key(): map[string]any{"action": action}}})
			if final.ResultType != "complete" || len(final.Content) != 1 || !strings.Contains(final.Content[0].Text, tc.want) {
				t.Errorf("%s, modern %s: %+v, want the call to end (%q)", tool, action, final, tc.want)
			}

			lc := &mcptest.Client{URL: ts.URL}
			if _, err := lc.Initialize(context.Background(), "2025-11-25", map[string]any{"elicitation": map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			r, err := lc.LegacyCall(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": tc.args},
				func(string, json.RawMessage) (any, error) { return map[string]any{"action": action}, nil })
			if err != nil {
				t.Fatal(err)
			}
			var res toolResult
			if len(r.ServerRequests) != 1 || r.Decode(&res) != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, tc.want) {
				t.Errorf("%s, legacy %s: %d elicitation requests, then %+v (%v), want one request and the call to end", tool, action, len(r.ServerRequests), res, r.Error)
			}
		}
	}
	// The file is still there.
	c := &mcptest.Client{URL: ts.URL, Caps: map[string]any{"elicitation": map[string]any{}}}
	if first := call(t, c, map[string]any{"name": "delete_file", "arguments": map[string]any{"path": "notes.txt"}}); first.ResultType != "input_required" {
		t.Errorf("notes.txt is gone after declines: %+v", first)
	}
}

// key returns the only input request key of an input_required result.
func (r toolResult) key() string {
	for k := range r.InputRequests {
		return k
	}
	return ""
}
