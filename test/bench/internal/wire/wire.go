// Package wire builds the MCP requests the load generator sends and checks
// the responses, in both protocol eras: modern (2026-07-28, per-request _meta,
// no handshake) and legacy (2025-11-25, initialize handshake).
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Protocol versions spoken by the load generator.
const (
	ModernVersion = "2026-07-28"
	LegacyVersion = "2025-11-25"
)

// Kind is the kind of a request.
type Kind int

// The request kinds.
const (
	Add Kind = iota
	Echo
	Payload
	Discover
	Initialize
	Initialized // notification: no id, answered by 202 and no body
	// Ask is the first round of a multi round-trip tools/call (mcpfn's ask
	// tool): the answer is an input_required result.
	Ask
	// AskRetry is its second round: the retry with the answer and State.
	AskRetry
)

func (k Kind) String() string {
	switch k {
	case Add:
		return "add"
	case Echo:
		return "echo"
	case Payload:
		return "payload"
	case Discover:
		return "server/discover"
	case Initialize:
		return "initialize"
	case Initialized:
		return "notifications/initialized"
	case Ask:
		return "ask (round 1)"
	case AskRetry:
		return "ask (round 2)"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// IsNotification reports whether requests of kind k carry no id and expect no
// response body.
func (k Kind) IsNotification() bool { return k == Initialized }

// Call describes one request. Prepare must be called before AppendBody and
// Headers are used.
type Call struct {
	Kind   Kind
	Modern bool   // 2026-07-28 request with _meta; otherwise 2025-11-25
	A, B   int    // add arguments
	Text   string // echo argument
	N      int    // payload argument
	State  string // AskRetry: the requestState of round 1

	prefix, suffix []byte // body around the id
	headers        string // extra header lines, each ending in \r\n
}

// DefaultEchoText is the text sent to the echo tool. It needs JSON escaping.
const DefaultEchoText = "hello, \"mcp\" \\ bench ✓ <tag>"

const metaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + ModernVersion +
	`","io.modelcontextprotocol/clientCapabilities":{}}`

const metaElicitJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + ModernVersion +
	`","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// Method returns the JSON-RPC method of c.
func (c *Call) Method() string {
	switch c.Kind {
	case Add, Echo, Payload, Ask, AskRetry:
		return "tools/call"
	case Discover:
		return "server/discover"
	case Initialize:
		return "initialize"
	case Initialized:
		return "notifications/initialized"
	}
	return ""
}

// ToolName returns the tool name of a tools/call, or "".
func (c *Call) ToolName() string {
	switch c.Kind {
	case Add:
		return "add"
	case Echo:
		return "echo"
	case Payload:
		return "payload"
	case Ask, AskRetry:
		return "ask"
	}
	return ""
}

// Prepare precomputes the parts of the request that do not depend on the id.
func (c *Call) Prepare() {
	var params string
	switch c.Kind {
	case Add:
		params = `{"name":"add","arguments":{"a":` + strconv.Itoa(c.A) + `,"b":` + strconv.Itoa(c.B) + `}`
	case Echo:
		t, _ := json.Marshal(c.Text)
		params = `{"name":"echo","arguments":{"text":` + string(t) + `}`
	case Payload:
		params = `{"name":"payload","arguments":{"n":` + strconv.Itoa(c.N) + `}`
	case Discover:
		params = `{`
	case Ask:
		params = `{"name":"ask","arguments":{"greeting":"Hello"}`
	case AskRetry:
		st, _ := json.Marshal(c.State)
		params = `{"name":"ask","arguments":{"greeting":"Hello"},"requestState":` + string(st) +
			`,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}`
	case Initialize:
		params = `{"protocolVersion":"` + LegacyVersion +
			`","capabilities":{},"clientInfo":{"name":"mcpbench","version":"1.0.0"}`
	case Initialized:
		params = `{`
	}
	if c.Modern && c.Kind != Initialize && c.Kind != Initialized {
		if params != "{" {
			params += ","
		}
		if c.Kind == Ask || c.Kind == AskRetry {
			params += metaElicitJSON
		} else {
			params += metaJSON
		}
	}
	params += "}"
	if params == "{}" && c.Kind == Initialized {
		params = ""
	}

	if c.Kind.IsNotification() {
		s := `{"jsonrpc":"2.0","method":"` + c.Method() + `"`
		if params != "" {
			s += `,"params":` + params
		}
		c.prefix = []byte(s + "}")
		c.suffix = nil
	} else {
		c.prefix = []byte(`{"jsonrpc":"2.0","id":`)
		c.suffix = []byte(`,"method":"` + c.Method() + `","params":` + params + `}`)
	}

	var h strings.Builder
	switch {
	case c.Modern:
		h.WriteString("MCP-Protocol-Version: " + ModernVersion + "\r\n")
		h.WriteString("Mcp-Method: " + c.Method() + "\r\n")
		if n := c.ToolName(); n != "" {
			h.WriteString("Mcp-Name: " + n + "\r\n")
		}
	case c.Kind != Initialize:
		h.WriteString("MCP-Protocol-Version: " + LegacyVersion + "\r\n")
	}
	c.headers = h.String()
}

// Headers returns the MCP-specific header lines of c (each terminated by
// CRLF), excluding Content-Type, Accept and Mcp-Session-Id.
func (c *Call) Headers() string { return c.headers }

// AppendBody appends the JSON body of c with the given id to dst. The id is
// ignored for notifications.
func (c *Call) AppendBody(dst []byte, id int64) []byte {
	dst = append(dst, c.prefix...)
	if c.Kind.IsNotification() {
		return dst
	}
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, c.suffix...)
}

// ErrNoResponse is returned by Extract when an event stream holds no response
// for the request.
var ErrNoResponse = errors.New("no JSON-RPC response in event stream")

// Extract returns the JSON-RPC message of body that answers the request with
// the given id. A body of media type text/event-stream is parsed as
// server-sent events (notifications and requests before the response are
// skipped); anything else is taken as a single JSON message.
func Extract(contentType string, body []byte, id int64) ([]byte, error) {
	if !isEventStream(contentType) {
		return body, nil
	}
	var err error = ErrNoResponse
	for ev := range Events(body) {
		if m, e := matchResponse(ev, id); e == nil {
			return m, nil
		} else if !errors.Is(e, errSkip) {
			err = e
		}
	}
	return nil, err
}

func isEventStream(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

var errSkip = errors.New("not the response")

func matchResponse(data []byte, id int64) ([]byte, error) {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("event data is not JSON: %w", err)
	}
	if probe.Method != "" || len(probe.ID) == 0 {
		return nil, errSkip // a server notification or request
	}
	if !idEquals(probe.ID, id) {
		return nil, fmt.Errorf("response id %s, want %d", probe.ID, id)
	}
	return data, nil
}

// Events iterates over the data of the server-sent events in body. Multiple
// data lines of one event are joined with "\n"; events without data are
// skipped. Both LF and CRLF line endings are accepted.
func Events(body []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		var data []byte
		have := false
		flush := func() bool {
			if !have {
				return true
			}
			d := data
			data, have = nil, false
			return yield(d)
		}
		for len(body) > 0 {
			var line []byte
			if i := bytes.IndexByte(body, '\n'); i >= 0 {
				line, body = body[:i], body[i+1:]
			} else {
				line, body = body, nil
			}
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if len(line) == 0 {
				if !flush() {
					return
				}
				continue
			}
			if line[0] == ':' { // comment
				continue
			}
			field, value, found := bytes.Cut(line, []byte{':'})
			if !found {
				value = nil
			}
			value = bytes.TrimPrefix(value, []byte{' '})
			if string(field) == "data" {
				if have {
					data = append(data, '\n')
				}
				data = append(data, value...)
				have = true
			}
		}
		flush()
	}
}

func idEquals(raw json.RawMessage, id int64) bool {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return err == nil && n == id
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *struct {
		Content           []textBlock     `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		ResultType        string          `json:"resultType"`
		SupportedVersions []string        `json:"supportedVersions"`
		RequestState      string          `json:"requestState"`
		InputRequests     json.RawMessage `json:"inputRequests"`
		ProtocolVersion   string          `json:"protocolVersion"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Verify checks that msg is a correct, successful JSON-RPC response to c sent
// with the given id.
func (c *Call) Verify(msg []byte, id int64) error {
	var r response
	if err := json.Unmarshal(msg, &r); err != nil {
		return fmt.Errorf("%s: response is not JSON: %v: %.200q", c.Kind, err, msg)
	}
	if r.JSONRPC != "2.0" {
		return fmt.Errorf("%s: jsonrpc %q", c.Kind, r.JSONRPC)
	}
	if !idEquals(r.ID, id) {
		return fmt.Errorf("%s: response id %s, want %d", c.Kind, r.ID, id)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: error %d: %s", c.Kind, r.Error.Code, r.Error.Message)
	}
	res := r.Result
	if res == nil {
		return fmt.Errorf("%s: no result", c.Kind)
	}
	if c.Kind == Ask {
		if res.ResultType != "input_required" || res.RequestState == "" || !bytes.Contains(res.InputRequests, []byte(`"elicitation/create"`)) {
			return fmt.Errorf("%s: want an input_required result with an elicitation and a requestState: %.300q", c.Kind, msg)
		}
		return nil
	}
	if c.Modern && res.ResultType != "complete" {
		return fmt.Errorf("%s: resultType %q, want \"complete\"", c.Kind, res.ResultType)
	}
	switch c.Kind {
	case AskRetry:
		if res.IsError || len(res.Content) == 0 || res.Content[0].Text != "Hello, Ada!" {
			return fmt.Errorf("%s: want the text \"Hello, Ada!\": %.300q", c.Kind, msg)
		}
	case Add, Echo, Payload:
		if res.IsError {
			return fmt.Errorf("%s: isError: %.200q", c.Kind, res.Content)
		}
		if len(res.Content) == 0 || res.Content[0].Type != "text" {
			return fmt.Errorf("%s: no text content block", c.Kind)
		}
		text := res.Content[0].Text
		switch c.Kind {
		case Add:
			want := c.A + c.B
			var sc struct {
				Sum *int `json:"sum"`
			}
			// Modern results must carry structuredContent; legacy ones may
			// carry only the text form (2025-03-26 has no structured
			// output), but what they carry must be right.
			if c.Modern || res.StructuredContent != nil {
				if err := json.Unmarshal(res.StructuredContent, &sc); err != nil || sc.Sum == nil {
					return fmt.Errorf("add: structuredContent %s", res.StructuredContent)
				}
				if *sc.Sum != want {
					return fmt.Errorf("add: structuredContent sum %d, want %d", *sc.Sum, want)
				}
			}
			sc.Sum = nil
			if err := json.Unmarshal([]byte(text), &sc); err != nil || sc.Sum == nil || *sc.Sum != want {
				return fmt.Errorf("add: text content %q is not {\"sum\":%d}", text, want)
			}
		case Echo:
			if text != c.Text {
				return fmt.Errorf("echo: text %q, want %q", text, c.Text)
			}
		case Payload:
			if len(text) != c.N {
				return fmt.Errorf("payload: text of %d bytes, want %d", len(text), c.N)
			}
		}
	case Discover:
		for _, v := range res.SupportedVersions {
			if v == ModernVersion {
				return nil
			}
		}
		return fmt.Errorf("server/discover: supportedVersions %q lacks %s", res.SupportedVersions, ModernVersion)
	case Initialize:
		if res.ProtocolVersion != LegacyVersion {
			return fmt.Errorf("initialize: protocolVersion %q, want %q", res.ProtocolVersion, LegacyVersion)
		}
	}
	return nil
}

// RequestState returns the requestState of an input_required response.
func RequestState(msg []byte) (string, error) {
	var r response
	if err := json.Unmarshal(msg, &r); err != nil {
		return "", err
	}
	if r.Error != nil {
		return "", fmt.Errorf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	if r.Result == nil || r.Result.RequestState == "" {
		return "", fmt.Errorf("no requestState in %.200q", msg)
	}
	return r.Result.RequestState, nil
}
