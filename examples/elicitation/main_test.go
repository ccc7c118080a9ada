package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	wire "github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/mcptest"
)

// user answers the server's questions (client.Options.Elicitation) with
// answer, and keeps them.
type user struct {
	mu     sync.Mutex
	answer *mcp.ElicitResult
	asked  []*client.ElicitRequest
}

func (u *user) elicit(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked = append(u.asked, req)
	return u.answer, nil
}

// says sets the next answers and forgets the questions asked so far.
func (u *user) says(action string, content map[string]any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.answer, u.asked = &mcp.ElicitResult{Action: action, Content: content}, nil
}

func (u *user) questions() []*client.ElicitRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.asked
}

// The modern round trip: input_required, then the retry with the answer.
func TestDeleteConfirmModern(t *testing.T) {
	t.Parallel()
	srv := newServer()
	u := &user{}
	rec := &mcptest.Recorder{}
	c := mcptest.Connect(t, srv, &mcptest.Options{Mode: client.ModeModern, Record: rec, Client: &client.Options{Elicitation: u.elicit}})
	args := map[string]any{"path": "notes.txt"}
	ctx := t.Context()

	// The user declines: nothing is deleted.
	u.says(mcp.ActionDecline, nil)
	declined, err := c.CallTool(ctx, "delete_file", args, nil)
	if err != nil || !strings.Contains(wire.Text(declined), "Kept") || len(u.questions()) != 1 {
		t.Fatalf("declined: %v %+v after %d questions", err, declined, len(u.questions()))
	}
	// On the wire, the first round was input_required: an elicitation, and
	// state for the retry.
	var first struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	}
	xs := rec.Exchanges()
	var calls []mcptest.Exchange
	for _, x := range xs {
		if x.Header.Get("Mcp-Method") == "tools/call" {
			calls = append(calls, x)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("%d tools/call requests, want the first round and the retry", len(calls))
	}
	ms, err := calls[0].ResponseMessages()
	if err != nil || len(ms) != 1 {
		t.Fatalf("first round: %v %s", err, calls[0].ResponseBody)
	}
	var resp struct{ Result json.RawMessage }
	if json.Unmarshal(ms[0], &resp) != nil || json.Unmarshal(resp.Result, &first) != nil ||
		first.ResultType != "input_required" || first.InputRequests["confirm"].Method != "elicitation/create" || first.RequestState == "" {
		t.Fatalf("first round = %s, want an elicitation with state", ms[0])
	}
	if !strings.Contains(string(calls[1].Body), `"requestState":"`+first.RequestState+`"`) {
		t.Fatalf("the retry does not carry the state: %s", calls[1].Body)
	}

	u.says(mcp.ActionAccept, map[string]any{"ok": true})
	done, err := c.CallTool(ctx, "delete_file", args, nil)
	if err != nil || wire.Text(done) != "Deleted notes.txt." {
		t.Fatalf("accepted: %v %+v", err, done)
	}
	u.says(mcp.ActionAccept, map[string]any{"ok": true})
	again, err := c.CallTool(ctx, "delete_file", args, nil)
	if err != nil || !again.IsError || len(u.questions()) != 0 {
		t.Fatalf("deleting twice should fail without asking: %v %+v, %d questions", err, again, len(u.questions()))
	}

	// A client without elicitation cannot be asked: -32021, HTTP 400.
	plain := mcptest.Connect(t, srv, &mcptest.Options{Mode: client.ModeModern})
	_, err = plain.CallTool(ctx, "delete_file", map[string]any{"path": "draft.md"}, nil)
	var me *mcp.Error
	if !errors.As(err, &me) || me.Code != -32021 || me.ResponseStatus() != 400 {
		t.Fatalf("without elicitation: %v", err)
	}
}

// The legacy round trip: the same tool asks with elicitation/create on the
// call's stream, and the form comes from the Booking struct.
func TestBookTableLegacy(t *testing.T) {
	t.Parallel()
	u := &user{}
	c := mcptest.Connect(t, newServer(), &mcptest.Options{Mode: client.ModeLegacy, Client: &client.Options{Elicitation: u.elicit}})
	if c.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("version %s", c.ProtocolVersion())
	}
	u.says(mcp.ActionAccept, map[string]any{"name": "Ada", "time": "19:00", "guests": 4})
	res, err := c.CallTool(t.Context(), "book_table", map[string]any{"restaurant": "Chez Go"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	asked := u.questions()
	if len(asked) != 1 {
		t.Fatalf("%d questions, want 1", len(asked))
	}
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(asked[0].RequestedSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if asked[0].Message != "Book a table at Chez Go" || strings.Join(schema.Required, ",") != "name,time" || len(schema.Properties) != 4 {
		t.Fatalf("elicitation: %q %s", asked[0].Message, asked[0].RequestedSchema)
	}
	// 2025-11-25 results of typed tools with an object result carry
	// structuredContent beside the text form.
	sc, _ := res.StructuredContent.(json.RawMessage)
	if res.IsError || !strings.Contains(wire.Text(res), `"name":"Ada"`) || !strings.Contains(string(sc), `"name":"Ada"`) {
		t.Fatalf("legacy result: %+v (want the text form and structuredContent)", res)
	}
}

// A user who declines or cancels is asked once: the call ends after one
// round, in both eras, for both tools, and nothing is deleted.
func TestDeclineEndsTheCall(t *testing.T) {
	t.Parallel()
	srv := newServer()
	tools := map[string]struct {
		args map[string]any
		want string // in the final text
	}{
		"delete_file": {map[string]any{"path": "notes.txt"}, "Kept notes.txt"},
		"book_table":  {map[string]any{"restaurant": "Chez Go"}, "did not book"},
	}
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		u := &user{}
		c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode, Client: &client.Options{Elicitation: u.elicit}})
		for tool, tc := range tools {
			for _, action := range []string{mcp.ActionDecline, mcp.ActionCancel} {
				u.says(action, nil)
				res, err := c.CallTool(t.Context(), tool, tc.args, nil)
				if err != nil || len(res.Content) != 1 || !strings.Contains(wire.Text(res), tc.want) || len(u.questions()) != 1 {
					t.Errorf("%s, %v %s: %v %+v after %d questions, want one question and the call to end (%q)",
						tool, mode, action, err, res, len(u.questions()), tc.want)
				}
			}
		}
	}
	// The file is still there: deleting it asks again.
	u := &user{}
	c := mcptest.Connect(t, srv, &mcptest.Options{Mode: client.ModeModern, Client: &client.Options{Elicitation: u.elicit}})
	u.says(mcp.ActionDecline, nil)
	if res, err := c.CallTool(t.Context(), "delete_file", map[string]any{"path": "notes.txt"}, nil); err != nil || len(u.questions()) != 1 {
		t.Errorf("notes.txt is gone after declines: %v %+v", err, res)
	}
}
