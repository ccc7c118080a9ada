package mcptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// GetStream is the open GET stream of a legacy session.
type GetStream struct {
	// Resp is the 200 text/event-stream response.
	Resp *http.Response
	// Events receives the data of each event; it is closed when the stream
	// ends.
	Events chan string
	cancel context.CancelFunc
}

// Close ends the stream from the client's side.
func (g *GetStream) Close() {
	g.cancel()
	g.Resp.Body.Close()
}

// OpenGetStream opens the GET stream of the client's session. The stream
// lives until ctx ends, Close is called or the server ends it.
func (c *Client) OpenGetStream(ctx context.Context) (*GetStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	c.setSessionHeader(req.Header)
	resp, err := c.http().Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("mcptest: GET stream: HTTP %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	g := &GetStream{Resp: resp, Events: make(chan string, 64), cancel: cancel}
	go func() {
		defer close(g.Events)
		ReadSSE(resp.Body, func(data []byte) error {
			select {
			case g.Events <- string(data):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return g, nil
}

// setSessionHeader sets in h what a request in the client's session
// carries besides its body: the session id, the legacy version header and
// c.Header.
func (c *Client) setSessionHeader(h http.Header) {
	h.Set("Mcp-Session-Id", c.SessionID)
	for k, v := range c.legacyHeader() {
		h[k] = v
	}
	for k, v := range c.Header {
		h[k] = v
	}
}

// Delete ends the client's session with DELETE and returns the HTTP status.
func (c *Client) Delete(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.URL, nil)
	if err != nil {
		return 0, err
	}
	c.setSessionHeader(req.Header)
	resp, err := c.http().Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// ServesLegacy checks, within ctx, that the endpoint at url still serves
// legacy sessions end to end: a new session answers a request in the
// session, opens a GET stream, and ends with DELETE. Each step that waits on
// the server for longer than ctx allows fails with ctx's error: bound ctx to
// turn a server that hangs into a failure.
func ServesLegacy(ctx context.Context, url, version string) error {
	c := &Client{URL: url}
	if _, err := c.Initialize(ctx, version, nil); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if c.SessionID == "" {
		return errors.New("initialize: no session id")
	}
	r, err := c.LegacyCall(ctx, "ping", nil, nil)
	if err != nil {
		return fmt.Errorf("ping in the session: %w", err)
	}
	if r.Error != nil || r.Result == nil {
		return fmt.Errorf("ping in the session: %s", r.Messages)
	}
	g, err := c.OpenGetStream(ctx)
	if err != nil {
		return err
	}
	defer g.Close()
	status, err := c.Delete(ctx)
	if err != nil {
		return fmt.Errorf("DELETE: %w", err)
	}
	if status != http.StatusNoContent {
		return fmt.Errorf("DELETE: HTTP %d, want 204", status)
	}
	// DELETE on the instance that holds the stream ends it at once.
	if err := g.WaitEnd(ctx); err != nil {
		return fmt.Errorf("the GET stream outlived DELETE: %w", err)
	}
	return nil
}

// WaitEnd waits until the stream ends, discarding its events, or ctx ends.
func (g *GetStream) WaitEnd(ctx context.Context) error {
	for {
		select {
		case _, open := <-g.Events:
			if !open {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
