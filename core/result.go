package core

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// replyError answers with a JSON-RPC error, with the HTTP status of the
// era. Errors that are not *Error are
// logged and sent as a generic -32603.
func (s *Server) replyError(ctx context.Context, x *exchange, id []byte, err error, e0 era) {
	var e *Error
	if !errors.As(err, &e) {
		s.log.ErrorContext(ctx, "request failed", "error", err.Error())
	} else if e.Cause != nil && e.HTTPStatus() >= 500 {
		// A server fault (the session store failed): say what happened.
		s.log.ErrorContext(ctx, "request failed", "code", e.Code, "status", e.HTTPStatus(), "error", e.Cause.Error())
	} else if e.Cause != nil {
		s.log.DebugContext(ctx, "request refused", "code", e.Code, "error", e.Cause.Error())
	}
	s.errorHeaders(ctx, x, e)
	we := toWireError(err)
	status := http.StatusOK
	if e != nil && e.HTTPStatus() != 0 {
		status = e.HTTPStatus()
	} else {
		status = e0.errorStatus(we.Code)
	}
	x.finish(status, appendErrorResponse(make([]byte, 0, 128), id, we))
}

// resultTail appends the members every result shares: what the era puts
// before _meta (resultType and the cache hint of cacheMethod, "" for none,
// on modern results) and _meta (serverInfo on modern results, merged with
// the handler's meta).
func (r *Request) resultTail(b []byte, cacheMethod string, userMeta Meta, hint *cacheWire) []byte {
	b = r.era.appendResultHead(b, r, cacheMethod, hint)
	b = r.era.appendMeta(b, r, userMeta)
	if b[len(b)-1] == ',' {
		b = b[:len(b)-1]
	}
	return b
}

// encodeResult marshals v (a struct of method-specific members) and appends
// the common tail.
func (r *Request) encodeResult(v any, cacheMethod string, userMeta Meta, hint *cacheWire) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // drop '}'
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = r.resultTail(b, cacheMethod, userMeta, hint)
	return append(b, '}'), nil
}
