package core_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// resp is a parsed HTTP response.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
	SSE    bool
	// Msgs holds the JSON-RPC messages: one for a JSON body, every data
	// event for an SSE body.
	Msgs []json.RawMessage
}

func parseResp(t testing.TB, status int, h http.Header, body []byte) *resp {
	t.Helper()
	r := &resp{Status: status, Header: h.Clone(), Body: body}
	ct := h.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		r.SSE = true
		evs, err := parseSSE(body)
		if err != nil {
			t.Fatalf("bad SSE body: %v\n%s", err, body)
		}
		r.Msgs = evs
	case strings.HasPrefix(ct, "application/json"):
		if !json.Valid(body) {
			t.Fatalf("response body is not valid JSON: %q", body)
		}
		r.Msgs = []json.RawMessage{body}
	}
	return r
}

// parseSSE returns the data of each event; every data must be valid JSON.
func parseSSE(body []byte) ([]json.RawMessage, error) {
	var out []json.RawMessage
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	flush := func() error {
		if len(data) == 0 {
			return nil
		}
		d := strings.Join(data, "\n")
		data = nil
		if !json.Valid([]byte(d)) {
			return fmt.Errorf("event data is not JSON: %q", d)
		}
		out = append(out, json.RawMessage(d))
		return nil
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if err := flush(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, "id:"), strings.HasPrefix(line, "event:"), strings.HasPrefix(line, "retry:"):
		default:
			return nil, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, sc.Err()
}

// final returns the last message, decoded.
func (r *resp) final(t testing.TB) map[string]any {
	t.Helper()
	if len(r.Msgs) == 0 {
		t.Fatalf("HTTP %d: no JSON-RPC message in the response: %q", r.Status, r.Body)
	}
	m, ok := decode(t, r.Msgs[len(r.Msgs)-1]).(map[string]any)
	if !ok {
		t.Fatalf("final message is not an object: %s", r.Msgs[len(r.Msgs)-1])
	}
	return m
}

// finalRaw returns the last message as raw JSON.
func (r *resp) finalRaw(t testing.TB) json.RawMessage {
	t.Helper()
	if len(r.Msgs) == 0 {
		t.Fatalf("HTTP %d: no JSON-RPC message in the response: %q", r.Status, r.Body)
	}
	return r.Msgs[len(r.Msgs)-1]
}

// notes returns the messages before the final one, decoded.
func (r *resp) notes(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i := 0; i+1 < len(r.Msgs); i++ {
		out = append(out, decode(t, r.Msgs[i]).(map[string]any))
	}
	return out
}

// result returns the result object of a successful response (HTTP 200).
func (r *resp) result(t testing.TB) map[string]any {
	t.Helper()
	m := r.final(t)
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d, want 200: %s", r.Status, r.Body)
	}
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result object: %s", r.Body)
	}
	return res
}

// rpcError returns the error object of the final message.
func (r *resp) rpcError(t testing.TB) map[string]any {
	t.Helper()
	m := r.final(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("HTTP %d: no error object: %s", r.Status, r.Body)
	}
	return e
}

// wantError checks the HTTP status and the JSON-RPC error code.
func (r *resp) wantError(t testing.TB, status, code int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Errorf("HTTP status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	e := r.rpcError(t)
	if got := num(t, e["code"]); got != int64(code) {
		t.Errorf("error code = %d, want %d; body %s", got, code, r.Body)
	}
	if s, _ := e["message"].(string); s == "" {
		t.Errorf("error message is empty: %s", r.Body)
	}
	return e
}

// wantID checks the id of the final message: rawID is its JSON, or "" for
// absent (never null).
func (r *resp) wantID(t testing.TB, rawID string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.finalRaw(t), &m); err != nil {
		t.Fatal(err)
	}
	got, present := m["id"]
	switch {
	case rawID == "" && present:
		t.Errorf(`"id" is %s, want it absent; body %s`, got, r.Body)
	case rawID != "" && !present:
		t.Errorf(`"id" is absent, want %s; body %s`, rawID, r.Body)
	case rawID != "" && string(got) != rawID:
		t.Errorf(`"id" = %s, want %s`, got, rawID)
	}
}

// resultRaw returns the raw result member of the final message.
func (r *resp) resultRaw(t testing.TB) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.finalRaw(t), &m); err != nil {
		t.Fatal(err)
	}
	res, ok := m["result"]
	if !ok {
		t.Fatalf("no result: %s", r.Body)
	}
	return res
}
