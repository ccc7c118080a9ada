package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// writeOut writes the command's output: doc, made terminal-safe, as one
// JSON document; or, for people, what text writes.
func writeOut(stdout io.Writer, human bool, doc json.RawMessage, text func(*bufio.Writer, json.RawMessage)) int {
	if !human {
		out := append([]byte(nil), safeJSON(doc)...)
		if _, err := stdout.Write(append(out, '\n')); err != nil {
			return exitFailure
		}
		return exitOK
	}
	w := bufio.NewWriter(stdout)
	text(w, doc)
	if err := w.Flush(); err != nil {
		return exitFailure
	}
	return exitOK
}

// parsePromptArgs reads the arguments of get: name=value words, or one
// JSON object whose values are strings (2026-07-28 server/prompts §Getting
// a Prompt). In the object, numbers and booleans are taken as their JSON
// text, so that {"count":3} means "3".
func parsePromptArgs(words []string) (map[string]string, error) {
	if s := strings.TrimSpace(words[0]); len(words) > 1 || !strings.HasPrefix(s, "{") {
		out := make(map[string]string, len(words))
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf(`prompt argument %q is not NAME=VALUE (or give one JSON object, such as {"name":"value"})`, w)
			}
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("prompt argument %q is given twice", k)
			}
			out[k] = v
		}
		return out, nil
	}
	s := words[0]
	if err := jsonObjectError("the prompt arguments", s); err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	json.Unmarshal([]byte(s), &obj)
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		var str string
		if json.Unmarshal(v, &str) == nil {
			out[k] = str
			continue
		}
		var x any
		json.Unmarshal(v, &x)
		switch x.(type) {
		case float64, bool:
			out[k] = string(v)
		default:
			return nil, fmt.Errorf("prompt argument %q must be a string, not %s", k, v)
		}
	}
	return out, nil
}

var clientInfo = clientImpl()

// maxPages bounds the pages a list command follows.
const maxPages = 1000

// listAll returns every entry of a list, across all pages, as the server
// sent it: member is "tools", "resources", "resourceTemplates" or
// "prompts". Tools are those the client keeps (see client.ListToolsPage).
func listAll(ctx context.Context, c *client.Conn, member string) ([]json.RawMessage, error) {
	raws := []json.RawMessage{}
	var cursor *string
	for range maxPages {
		var raw json.RawMessage
		var next *string
		var err error
		switch member {
		case "tools":
			var page *client.ToolsPage
			if page, err = c.ListToolsPage(ctx, cursor, nil); err == nil {
				raws, next = append(raws, page.Raw...), page.NextCursor
			}
		case "resources":
			var page *mcp.ListResourcesResult
			if page, err = c.ListResources(ctx, cursor, &client.CallOptions{RawResult: &raw}); err == nil {
				next = page.NextCursor
			}
		case "resourceTemplates":
			var page *mcp.ListResourceTemplatesResult
			if page, err = c.ListResourceTemplates(ctx, cursor, &client.CallOptions{RawResult: &raw}); err == nil {
				next = page.NextCursor
			}
		case "prompts":
			var page *mcp.ListPromptsResult
			if page, err = c.ListPrompts(ctx, cursor, &client.CallOptions{RawResult: &raw}); err == nil {
				next = page.NextCursor
			}
		}
		if err != nil {
			return nil, err
		}
		if raw != nil {
			// The entries as sent: the member of the raw page.
			var m map[string]json.RawMessage
			var entries []json.RawMessage
			if json.Unmarshal(raw, &m) == nil {
				json.Unmarshal(m[member], &entries)
			}
			raws = append(raws, entries...)
		}
		if next == nil {
			return raws, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("%s: more than %d pages", member, maxPages)
}

// notOffered reports whether err is the -32601 (method not found) of a
// list method: the server does not offer that kind of thing at all (it
// declares no such capability; 2026-07-28 server/tools §Capabilities and
// likewise for resources and prompts).
func notOffered(err error) bool {
	var re *mcp.Error
	return errors.As(err, &re) && re.Code == mcp.CodeMethodNotFound
}

// cleartextRemote reports whether endpoint is a plain-http URL whose host is
// not a loopback one: a bearer credential sent there crosses the network in
// clear (2026-07-28 basic/authorization §Communication Security: HTTPS
// except on loopback). Hosts are not resolved: a name is remote unless it
// is localhost.
func cleartextRemote(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

// failure prints err, and the body or JSON-RPC error data it carries, all
// of it server text made safe for the terminal.
func failure(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "mcpfn:", multiLine(err.Error()))
	var he *client.HTTPError
	if errors.As(err, &he) && len(he.Body) > 0 {
		fmt.Fprintf(stderr, "mcpfn: response body: %s\n", multiLine(string(he.Body)))
	}
	var re *mcp.Error
	if errors.As(err, &re) && len(re.Data) > 0 {
		fmt.Fprintf(stderr, "mcpfn: error data: %s\n", compactJSON(re.Data))
	}
	return exitFailure
}
