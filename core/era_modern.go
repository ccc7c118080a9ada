package core

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// modernEra is the 2026-07-28 revision: no session, per-request _meta,
// resultType and cache hints on every result, serverInfo in every result's
// _meta, input_required results with a sealed requestState (2026-07-28
// basic/index, basic/patterns/mrtr, server/utilities/caching).
type modernEra struct{}

func (modernEra) errorStatus(code int) int { return httpStatusModern(code) }

func (modernEra) appendResultHead(b []byte, r *Request, cacheMethod string, hint *cacheWire) []byte {
	b = append(b, `"resultType":"complete"`...)
	if cacheMethod != "" {
		h := r.srv.hints[cacheMethod]
		if hint != nil {
			h = *hint
		}
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, h.ttlMs, 10)
		b = append(b, `,"cacheScope":"`...)
		b = append(b, h.scope...)
		b = append(b, '"')
	}
	return append(b, ',')
}

func (modernEra) appendMeta(b []byte, r *Request, user Meta) []byte {
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

func (modernEra) inputRequired(ctx context.Context, s *Server, r *Request, ir *InputRequiredError, b stateBinding) ([]byte, error) {
	return s.encodeInputRequired(ctx, r, ir, b)
}

func (modernEra) paramHeaders(r *Request) http.Header { return r.Header }

// serves: a tool that needs a session is not served to 2026-07-28 clients.
func (modernEra) serves(st *serverTool) bool { return !st.needsSession }

func (modernEra) tools(reg *registry) []*serverTool { return reg.modernTools }

func (modernEra) toolEntry(st *serverTool, _ *Request) json.RawMessage { return st.modernJSON }

func (modernEra) advancedTool(t *Tool) ([]byte, error) { return advancedToolJSON(t, false) }

// structuredContent: any root (2026-07-28 server/tools); a typed tool's
// result has structured content only when its outputSchema is advertised.
func (modernEra) structuredContent(*Request, *serverTool, []byte) bool { return true }

func (modernEra) resourceNotFoundCode() int { return CodeInvalidParams }

// notifies: change notifications travel on subscriptions/listen, which a
// buffered response cannot carry.
func (modernEra) notifies(live bool) bool { return live }

func (modernEra) strictForms() bool { return true }
