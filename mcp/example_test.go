package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpfn/mcpfn/mcp"
)

// Decoding a tools/list page: schemas stay as received, and a nil
// NextCursor is the last page.
func ExampleListToolsResult() {
	page := []byte(`{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number","minimum":1.50}}}}],"resultType":"complete","ttlMs":60000,"cacheScope":"public"}`)
	var r mcp.ListToolsResult
	if err := json.Unmarshal(page, &r); err != nil {
		fmt.Println(err)
		return
	}
	t := r.Tools[0]
	fmt.Println(t.Name)
	fmt.Printf("%s\n", t.InputSchema.(json.RawMessage))
	fmt.Println("last page:", r.NextCursor == nil, "ttl:", *r.TTLMs, r.CacheScope)

	// An empty string is a cursor like any other.
	var more mcp.ListToolsResult
	json.Unmarshal([]byte(`{"tools":[],"nextCursor":""}`), &more)
	fmt.Printf("last page: %v, next cursor %q\n", more.NextCursor == nil, *more.NextCursor)
	// Output:
	// add
	// {"type":"object","properties":{"a":{"type":"number","minimum":1.50}}}
	// last page: true ttl: 60000 public
	// last page: false, next cursor ""
}

// A JSON-RPC error matched by code with errors.Is, and its data read with
// the typed accessors.
func ExampleError() {
	var e mcp.Error
	json.Unmarshal([]byte(`{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25"],"requested":"2024-01-01"}}`), &e)
	err := fmt.Errorf("connecting: %w", &e)

	fmt.Println(errors.Is(err, mcp.ErrUnsupportedVersion), errors.Is(err, mcp.ErrHeaderMismatch))
	var got *mcp.Error
	if errors.As(err, &got) {
		fmt.Println(got.Supported(), got.Requested())
	}
	fmt.Println(mcp.CodeOf(err))

	// A server builds the error it answers with.
	missing := mcp.NewError(mcp.CodeMissingRequiredClientCapability, "Missing required client capability").
		WithData(map[string]any{"requiredCapabilities": &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
	b, _ := json.Marshal(missing)
	fmt.Println(string(b))
	fmt.Println(missing.RequiredCapabilities().SupportsSampling())
	// Output:
	// true false
	// [2026-07-28 2025-11-25] 2024-01-01
	// -32022
	// {"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"sampling":{}}}}
	// true
}

// Reading the Bearer challenge of a 401 (RFC 6750 §3, RFC 9728 §5.1), and
// writing one.
func ExampleBearerChallenge() {
	h := http.Header{"Www-Authenticate": {`Basic realm="legacy", Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write"`}}
	p, ok := mcp.BearerChallenge(h)
	fmt.Println(ok, p["resource_metadata"])
	fmt.Println(p["scope"])

	fmt.Println(mcp.FormatChallenge("Bearer",
		mcp.AuthParam{Name: "error", Value: "insufficient_scope"},
		mcp.AuthParam{Name: "scope", Value: "files:write"},
		mcp.AuthParam{Name: "error_description", Value: `needs "files:write"`}))
	// Output:
	// true https://mcp.example.com/.well-known/oauth-protected-resource
	// files:read files:write
	// Bearer error="insufficient_scope", scope="files:write", error_description="needs \"files:write\""
}

// Every challenge of a header, with a token68 one among them.
func ExampleParseChallenges() {
	cs, err := mcp.ParseChallenges(`Negotiate YII=, Bearer realm="mcp", error="invalid_token"`)
	for _, c := range cs {
		fmt.Printf("%s %q %v\n", c.Scheme, c.Token68, c.Params)
	}
	fmt.Println(err)
	// Output:
	// Negotiate "YII=" map[]
	// Bearer "" map[error:invalid_token realm:mcp]
	// <nil>
}

// Content blocks decode by their type member.
func ExampleUnmarshalContent() {
	c, err := mcp.UnmarshalContent([]byte(`{"type":"image","data":"iVBORw==","mimeType":"image/png"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	img := c.(*mcp.ImageContent)
	fmt.Println(img.MIMEType, img.Data)
	_, err = mcp.UnmarshalContent([]byte(`{"type":"tool_use"}`))
	fmt.Println(err)
	// Output:
	// image/png [137 80 78 71]
	// unsupported content type "tool_use"
}

// Mcp-Name and Mcp-Param-* values that are not plain visible ASCII travel
// Base64-encoded (2026-07-28 basic/transports/streamable-http).
func ExampleEncodeHeaderValue() {
	fmt.Println(mcp.EncodeHeaderValue("get_weather"))
	enc := mcp.EncodeHeaderValue("Zürich")
	fmt.Println(enc)
	dec, ok := mcp.DecodeHeaderValue(enc)
	fmt.Println(dec, ok)
	// Output:
	// get_weather
	// =?base64?WsO8cmljaA==?=
	// Zürich true
}
