package core

import (
	"encoding/json"
	"net/http"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// requestMeta is the decoded params._meta of a request.
type requestMeta struct {
	raw           []byte
	version       string
	hasVersion    bool
	caps          []byte
	hasCaps       bool
	clientInfo    []byte
	logLevel      []byte
	progressToken []byte
}

func parseRequestMeta(msg *rpcMessage) (requestMeta, *Error) {
	var m requestMeta
	msg.indexParams()
	m.raw = msg.pMeta
	if m.raw == nil {
		return m, metaError("params._meta is required")
	}
	if !jsonwire.IsObject(m.raw) {
		return m, metaError("params._meta must be an object")
	}
	var bad *Error
	jsonwire.EachMember(m.raw, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, MetaProtocolVersion):
			s, ok := jsonwire.RawString(v)
			if !ok {
				bad = metaError(MetaProtocolVersion + " must be a string")
				return false
			}
			m.version, m.hasVersion = s, true
		case jsonwire.KeyIs(k, MetaClientCapabilities):
			if !jsonwire.IsObject(v) {
				bad = metaError(MetaClientCapabilities + " must be an object")
				return false
			}
			m.caps, m.hasCaps = v, true
		case jsonwire.KeyIs(k, MetaClientInfo):
			m.clientInfo = v
		case jsonwire.KeyIs(k, MetaLogLevel):
			m.logLevel = v
		case jsonwire.KeyIs(k, "progressToken"):
			m.progressToken = v
		}
		return true
	})
	if bad != nil {
		return m, bad
	}
	if !m.hasVersion {
		return m, metaError("params._meta is missing " + MetaProtocolVersion)
	}
	if !m.hasCaps {
		return m, metaError("params._meta is missing " + MetaClientCapabilities)
	}
	return m, nil
}

// metaError is the -32602 / 400 answer to a malformed request _meta.
func metaError(msg string) *Error {
	return NewError(CodeInvalidParams, "Invalid params: "+msg).WithHTTP(http.StatusBadRequest, nil)
}

// emptyCaps stands for "no capabilities declared". It is nil, not a shared
// value: a shared pointer would let one handler change what every server
// believes about every client. All ClientCapabilities methods accept nil.
var emptyCaps *ClientCapabilities

// decodeCaps decodes a request's client capabilities through the server's
// cache: clients send the same object on every request. The result is
// shared and must not reach handlers (see Request.caps).
func (s *Server) decodeCaps(raw []byte) (*ClientCapabilities, error) {
	if raw == nil || jsonwire.IsEmptyObject(raw) {
		return emptyCaps, nil
	}
	if c, ok := s.capsMemo.load(raw); ok {
		return c, nil
	}
	c := &ClientCapabilities{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	if len(raw) <= 1024 {
		s.capsMemo.store(raw, c, 1024)
	}
	return c, nil
}
