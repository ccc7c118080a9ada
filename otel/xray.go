package otel

import (
	"encoding/hex"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// maxXRayHeader bounds the X-Amzn-Trace-Id header the middleware parses:
// the fields AWS sets (Root, Parent, Sampled, Lineage, Self) fit in far
// less; a longer value is not a trace header of AWS's and is ignored.
const maxXRayHeader = 512

// xrayLink returns the span context of the request's X-Amzn-Trace-Id
// header (AWS X-Ray, "Tracing header":
// Root=1-{8 hex epoch}-{24 hex};Parent={16 hex};Sampled={0|1}), the
// header the Lambda adapter sets to the invocation's trace id
// (Lambda-Runtime-Trace-Id), and reports whether it names a span. The
// trace id is the Root's 32 hex digits without the version and dashes,
// as the OpenTelemetry X-Ray propagator maps it, so the linked span is
// the function's segment in AWS's view.
func xrayLink(h http.Header) (trace.SpanContext, bool) {
	v := h["X-Amzn-Trace-Id"]
	if len(v) == 0 {
		return trace.SpanContext{}, false
	}
	return parseXRay(v[0])
}

// parseXRay parses an X-Amzn-Trace-Id value; fields are separated by ';'
// and may be in any order or surrounded by spaces; unknown fields are
// ignored. It needs Root and Parent, both well formed.
func parseXRay(s string) (trace.SpanContext, bool) {
	if len(s) > maxXRayHeader {
		return trace.SpanContext{}, false
	}
	var tid trace.TraceID
	var sid trace.SpanID
	var flags trace.TraceFlags
	var haveRoot, haveParent bool
	for s != "" {
		var field string
		field, s, _ = strings.Cut(s, ";")
		k, v, ok := strings.Cut(strings.TrimSpace(field), "=")
		if !ok {
			continue
		}
		switch k {
		case "Root":
			// 1-{8 hex}-{24 hex}
			if len(v) != 35 || v[0] != '1' || v[1] != '-' || v[10] != '-' {
				return trace.SpanContext{}, false
			}
			if !decodeHex(tid[:4], v[2:10]) || !decodeHex(tid[4:], v[11:]) {
				return trace.SpanContext{}, false
			}
			haveRoot = true
		case "Parent":
			if len(v) != 16 || !decodeHex(sid[:], v) {
				return trace.SpanContext{}, false
			}
			haveParent = true
		case "Sampled":
			if v == "1" {
				flags = trace.FlagsSampled
			}
		}
	}
	if !haveRoot || !haveParent {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true})
	return sc, sc.IsValid()
}

// decodeHex decodes the lowercase or uppercase hex digits src into dst,
// which has exactly half their length.
func decodeHex(dst []byte, src string) bool {
	if len(src) != 2*len(dst) {
		return false
	}
	_, err := hex.Decode(dst, []byte(src))
	return err == nil
}
