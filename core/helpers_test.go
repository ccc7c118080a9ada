package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

const modernVersion = core.ProtocolVersion20260728

var testImpl = core.Implementation{Name: "test-server", Version: "1.0.0"}

// deleted marks a _meta key or param to remove.
type deletedT struct{}

var deleted = deletedT{}

func defaultMeta() map[string]any {
	return map[string]any{
		core.MetaProtocolVersion:    modernVersion,
		core.MetaClientCapabilities: map[string]any{},
		core.MetaClientInfo:         map[string]any{"name": "test-client", "version": "1.0.0"},
	}
}

// testReq is one HTTP POST carrying one JSON-RPC message.
type testReq struct {
	method string
	msg    map[string]any
	raw    []byte // when non-nil, the body as is
	hdr    http.Header
	ctx    context.Context
	noCL   bool // send without Content-Length
}

func baseHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	return h
}

// mreq builds a valid 2026-07-28 request: params with the default _meta, and
// the mirrored headers. id nil means a notification.
func mreq(id any, method string, params map[string]any) *testReq {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	p["_meta"] = defaultMeta()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": p}
	if id != nil {
		msg["id"] = id
	}
	h := baseHeader()
	h.Set(core.HeaderProtocolVersion, modernVersion)
	h.Set(core.HeaderMethod, method)
	switch method {
	case "tools/call", "prompts/get":
		if n, ok := p["name"].(string); ok {
			h.Set(core.HeaderName, core.EncodeHeaderValue(n))
		}
	case "resources/read":
		if u, ok := p["uri"].(string); ok {
			h.Set(core.HeaderName, core.EncodeHeaderValue(u))
		}
	}
	return &testReq{method: method, msg: msg, hdr: h}
}

// callReq is mreq for tools/call.
func callReq(id any, tool string, args any) *testReq {
	p := map[string]any{"name": tool}
	if args != nil {
		p["arguments"] = args
	}
	return mreq(id, "tools/call", p)
}

// lreq builds a legacy request (no _meta), with MCP-Protocol-Version set to
// version unless it is empty, and Mcp-Session-Id set to session unless empty.
func lreq(id any, method string, params map[string]any, version, session string) *testReq {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if id != nil {
		msg["id"] = id
	}
	h := baseHeader()
	if version != "" {
		h.Set(core.HeaderProtocolVersion, version)
	}
	if session != "" {
		h.Set(core.HeaderSessionID, session)
	}
	return &testReq{method: method, msg: msg, hdr: h}
}

// rawReq posts body as is with the given headers added to the defaults.
func rawReq(body string, hdr map[string]string) *testReq {
	h := baseHeader()
	for k, v := range hdr {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
	return &testReq{raw: []byte(body), hdr: h}
}

func (r *testReq) params() map[string]any { return r.msg["params"].(map[string]any) }

func (r *testReq) meta() map[string]any { return r.params()["_meta"].(map[string]any) }

// withMeta sets (or, with deleted, removes) a _meta key.
func (r *testReq) withMeta(k string, v any) *testReq {
	setMember(r.meta(), k, v)
	return r
}

func (r *testReq) withCaps(c any) *testReq { return r.withMeta(core.MetaClientCapabilities, c) }

// withParam sets (or removes) a member of params.
func (r *testReq) withParam(k string, v any) *testReq {
	setMember(r.params(), k, v)
	return r
}

// withMsg sets (or removes) a member of the message itself.
func (r *testReq) withMsg(k string, v any) *testReq {
	setMember(r.msg, k, v)
	return r
}

// setMember sets m[k] to v, or removes k when v is deleted.
func setMember(m map[string]any, k string, v any) {
	if v == deleted {
		delete(m, k)
	} else {
		m[k] = v
	}
}

// withHeader sets a header; an empty value removes it.
func (r *testReq) withHeader(k, v string) *testReq {
	if v == "" {
		r.hdr.Del(k)
	} else {
		r.hdr.Set(k, v)
	}
	return r
}

// withRawHeader sets a header value bypassing canonicalisation checks.
func (r *testReq) withRawHeader(k, v string) *testReq {
	r.hdr[http.CanonicalHeaderKey(k)] = []string{v}
	return r
}

func (r *testReq) withContext(ctx context.Context) *testReq { r.ctx = ctx; return r }

func (r *testReq) body() []byte {
	if r.raw != nil {
		return r.raw
	}
	b, err := json.Marshal(r.msg)
	if err != nil {
		panic(err)
	}
	return b
}

func (r *testReq) httpRequest(target string) *http.Request {
	hr := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(r.body()))
	if r.noCL {
		hr.ContentLength = -1
		hr.Body = io.NopCloser(bytes.NewReader(r.body()))
	}
	for k, v := range r.hdr {
		hr.Header[k] = append([]string(nil), v...)
	}
	if r.ctx != nil {
		hr = hr.WithContext(r.ctx)
	}
	return hr
}

// do serves the request with h through an httptest recorder.
func (r *testReq) do(t testing.TB, h http.Handler) *resp {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r.httpRequest("/mcp"))
	return parseResp(t, rec.Code, rec.Header(), rec.Body.Bytes())
}

// post sends the request to a live server at url.
func (r *testReq) post(t testing.TB, c *http.Client, url string) *resp {
	t.Helper()
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(r.body()))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.hdr {
		hr.Header[k] = append([]string(nil), v...)
	}
	res, err := c.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseResp(t, res.StatusCode, res.Header, b)
}

// decode decodes JSON with numbers as json.Number.
func decode(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	return v
}

// at walks decoded JSON by object keys and array indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func has(v any, path ...any) bool {
	last := path[len(path)-1].(string)
	m, ok := at(v, path[:len(path)-1]...).(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[last]
	return ok
}

// num returns an integer JSON number.
func num(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%v is not an integer", v)
	}
	return i
}

func str(v any) string { s, _ := v.(string); return s }

// keys returns the sorted keys of a decoded object.
func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// jsonEq reports whether two JSON texts are equal after decoding.
func jsonEq(t testing.TB, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decode(t, a), decode(t, b))
}

// toJSON marshals v or fails.
func toJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// textOf returns content[0].text of a tools/call result.
func textOf(res map[string]any) string { return str(at(res, "content", 0, "text")) }

// preflight sends h a CORS preflight of a POST to target from origin,
// asking for headers, and returns the answer.
func preflight(h http.Handler, target, origin, headers string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodOptions, target, nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", headers)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// mustPanic runs f and returns the panic message; it fails if f does not
// panic.
func mustPanic(t testing.TB, f func()) (msg string) {
	t.Helper()
	defer func() {
		p := recover()
		if p == nil {
			t.Errorf("no panic")
			return
		}
		msg = fmt.Sprint(p)
	}()
	f()
	return ""
}

// resp is a parsed HTTP response.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
	SSE    bool
	// Msgs holds the JSON-RPC messages: one for a JSON body, every data
	// event for an SSE body.
	Msgs []json.RawMessage
}

func parseResp(t testing.TB, status int, h http.Header, body []byte) *resp {
	t.Helper()
	r := &resp{Status: status, Header: h.Clone(), Body: body}
	ct := h.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		r.SSE = true
		evs, err := parseSSE(body)
		if err != nil {
			t.Fatalf("bad SSE body: %v\n%s", err, body)
		}
		r.Msgs = evs
	case strings.HasPrefix(ct, "application/json"):
		if !json.Valid(body) {
			t.Fatalf("response body is not valid JSON: %q", body)
		}
		r.Msgs = []json.RawMessage{body}
	}
	return r
}

// final returns the last message, decoded.
func (r *resp) final(t testing.TB) map[string]any {
	t.Helper()
	if len(r.Msgs) == 0 {
		t.Fatalf("HTTP %d: no JSON-RPC message in the response: %q", r.Status, r.Body)
	}
	m, ok := decode(t, r.Msgs[len(r.Msgs)-1]).(map[string]any)
	if !ok {
		t.Fatalf("final message is not an object: %s", r.Msgs[len(r.Msgs)-1])
	}
	return m
}

// finalRaw returns the last message as raw JSON.
func (r *resp) finalRaw(t testing.TB) json.RawMessage {
	t.Helper()
	if len(r.Msgs) == 0 {
		t.Fatalf("HTTP %d: no JSON-RPC message in the response: %q", r.Status, r.Body)
	}
	return r.Msgs[len(r.Msgs)-1]
}

// notes returns the messages before the final one, decoded.
func (r *resp) notes(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i := 0; i+1 < len(r.Msgs); i++ {
		out = append(out, decode(t, r.Msgs[i]).(map[string]any))
	}
	return out
}

// result returns the result object of a successful response (HTTP 200).
func (r *resp) result(t testing.TB) map[string]any {
	t.Helper()
	m := r.final(t)
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d, want 200: %s", r.Status, r.Body)
	}
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result object: %s", r.Body)
	}
	return res
}

// rpcError returns the error object of the final message.
func (r *resp) rpcError(t testing.TB) map[string]any {
	t.Helper()
	m := r.final(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("HTTP %d: no error object: %s", r.Status, r.Body)
	}
	return e
}

// wantError checks the HTTP status and the JSON-RPC error code.
func (r *resp) wantError(t testing.TB, status, code int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Errorf("HTTP status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	e := r.rpcError(t)
	if got := num(t, e["code"]); got != int64(code) {
		t.Errorf("error code = %d, want %d; body %s", got, code, r.Body)
	}
	if s, _ := e["message"].(string); s == "" {
		t.Errorf("error message is empty: %s", r.Body)
	}
	return e
}

// wantID checks the id of the final message: rawID is its JSON, or "" for
// absent (never null).
func (r *resp) wantID(t testing.TB, rawID string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.finalRaw(t), &m); err != nil {
		t.Fatal(err)
	}
	got, present := m["id"]
	switch {
	case rawID == "" && present:
		t.Errorf(`"id" is %s, want it absent; body %s`, got, r.Body)
	case rawID != "" && !present:
		t.Errorf(`"id" is absent, want %s; body %s`, rawID, r.Body)
	case rawID != "" && string(got) != rawID:
		t.Errorf(`"id" = %s, want %s`, got, rawID)
	}
}

// resultRaw returns the raw result member of the final message.
func (r *resp) resultRaw(t testing.TB) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.finalRaw(t), &m); err != nil {
		t.Fatal(err)
	}
	res, ok := m["result"]
	if !ok {
		t.Fatalf("no result: %s", r.Body)
	}
	return res
}

// handlerTransport serves HTTP requests with h in this process, without a
// network, so that the tests using it can run in a testing/synctest bubble
// (whose clock drives idle expiry, keep-alives and state TTLs). The round
// trip returns once h has written its header (or returned); the body then
// streams what h writes, so an SSE response arrives event by event. Closing
// the body, like a client that goes away, cancels the request's context.
type handlerTransport struct{ h http.Handler }

// handlerClient returns an HTTP client served by h in this process.
func handlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: handlerTransport{h}}
}

func (ht handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx)
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		defer cancel()
		defer pw.Close()
		defer w.WriteHeader(http.StatusOK) // a handler that wrote nothing: 200
		ht.h.ServeHTTP(w, sreq)
	}()
	<-w.ready
	return &http.Response{
		Status: fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: w.sent, ContentLength: -1,
		Body: &pipeBody{pr, cancel}, Request: req,
	}, nil
}

// pipeResponse is the ResponseWriter of handlerTransport.
type pipeResponse struct {
	header, sent http.Header
	status       int
	body         *io.PipeWriter
	ready        chan struct{} // closed by the first WriteHeader
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(status int) {
	if w.sent != nil {
		return
	}
	w.status, w.sent = status, w.header.Clone()
	close(w.ready)
}

func (w *pipeResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush does nothing: a write reaches the reader before it returns.
func (w *pipeResponse) Flush() {}

type pipeBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// servesLegacyVia is mcptest.ServesLegacy through c: it fails unless url
// answers a request in a new session, opens its GET stream and ends it with
// DELETE, within a bounded wait.
func servesLegacyVia(t *testing.T, c *http.Client, url, version string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl := &mcptest.Client{URL: url, HTTP: c}
	if _, err := cl.Initialize(ctx, version, nil); err != nil || cl.SessionID == "" {
		t.Fatalf("initialize: %v (session %q)", err, cl.SessionID)
	}
	if r, err := cl.LegacyCall(ctx, "ping", nil, nil); err != nil || r.Error != nil || r.Result == nil {
		t.Fatalf("ping in the session: %v %v", err, r)
	}
	g, err := cl.OpenGetStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if status, err := cl.Delete(ctx); err != nil || status != http.StatusNoContent {
		t.Fatalf("DELETE: %v HTTP %d, want 204", err, status)
	}
	if err := g.WaitEnd(ctx); err != nil {
		t.Fatalf("the GET stream outlived DELETE: %v", err)
	}
}

// rawArgs is a tools/call or prompts/get whose arguments are the given raw
// JSON (so that duplicate keys survive).
func rawArgs(t testing.TB, method, name, args string) *testReq {
	t.Helper()
	var r *testReq
	if method == "tools/call" {
		r = callReq(1, name, map[string]any{})
	} else {
		r = mreq(1, method, map[string]any{"name": name})
	}
	// json.Marshal keeps a RawMessage's duplicate keys.
	return r.withCaps(map[string]any{"elicitation": map[string]any{}}).withParam("arguments", json.RawMessage(args))
}

// bigObject returns a JSON object of n distinct string members.
func bigObject(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%06d":"v"`, i)
	}
	b.WriteByte('}')
	return b.String()
}
