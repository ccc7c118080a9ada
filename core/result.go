package core

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// replyError answers with a JSON-RPC error. Errors that are not *Error are
// logged and sent as a generic -32603.
func (s *Server) replyError(ctx context.Context, x *exchange, id []byte, err error, modern bool) {
	var e *Error
	if !errors.As(err, &e) {
		s.log.ErrorContext(ctx, "request failed", "error", err.Error())
	} else if e.Cause != nil && e.status >= 500 {
		// A server fault (the session store failed): say what happened.
		s.log.ErrorContext(ctx, "request failed", "code", e.Code, "status", e.status, "error", e.Cause.Error())
	} else if e.Cause != nil {
		s.log.DebugContext(ctx, "request refused", "code", e.Code, "error", e.Cause.Error())
	}
	s.errorHeaders(ctx, x, e)
	we := toWireError(err)
	status := http.StatusOK
	if e != nil && e.status != 0 {
		status = e.status
	} else if modern {
		status = httpStatusModern(we.Code)
	} else {
		status = httpStatusLegacy(we.Code)
	}
	x.finish(status, appendErrorResponse(make([]byte, 0, 128), id, we))
}

// resultTail appends the members every result shares: resultType (modern),
// the cache hint of method (modern; "" for none) and _meta (serverInfo on
// modern results, merged with the handler's meta).
func (r *Request) resultTail(b []byte, cacheMethod string, userMeta Meta, hint *CacheHint) []byte {
	if r.modern {
		b = append(b, `"resultType":"complete"`...)
		if cacheMethod != "" {
			h := r.srv.hints[cacheMethod]
			if hint != nil {
				h = cacheWire{ttlMs: hint.TTL.Milliseconds(), scope: hint.Scope}
				if h.scope == "" {
					h.scope = CacheScopePrivate
				}
				if h.ttlMs < 0 {
					h.ttlMs = 0
				}
			}
			b = append(b, `,"ttlMs":`...)
			b = strconv.AppendInt(b, h.ttlMs, 10)
			b = append(b, `,"cacheScope":"`...)
			b = append(b, h.scope...)
			b = append(b, '"')
		}
		b = append(b, ',')
	}
	b = r.appendMeta(b, userMeta)
	if b[len(b)-1] == ',' {
		b = b[:len(b)-1]
	}
	return b
}

// appendMeta appends `"_meta":{...},` when there is anything to send.
func (r *Request) appendMeta(b []byte, user Meta) []byte {
	if !r.modern {
		if len(user) == 0 {
			return b
		}
		m, err := json.Marshal(user)
		if err != nil {
			return b
		}
		b = append(b, `"_meta":`...)
		b = append(b, m...)
		return append(b, ',')
	}
	b = append(b, `"_meta":`...)
	if len(user) == 0 {
		b = append(b, r.srv.infoRaw...)
		return append(b, ',')
	}
	merged := make(map[string]any, len(user)+1)
	for k, v := range user {
		merged[k] = v
	}
	merged[MetaServerInfo] = r.srv.implRaw
	m, err := json.Marshal(merged)
	if err != nil {
		b = append(b, r.srv.infoRaw...)
	} else {
		b = append(b, m...)
	}
	return append(b, ',')
}

// encodeResult marshals v (a struct of method-specific members) and appends
// the common tail.
func (r *Request) encodeResult(v any, cacheMethod string, userMeta Meta, hint *CacheHint) ([]byte, error) {
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
