package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// lockedWriter serialises the writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// elicitor answers elicitations: from --answer values, else on the
// terminal.
type elicitor struct {
	mu      sync.Mutex
	answers []string
	n       int
	in      io.Reader
	lines   chan string // lines of in, read by one goroutine from the first prompt on
	out     io.Writer
}

func (e *elicitor) elicit(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintf(e.out, "mcpfn: the server asks (%s): %s\n", oneLine(req.Mode), multiLine(req.Message))
	if req.Mode == "url" {
		fmt.Fprintf(e.out, "mcpfn: URL (not opened by mcpfn): %s\n", oneLine(req.URL))
	}
	if len(e.answers) > 0 {
		i := min(e.n, len(e.answers)-1)
		e.n++
		r, err := parseAnswer(e.answers[i])
		if err != nil {
			return nil, err
		}
		if req.Mode == "url" && r.Action == mcp.ActionAccept {
			r.Content = nil
		}
		fmt.Fprintf(e.out, "mcpfn: answered %s (--answer)\n", r.Action)
		return r, nil
	}
	if req.Mode == "url" {
		action, err := e.choose(ctx, "Open this URL yourself and continue? [y = accept, n = decline, c = cancel]: ")
		if err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: action}, nil
	}
	action, err := e.choose(ctx, "Answer? [y = fill the form, n = decline, c = cancel]: ")
	if err != nil {
		return nil, err
	}
	if action != mcp.ActionAccept {
		return &mcp.ElicitResult{Action: action}, nil
	}
	var schema struct {
		Properties map[string]struct {
			Type        string          `json:"type"`
			Description string          `json:"description"`
			Default     json.RawMessage `json:"default"`
			Enum        []any           `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(req.RequestedSchema, &schema)
	content := map[string]any{}
	// The fields in the server's order (the form's order, as it wrote them).
	for _, n := range orderedNames(req.RequestedSchema, schema.Properties) {
		p := schema.Properties[n]
		fmt.Fprintf(e.out, "  %s (%s)", oneLine(n), oneLine(p.Type))
		if p.Description != "" {
			fmt.Fprintf(e.out, " - %s", oneLine(p.Description))
		}
		if len(p.Enum) > 0 {
			enum, _ := json.Marshal(p.Enum)
			fmt.Fprintf(e.out, " %s", compactJSON(enum))
		}
		if p.Default != nil {
			fmt.Fprintf(e.out, " [default %s]", compactJSON(p.Default))
		}
		fmt.Fprint(e.out, ": ")
		v, err := e.line(ctx)
		if err != nil {
			return nil, err
		}
		if v == "" {
			continue // defaults are filled in by the client
		}
		switch p.Type {
		case "integer", "number", "boolean":
			var x any
			if json.Unmarshal([]byte(v), &x) == nil {
				content[n] = x
				continue
			}
		}
		content[n] = v
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}

// choose asks the user prompt and returns the action the answer picks: y
// or yes accepts, n or no declines, anything else cancels.
func (e *elicitor) choose(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(e.out, prompt)
	v, err := e.line(ctx)
	if err != nil {
		return "", err
	}
	switch v {
	case "y", "yes":
		return mcp.ActionAccept, nil
	case "n", "no":
		return mcp.ActionDecline, nil
	}
	return mcp.ActionCancel, nil
}

// line reads the user's next line, or gives up when ctx ends (--timeout):
// one goroutine reads stdin for the life of the process, so a prompt left
// unanswered does not hold the command.
func (e *elicitor) line(ctx context.Context) (string, error) {
	if e.lines == nil {
		e.lines = make(chan string)
		go func(r *bufio.Reader) {
			defer close(e.lines)
			for {
				s, err := r.ReadString('\n')
				if s != "" || err == nil {
					e.lines <- strings.TrimSpace(s)
				}
				if err != nil {
					return
				}
			}
		}(bufio.NewReader(e.in))
	}
	select {
	case s := <-e.lines:
		return s, nil // "" at the end of stdin
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
