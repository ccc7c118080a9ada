package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestContentRoundTrip: every block type marshals to its type member and
// decodes back to the same value.
func TestContentRoundTrip(t *testing.T) {
	t.Parallel()
	prio := 0.5
	size := int64(7)
	ann := &Annotations{Audience: []Role{RoleUser}, Priority: &prio, LastModified: "2026-01-02T03:04:05Z"}
	for typ, c := range map[string]Content{
		"text":          &TextContent{Text: "héllo <&> \"q\"\n"},
		"text+meta":     &TextContent{Text: "x", Annotations: ann, Meta: Meta{"k": "v"}},
		"image":         &ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png", Annotations: ann},
		"audio":         &AudioContent{Data: []byte{}, MIMEType: "audio/wav"},
		"resource_link": &ResourceLink{URI: "file:///a", Name: "a", Title: "A", Description: "d", MIMEType: "text/plain", Size: &size, Icons: []Icon{{Src: "https://i/x.png", Sizes: []string{"48x48"}}}, Annotations: ann, Meta: Meta{"m": true}},
		"resource":      &EmbeddedResource{Resource: ResourceContents{URI: "file:///b", MIMEType: "text/plain", Text: "body"}, Annotations: ann},
		"resource/blob": &EmbeddedResource{Resource: ResourceContents{URI: "file:///c", Blob: []byte{}}},
	} {
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		want := strings.SplitN(typ, "+", 2)[0]
		want = strings.SplitN(want, "/", 2)[0]
		var head struct{ Type string }
		if json.Unmarshal(b, &head); head.Type != want {
			t.Errorf("%s: type %q in %s", typ, head.Type, b)
		}
		back, err := UnmarshalContent(b)
		if err != nil {
			t.Fatalf("%s: %s: %v", typ, b, err)
		}
		if !reflect.DeepEqual(normalize(t, back), normalize(t, c)) {
			t.Errorf("%s: round trip %s gave %#v", typ, b, back)
		}
	}
}

// normalize compares content by its JSON (Meta values decode as JSON
// types).
func normalize(t *testing.T, c Content) string {
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTextContentFastPath: the hot path writes what encoding/json writes.
func TestTextContentFastPath(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "<&>", "\u2028\u2029", "\x00\x1f\x7f", "\xff", `"\`, "日本"} {
		got, _ := (&TextContent{Text: s}).MarshalJSON()
		want, _ := json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", s})
		if !bytes.Equal(got, want) {
			t.Errorf("%q: %s, encoding/json %s", s, got, want)
		}
	}
}

// TestToolKeepsSchemas: a decoded tool holds its schemas byte for byte
// (key order, number spelling, unknown keywords), and encodes them again
// unchanged.
func TestToolKeepsSchemas(t *testing.T) {
	t.Parallel()
	in := `{"z":1,"type":"object","properties":{"n":{"type":"number","maximum":1e400,"minimum":0.10}},"x-unknown":{"$ref":"#/a"}}`
	out := `{"type":"string","enum":["b","a"]}`
	src := `{"name":"t","title":"T","inputSchema":` + in + `,"outputSchema":` + out + `,"annotations":{"readOnlyHint":true},"_meta":{"k":1},"execution":{"taskSupport":"optional"}}`
	var tool Tool
	if err := json.Unmarshal([]byte(src), &tool); err != nil {
		t.Fatal(err)
	}
	if raw, ok := tool.InputSchema.(json.RawMessage); !ok || string(raw) != in {
		t.Fatalf("inputSchema %T %s", tool.InputSchema, tool.InputSchema)
	}
	if raw, ok := tool.OutputSchema.(json.RawMessage); !ok || string(raw) != out {
		t.Fatalf("outputSchema %T %s", tool.OutputSchema, tool.OutputSchema)
	}
	if tool.Name != "t" || tool.Title != "T" || tool.Annotations == nil || !*tool.Annotations.ReadOnlyHint || tool.Meta["k"] != float64(1) {
		t.Fatalf("decoded %+v", tool)
	}
	b, err := json.Marshal(&tool)
	if err != nil || !bytes.Contains(b, []byte(`"inputSchema":`+in)) || !bytes.Contains(b, []byte(`"outputSchema":`+out)) {
		t.Fatalf("encoded again: %s %v", b, err)
	}
	var bare Tool
	if err := json.Unmarshal([]byte(`{"name":"b","inputSchema":{"type":"object"}}`), &bare); err != nil || bare.OutputSchema != nil {
		t.Fatalf("absent outputSchema decoded as %#v (%v)", bare.OutputSchema, err)
	}
	// A value the decoder reuses is reset.
	if err := json.Unmarshal([]byte(`{"name":"c"}`), &tool); err != nil || tool.InputSchema != nil || tool.OutputSchema != nil || tool.Title != "" {
		t.Fatalf("reused: %+v %v", tool, err)
	}
}

// TestCallToolResultDecode: content blocks in order, block types this
// package does not model left out, structuredContent raw.
func TestCallToolResultDecode(t *testing.T) {
	t.Parallel()
	src := `{"content":[{"type":"text","text":"a"},{"type":"tool_use","id":"x"},{"type":"image","data":"AA==","mimeType":"image/png"}],` +
		`"structuredContent":{"b":2,"a":1.0},"isError":true,"_meta":{"k":"v"},"resultType":"complete"}`
	var r CallToolResult
	if err := json.Unmarshal([]byte(src), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 2 || r.Content[0].(*TextContent).Text != "a" || r.Content[1].(*ImageContent).MIMEType != "image/png" {
		t.Fatalf("content %#v", r.Content)
	}
	if raw, ok := r.StructuredContent.(json.RawMessage); !ok || string(raw) != `{"b":2,"a":1.0}` {
		t.Fatalf("structuredContent %#v", r.StructuredContent)
	}
	if !r.IsError || r.Meta["k"] != "v" {
		t.Fatalf("%+v", r)
	}
	for src, want := range map[string]any{`{"content":[]}`: nil, `{"content":[],"structuredContent":null}`: json.RawMessage("null")} {
		var r CallToolResult
		if err := json.Unmarshal([]byte(src), &r); err != nil || !reflect.DeepEqual(r.StructuredContent, want) || r.Content == nil {
			t.Errorf("%s: %#v %#v %v", src, r.StructuredContent, r.Content, err)
		}
	}
	if err := json.Unmarshal([]byte(`{"content":{}}`), &r); err == nil {
		t.Error("content that is not an array accepted")
	}
}

// TestInputRequestDecode: params stay raw; absent params are nil.
func TestInputRequestDecode(t *testing.T) {
	t.Parallel()
	var reqs InputRequests
	src := `{"a":{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}},"b":{"method":"roots/list"}}`
	if err := json.Unmarshal([]byte(src), &reqs); err != nil {
		t.Fatal(err)
	}
	if p, ok := reqs["a"].Params.(json.RawMessage); !ok || reqs["a"].Method != MethodElicit || !strings.HasPrefix(string(p), `{"mode":"form"`) {
		t.Fatalf("a: %#v", reqs["a"])
	}
	if reqs["b"].Method != MethodListRoots || reqs["b"].Params != nil {
		t.Fatalf("b: %#v", reqs["b"])
	}
	// Built, it marshals its params as given.
	b, _ := json.Marshal(&InputRequest{Method: MethodElicit, Params: &ElicitURLParams{Mode: "url", Message: "m", URL: "https://x"}})
	if string(b) != `{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://x"}}` {
		t.Fatalf("marshalled %s", b)
	}
	var sm SamplingMessage
	if err := json.Unmarshal([]byte(`{"role":"user","content":{"type":"text","text":"hi"}}`), &sm); err != nil || sm.Content.(*TextContent).Text != "hi" {
		t.Fatalf("sampling message %+v %v", sm, err)
	}
}

// TestCursorConvention: nil is the last page, "" a cursor sent as such.
func TestCursorConvention(t *testing.T) {
	t.Parallel()
	empty := ""
	for _, tc := range []struct {
		v    any
		want string
	}{
		{&ListToolsResult{Tools: []*Tool{}}, `{"tools":[]}`},
		{&ListToolsResult{Tools: []*Tool{}, NextCursor: &empty}, `{"tools":[],"nextCursor":""}`},
		{&ListPromptsResult{Prompts: []Prompt{}, NextCursor: &empty}, `{"prompts":[],"nextCursor":""}`},
		{&ListResourcesResult{Resources: []Resource{}}, `{"resources":[]}`},
		{&ListResourceTemplatesResult{ResourceTemplates: []ResourceTemplate{}, NextCursor: &empty}, `{"resourceTemplates":[],"nextCursor":""}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%T: %s %v, want %s", tc.v, b, err, tc.want)
		}
	}
}

// TestErrorJSON: the wire form is the JSON-RPC error object; the cause and
// the HTTP parts are never in it.
func TestErrorJSON(t *testing.T) {
	t.Parallel()
	e := NewError(CodeInvalidParams, "bad <x>").WithData(map[string]any{"name": "t"}).WithHTTP(http.StatusBadRequest, http.Header{"X": {"y"}})
	e.Cause = errors.New("secret")
	b, err := json.Marshal(e)
	if err != nil || string(b) != `{"code":-32602,"message":"bad \u003cx\u003e","data":{"name":"t"}}` {
		t.Fatalf("marshalled %s %v", b, err)
	}
	var back Error
	if err := json.Unmarshal(b, &back); err != nil || back.Code != e.Code || back.Message != e.Message || string(back.Data) != `{"name":"t"}` ||
		back.Cause != nil || back.HTTPStatus() != 0 || back.HTTPHeader() != nil {
		t.Fatalf("decoded %+v %v", back, err)
	}
	if b, _ := json.Marshal(NewError(CodeInternalError, "x")); string(b) != `{"code":-32603,"message":"x"}` {
		t.Errorf("no data: %s", b)
	}
	if e := NewError(1, "x").WithData(nil); e.Data != nil {
		t.Errorf("WithData(nil) = %s", e.Data)
	}
	if e := NewError(1, "x").WithData(func() {}); e.Data != nil {
		t.Errorf("WithData of an unmarshalable value = %s", e.Data)
	}
	if err := json.Unmarshal([]byte(`{"code":"x","message":"m"}`), &back); err == nil {
		t.Error("a string code accepted")
	}
}

// TestErrorMatching: errors.Is by code, the sentinels, CodeOf, the typed
// data accessors, and the client-side fields apart from the server's.
func TestErrorMatching(t *testing.T) {
	t.Parallel()
	hm := NewError(CodeHeaderMismatch, "Header mismatch").WithResponse("tools/call", http.StatusBadRequest)
	err := fmt.Errorf("call: %w", hm)
	for target, want := range map[error]bool{
		ErrHeaderMismatch:                true,
		ErrMissingCapability:             false,
		ErrUnsupportedVersion:            false,
		&Error{Code: CodeHeaderMismatch}: true,
		&Error{Code: CodeInvalidParams}:  false,
		NewError(CodeHeaderMismatch, "").WithResponse("tools/call", 0): true,
		NewError(CodeHeaderMismatch, "").WithResponse("tools/list", 0): false,
	} {
		if got := errors.Is(err, target); got != want {
			t.Errorf("errors.Is(%v, %v) = %v", err, target, got)
		}
	}
	if hm.Method() != "tools/call" || hm.ResponseStatus() != http.StatusBadRequest || hm.HTTPStatus() != 0 {
		t.Errorf("method %q, response status %d, HTTP status %d: a received status is not a status to answer with",
			hm.Method(), hm.ResponseStatus(), hm.HTTPStatus())
	}
	if got := hm.Error(); got != "mcp error -32020 (tools/call): Header mismatch" {
		t.Errorf("Error() = %q", got)
	}
	withCause := NewError(CodeInternalError, "Session store unavailable")
	withCause.Cause = errors.New("timeout")
	if got := withCause.Error(); got != "mcp error -32603: Session store unavailable: timeout" || !errors.Is(withCause, withCause.Cause) {
		t.Errorf("Error() = %q", got)
	}
	if CodeOf(nil) != 0 || CodeOf(errors.New("x")) != CodeInternalError || CodeOf(err) != CodeHeaderMismatch {
		t.Error("CodeOf")
	}
	uv := NewError(CodeUnsupportedProtocolVersion, "u").WithData(map[string]any{"supported": []string{"2026-07-28"}, "requested": "1999"})
	if s := uv.Supported(); len(s) != 1 || s[0] != "2026-07-28" || uv.Requested() != "1999" {
		t.Errorf("Supported %v Requested %q", s, uv.Requested())
	}
	mc := NewError(CodeMissingRequiredClientCapability, "m").WithData(map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}})
	if rc := mc.RequiredCapabilities(); rc == nil || !rc.SupportsURLElicitation() || rc.SupportsSampling() {
		t.Errorf("RequiredCapabilities %+v", rc)
	}
	bad := &Error{Code: CodeUnsupportedProtocolVersion, Data: json.RawMessage(`[1]`)}
	if bad.Supported() != nil || bad.Requested() != "" || bad.RequiredCapabilities() != nil || (&Error{}).Supported() != nil {
		t.Error("accessors of data without the member")
	}
}

// A limit error decoded from the wire matches ErrLimitExceeded and says
// when to retry.
func TestLimitExceededError(t *testing.T) {
	t.Parallel()
	var e Error
	if err := json.Unmarshal([]byte(`{"code":-31429,"message":"Too many tasks","data":{"reason":"too_many_tasks","limit":100,"retryAfterMs":2500}}`), &e); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(fmt.Errorf("call: %w", &e), ErrLimitExceeded) || errors.Is(&e, ErrHeaderMismatch) {
		t.Error("errors.Is does not match the limit error by its code")
	}
	if got := e.RetryAfter(); got != 2500*time.Millisecond {
		t.Errorf("RetryAfter = %v, want 2.5s", got)
	}
	if got := NewError(CodeInternalError, "x").RetryAfter(); got != 0 {
		t.Errorf("RetryAfter of an error without data = %v", got)
	}
}
