// Package probe sends single MCP requests over httpc and checks the
// answers: the legacy handshake, one-off exchanges, response checks.
package probe

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/test/bench/internal/httpc"
	"github.com/mcpfn/mcpfn/test/bench/internal/wire"
)

// CheckResponse checks the HTTP status and the JSON-RPC payload of resp as
// the answer to c sent with id. Notifications must be answered by 202 (200
// and 204 are tolerated).
func CheckResponse(c *wire.Call, resp httpc.Response, id int64) error {
	if c.Kind.IsNotification() {
		if resp.Status != 202 && resp.Status != 200 && resp.Status != 204 {
			return fmt.Errorf("%s: HTTP %d: %.200q", c.Kind, resp.Status, resp.Body)
		}
		return nil
	}
	if resp.Status != 200 {
		return fmt.Errorf("%s: HTTP %d: %.200q", c.Kind, resp.Status, resp.Body)
	}
	msg, err := wire.Extract(resp.ContentType, resp.Body, id)
	if err != nil {
		return fmt.Errorf("%s: %v", c.Kind, err)
	}
	return c.Verify(msg, id)
}

// Handshake performs the legacy initialize + notifications/initialized
// exchange on conn and returns the session id, if the server issued one.
func Handshake(conn *httpc.Conn, id int64) (string, error) {
	ic := &wire.Call{Kind: wire.Initialize}
	ic.Prepare()
	resp, err := conn.Do(ic.Headers(), ic.AppendBody(nil, id))
	if err != nil {
		return "", err
	}
	if err := CheckResponse(ic, resp, id); err != nil {
		return "", err
	}
	sid := resp.SessionID
	note := &wire.Call{Kind: wire.Initialized}
	note.Prepare()
	resp, err = conn.Do(note.Headers()+SessionHeader(sid), note.AppendBody(nil, 0))
	if err != nil {
		return "", err
	}
	if err := CheckResponse(note, resp, 0); err != nil {
		return "", err
	}
	return sid, nil
}

// SessionHeader returns the Mcp-Session-Id header line for sid, or "".
func SessionHeader(sid string) string {
	if sid == "" {
		return ""
	}
	return "Mcp-Session-Id: " + sid + "\r\n"
}

// Exchange sends c once with the given session id (may be empty) on a fresh
// connection to addr and returns printable forms of the request and the
// response, and the result of checking the response.
func Exchange(addr string, c *wire.Call, sid string, id int64) (req, resp string, err error) {
	conn := httpc.New(addr, "/mcp", 10*time.Second)
	defer conn.Close()
	body := c.AppendBody(nil, id)
	hdr := c.Headers() + SessionHeader(sid)
	req = "POST /mcp\nContent-Type: application/json\nAccept: application/json, text/event-stream\n" +
		strings.ReplaceAll(hdr, "\r\n", "\n") + "\n" + string(body)
	r, err := conn.Do(hdr, body)
	if err != nil {
		return req, "", fmt.Errorf("%s: %v", c.Kind, err)
	}
	resp = fmt.Sprintf("HTTP %d, Content-Type: %s", r.Status, r.ContentType)
	if r.SessionID != "" {
		resp += ", Mcp-Session-Id: " + r.SessionID
	}
	b := string(r.Body)
	if len(b) > 600 {
		b = b[:600] + "…"
	}
	resp += "\n\n" + strings.TrimRight(b, "\n")
	return req, resp, CheckResponse(c, r, id)
}

// Report is the outcome of Conform.
type Report struct {
	Modern, Legacy bool     // answers each era correctly
	Problems       []string // what failed
	Samples        []Sample
}

// Sample is one printable request/response pair.
type Sample struct {
	Title, Request, Response string
}

// Conform sends each kind of request once to the server at addr: modern
// server/discover, tools/call add, echo and payload (payloadN bytes), and
// the legacy handshake followed by the three tools/calls.
func Conform(addr string, payloadN int) Report {
	var rep Report
	rep.Modern = true
	modern := []*wire.Call{
		{Kind: wire.Discover, Modern: true},
		{Kind: wire.Add, Modern: true, A: 2, B: 3},
		{Kind: wire.Echo, Modern: true, Text: wire.DefaultEchoText},
		{Kind: wire.Payload, Modern: true, N: payloadN},
	}
	for i, c := range modern {
		c.Prepare()
		req, resp, err := Exchange(addr, c, "", int64(100+i))
		if i < 2 {
			rep.Samples = append(rep.Samples, Sample{Title: "modern " + c.Kind.String(), Request: req, Response: resp})
		}
		if err != nil {
			rep.Modern = false
			rep.Problems = append(rep.Problems, "modern "+err.Error())
		}
	}

	rep.Legacy = true
	conn := httpc.New(addr, "/mcp", 10*time.Second)
	defer conn.Close()
	sid, err := Handshake(conn, 1)
	if err != nil {
		rep.Legacy = false
		rep.Problems = append(rep.Problems, "legacy handshake: "+err.Error())
		return rep
	}
	legacy := []*wire.Call{
		{Kind: wire.Add, A: 2, B: 3},
		{Kind: wire.Echo, Text: wire.DefaultEchoText},
		{Kind: wire.Payload, N: payloadN},
	}
	for i, c := range legacy {
		c.Prepare()
		req, resp, err := Exchange(addr, c, sid, int64(200+i))
		if i == 0 {
			rep.Samples = append(rep.Samples, Sample{Title: "legacy tools/call add (after initialize)", Request: req, Response: resp})
		}
		if err != nil {
			rep.Legacy = false
			rep.Problems = append(rep.Problems, "legacy "+err.Error())
		}
	}
	return rep
}
