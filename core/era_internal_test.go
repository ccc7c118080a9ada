package core

import (
	"context"
	"net/http"
	"testing"
)

// TestEraDifferences pins what each era answers at the points where the
// wire of 2026-07-28 and of the legacy revisions differ, so that a change
// to one era cannot silently change the other.
func TestEraDifferences(t *testing.T) {
	t.Parallel()
	if (&Request{era: eraModern}).Modern() != true || (&Request{era: eraLegacy}).Modern() != false {
		t.Fatal("Request.Modern does not follow the era")
	}
	for _, c := range []struct {
		code         int
		modern, lgcy int
	}{
		{CodeMethodNotFound, http.StatusNotFound, http.StatusOK},
		{CodeHeaderMismatch, http.StatusBadRequest, http.StatusOK},
		{CodeInvalidRequest, http.StatusBadRequest, http.StatusBadRequest},
		{CodeInvalidParams, http.StatusOK, http.StatusOK},
	} {
		if got := eraModern.errorStatus(c.code); got != c.modern {
			t.Errorf("modern status of %d = %d, want %d", c.code, got, c.modern)
		}
		if got := eraLegacy.errorStatus(c.code); got != c.lgcy {
			t.Errorf("legacy status of %d = %d, want %d", c.code, got, c.lgcy)
		}
	}
	if eraModern.resourceNotFoundCode() != CodeInvalidParams || eraLegacy.resourceNotFoundCode() != CodeResourceNotFound {
		t.Error("resource-not-found codes")
	}
	r25 := &Request{era: eraLegacy, ProtocolVersion: ProtocolVersion20251125}
	r0326 := &Request{era: eraLegacy, ProtocolVersion: ProtocolVersion20250326}
	typedObject := &serverTool{typedOutput: true, legacyOutput: true}
	typedNullable := &serverTool{typedOutput: true} // e.g. *T: no legacy outputSchema
	for _, c := range []struct {
		r    *Request
		st   *serverTool
		sj   string
		want bool
	}{
		{&Request{era: eraModern}, nil, `[1,2]`, true},
		{&Request{era: eraModern}, typedNullable, `{"a":1}`, true},
		{r25, nil, ` {"a":1}`, true},
		{r25, typedObject, `{"a":1}`, true},
		{r25, typedNullable, `{"a":1}`, false},
		{r25, &serverTool{raw: true}, `{"a":1}`, true},
		{r25, nil, `[1,2]`, false},
		{r0326, nil, `{"a":1}`, false},
		{r0326, typedObject, `{"a":1}`, false},
	} {
		if got := c.r.era.structuredContent(c.r.ProtocolVersion, c.st, []byte(c.sj)); got != c.want {
			t.Errorf("%s structuredContent(%+v, %s) = %v", c.r.ProtocolVersion, c.st, c.sj, got)
		}
	}
	srv := NewServer(Implementation{Name: "e", Version: "1"}, nil)
	AddTool(srv, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, struct{}) (string, error) { return "", nil })
	if eraModern.capabilities(srv, false).Tools.ListChanged || !eraModern.capabilities(srv, true).Tools.ListChanged ||
		!eraLegacy.capabilities(srv, false).Tools.ListChanged {
		t.Error("list changes: modern only when live, legacy always (GET stream)")
	}
	if eraModern.callsUnlisted() || !eraLegacy.callsUnlisted() {
		t.Error("unlisted advanced tools: legacy calls only")
	}
	for _, c := range []struct {
		v                                                  legacyRevision
		batches, elicits, elicitsURL, polls, structuredOut bool
	}{
		{ProtocolVersion20250326, true, false, false, false, false},
		{ProtocolVersion20250618, false, true, false, false, true},
		{ProtocolVersion20251125, false, true, true, true, true},
	} {
		if c.v.batches() != c.batches || c.v.elicits() != c.elicits || c.v.elicitsURL() != c.elicitsURL ||
			c.v.polls() != c.polls || c.v.structuredOutput() != c.structuredOut {
			t.Errorf("revision %s: batches %v elicits %v URL %v polls %v structured output %v", c.v,
				c.v.batches(), c.v.elicits(), c.v.elicitsURL(), c.v.polls(), c.v.structuredOutput())
		}
	}
	if !eraModern.strictForms() || eraLegacy.strictForms() {
		t.Error("strictForms: modern only")
	}
	st := &serverTool{needsSession: true}
	if eraModern.serves(st) || !eraLegacy.serves(st) {
		t.Error("a session-only tool is served to legacy clients only")
	}
	h := http.Header{"X": {"y"}}
	if eraModern.paramHeaders(h) == nil || eraLegacy.paramHeaders(h) != nil {
		t.Error("Mcp-Param-* headers are checked on modern requests only")
	}
	if b := eraLegacy.appendResultHead(nil, nil, "tools/list", nil); len(b) != 0 {
		t.Errorf("legacy result head %q, want nothing", b)
	}
	if b := eraLegacy.appendMeta(nil, nil, nil); len(b) != 0 {
		t.Errorf("legacy _meta without user meta: %q", b)
	}
	if _, err := eraLegacy.inputRequired(t.Context(), nil, nil, &InputRequiredError{State: "s"}, stateBinding{}); err == nil {
		t.Error("legacy input required must hand over to the bridge")
	} else if _, ok := err.(*bridgeNeeded); !ok {
		t.Errorf("legacy input required: %T, want *bridgeNeeded", err)
	}
}
