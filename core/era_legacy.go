package core

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// legacyEra is the initialize revisions 2025-11-25, 2025-06-18 and
// 2025-03-26: a session negotiated at initialize, no resultType, no cache
// hints, _meta only as the handler sets it, and input asked of the client
// by the legacy bridge (bridge.go, poll.go) as server-to-client requests
// (2025-11-25 basic/transports, basic/lifecycle).
type legacyEra struct{}

func (legacyEra) errorStatus(code int) int { return httpStatusLegacy(code) }

func (legacyEra) appendResultHead(b []byte, _ *Request, _ string, _ *cacheWire) []byte { return b }

func (legacyEra) appendMeta(b []byte, _ *Request, user Meta) []byte {
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

// inputRequired hands the input requests to the bridge, which asks the
// client and runs the method again (runBridged).
func (legacyEra) inputRequired(_ context.Context, _ *Server, _ *Request, ir *InputRequiredError, _ stateBinding) ([]byte, error) {
	return nil, askBridge(ir)
}

func (legacyEra) paramHeaders(*Request) http.Header { return nil }

func (legacyEra) serves(*serverTool) bool { return true }

func (legacyEra) tools(reg *registry) []*serverTool { return reg.toolList }

func (legacyEra) toolEntry(st *serverTool, r *Request) json.RawMessage {
	if r.ProtocolVersion == ProtocolVersion20250326 {
		return st.legacy0326JSON
	}
	return st.legacyJSON
}

func (legacyEra) advancedTool(t *Tool) ([]byte, error) { return advancedToolJSON(t, true) }

// structuredContent: 2025-06-18 and 2025-11-25 carry structuredContent with
// an object root, beside its text form in content (2025-06-18 server/tools);
// other roots are text only. A typed tool's result carries it only when the
// legacy list entry advertises its outputSchema (an object root: not for a
// nullable pointer or a map, whose schema root is not "object"), so that
// what is sent is what is described. 2025-03-26 has no structured output.
func (legacyEra) structuredContent(r *Request, st *serverTool, sj []byte) bool {
	if r.ProtocolVersion == ProtocolVersion20250326 || (st != nil && st.typedOutput && !st.legacyOutput) {
		return false
	}
	return jsonwire.IsObject(sj[jsonwire.SkipSpace(sj, 0):])
}

func (legacyEra) resourceNotFoundCode() int { return CodeResourceNotFound }

// notifies: change notifications travel on the session's GET stream.
func (legacyEra) notifies(bool) bool { return true }

func (legacyEra) strictForms() bool { return false }
