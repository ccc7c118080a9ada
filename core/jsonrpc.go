package core

import "github.com/mcpfn/mcpfn/internal/jsonwire"

// rpcMessage is one decoded JSON-RPC message. Its byte slices point into the
// request body, which is never reused after the request.
type rpcMessage struct {
	id     []byte // raw id, nil when absent
	method string
	params []byte // raw params, nil when absent
	// answer is the result, or with isError the error object, of a response
	// (a legacy client's answer to a server-to-client request).
	answer []byte

	// Members of params the envelope checks need, found by parseMessage
	// in one pass (the last of a repeated name): _meta, name and uri.
	pMeta, pName []byte
	pURI         []byte
	pTaskID      []byte // the Tasks extension's tasks/* methods

	// meta is the one scan of pMeta, shared by the door and the era.
	meta       requestMeta
	isResponse bool
	isError    bool

	// post, when the message is the whole body of a POST, holds the
	// exchange and the Request of the message.
	post *post
}

// post is what one POSTed message needs for its life beyond its parsed
// form, in one allocation: the exchange that answers it and its Request.
// They live as long as the request (a handler may keep its Request, which
// keeps the exchange). The parsed message itself is recycled once the
// request is served (Server.servePost): nothing keeps it, and what the
// Request takes from it are sub-slices of the body, never the message.
type post struct {
	x exchange
	r Request
}

// newRequest returns the zero Request of m: the one of its post, or a new
// one for a message of a batch.
func (m *rpcMessage) newRequest() *Request {
	if m.post != nil {
		return &m.post.r
	}
	return new(Request)
}

// indexParams finds the members of params the envelope checks need.
func (m *rpcMessage) indexParams() {
	jsonwire.EachMember(m.params, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, "_meta"):
			m.pMeta = v
		case jsonwire.KeyIs(k, "name"):
			m.pName = v
		case jsonwire.KeyIs(k, "uri"):
			m.pURI = v
		case jsonwire.KeyIs(k, "taskId"):
			m.pTaskID = v
		}
		return true
	})
	m.meta = scanMeta(m.pMeta)
}

func (m *rpcMessage) isNotification() bool { return !m.isResponse && m.id == nil }

// parseMessage decodes a JSON-RPC 2.0 request, notification or response from
// b, which must already be valid JSON. On failure it returns the -32600 error
// and, when it could be read, the id to answer with.
func parseMessage(b []byte) (*rpcMessage, []byte, *Error) {
	m := &rpcMessage{}
	if id, err := m.parse(b); err != nil {
		return nil, id, err
	}
	return m, nil, nil
}

// parse is parseMessage into m.
func (m *rpcMessage) parse(b []byte) ([]byte, *Error) {
	var version, method, idRaw, result, errObj []byte
	var hasResult, hasError, hasMethod bool
	err := jsonwire.EachMember(b, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, "jsonrpc"):
			version = v
		case jsonwire.KeyIs(k, "id"):
			idRaw = v
		case jsonwire.KeyIs(k, "method"):
			method, hasMethod = v, true
		case jsonwire.KeyIs(k, "params"):
			m.params = v
		case jsonwire.KeyIs(k, "result"):
			result, hasResult = v, true
		case jsonwire.KeyIs(k, "error"):
			errObj, hasError = v, true
		}
		return true
	})
	if err != nil {
		return nil, invalidRequest("a message must be a JSON object")
	}
	idOK := idRaw == nil || validID(idRaw)
	var replyID []byte
	if idRaw != nil && idOK {
		replyID = idRaw
	}
	if v, ok := jsonwire.RawString(version); !ok || v != "2.0" {
		return replyID, invalidRequest(`"jsonrpc" must be "2.0"`)
	}
	if !idOK {
		return nil, invalidRequest(`"id" must be a string or an integer`)
	}
	m.id = idRaw
	if hasMethod {
		s, ok := jsonwire.RawString(method)
		if !ok || s == "" {
			return replyID, invalidRequest(`"method" must be a non-empty string`)
		}
		if hasResult || hasError {
			return replyID, invalidRequest("a request cannot carry result or error")
		}
		m.method = s
		if m.params != nil {
			if !jsonwire.IsObject(m.params) {
				return replyID, invalidRequest(`"params" must be an object`)
			}
			m.indexParams()
		}
		return nil, nil
	}
	if hasResult == hasError {
		return replyID, invalidRequest(`a message needs "method", or exactly one of "result" and "error"`)
	}
	if idRaw == nil {
		return nil, invalidRequest(`a response needs an "id"`)
	}
	m.isResponse, m.isError = true, hasError
	m.answer = result
	if hasError {
		m.answer = errObj
	}
	return nil, nil
}

// validID reports whether raw is a JSON string or an integer (no fraction, no
// exponent). null, floats, booleans, objects and arrays are not ids.
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return true
	}
	i := 0
	if raw[0] == '-' {
		i = 1
	}
	if i == len(raw) {
		return false
	}
	for ; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return false
		}
	}
	return true
}

// Limits on the client-supplied objects that the server canonicalizes,
// validates and binds (tool and prompt arguments, inputResponses). A request
// over a limit is answered -32602 before any handler runs. See
// docs/design.md, "Tools, arguments and results".
const (
	// MaxArgumentDepth is how deeply objects and arrays may nest inside
	// arguments (the arguments object itself is depth 1).
	MaxArgumentDepth = 32
	// MaxArgumentMembers is how many members one object inside arguments
	// may have.
	MaxArgumentMembers = 10000
)

// checkArguments enforces MaxArgumentDepth and MaxArgumentMembers on the
// valid JSON value v and rejects an object, at any depth, that names a key
// twice (jsonwire.Check). what names the value in the -32602 message.
func checkArguments(what string, v []byte) error {
	if err := jsonwire.Check(v); err != nil {
		return InvalidParamsError("Invalid params: %s: %v", what, err)
	}
	return nil
}

// requestMeta is what the one scan of a request's params._meta found: the
// raw values of the keys the server reads (the last of a repeated key).
type requestMeta struct {
	raw           []byte // the _meta object; nil when absent or not an object
	version       string // MetaProtocolVersion, when hasVersion
	present       bool   // params has a _meta member
	hasVersion    bool
	fault         metaFault
	caps          []byte
	clientInfo    []byte
	logLevel      []byte
	progressToken []byte
}

// metaFault names the first of the reserved 2026-07-28 _meta keys, in
// member order, whose value has the wrong type.
type metaFault uint8

const (
	faultNone    metaFault = iota
	faultVersion           // MetaProtocolVersion is not a string
	faultCaps              // MetaClientCapabilities is not an object
)

func (f metaFault) String() string {
	switch f {
	case faultVersion:
		return MetaProtocolVersion + " must be a string"
	case faultCaps:
		return MetaClientCapabilities + " must be an object"
	}
	return ""
}

// scanMeta reads the params._meta member v of a request (nil when absent),
// once, as the message is parsed: the door's era choice and the era's
// checks read what it found.
func scanMeta(v []byte) requestMeta {
	meta := requestMeta{present: v != nil}
	if !jsonwire.IsObject(v) {
		return meta
	}
	meta.raw = v
	jsonwire.EachMember(meta.raw, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, MetaProtocolVersion):
			var ok bool
			if meta.version, ok = jsonwire.RawString(v); !ok && meta.fault == faultNone {
				meta.fault = faultVersion
			}
			meta.hasVersion = true
		case jsonwire.KeyIs(k, MetaClientCapabilities):
			if !jsonwire.IsObject(v) && meta.fault == faultNone {
				meta.fault = faultCaps
			}
			meta.caps = v
		case jsonwire.KeyIs(k, MetaClientInfo):
			meta.clientInfo = v
		case jsonwire.KeyIs(k, MetaLogLevel):
			meta.logLevel = v
		case jsonwire.KeyIs(k, "progressToken"):
			meta.progressToken = v
		}
		return true
	})
	return meta
}

// progress returns the request's progress token: nil when absent or null,
// a string or an integer as sent, and otherwise the -32602 error, in both
// eras (2025-11-25 and 2026-07-28 basic/utilities/progress: "a string or
// integer value").
func (meta *requestMeta) progress() ([]byte, error) {
	v := meta.progressToken
	if v == nil || jsonwire.IsNull(v) {
		return nil, nil
	}
	if v[0] != '"' && !validID(v) {
		return nil, InvalidParamsError("Invalid params: progressToken must be a string or an integer")
	}
	return v, nil
}
