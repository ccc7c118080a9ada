package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// The text output, for people at a terminal. Everything the server sent is
// written through oneLine (table cells, summaries) or textBlock (multi-line
// text), so that no control character reaches the terminal raw (term.go);
// the full result is one --json away.

// writeRaw writes a JSON document indented, made terminal-safe.
func writeRaw(w *bufio.Writer, doc json.RawMessage) {
	writeJSON(w, doc, "")
}

// writeJSON writes raw indented by prefix, made terminal-safe.
func writeJSON(w *bufio.Writer, raw json.RawMessage, prefix string) {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, prefix, "  ") != nil {
		writeText(w, string(raw), prefix)
		return
	}
	w.WriteString(prefix)
	w.Write(safeJSON(buf.Bytes()))
	w.WriteByte('\n')
}

// writeText writes server text: controls escaped but newlines and tabs,
// each line after prefix.
func writeText(w *bufio.Writer, s, prefix string) {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for l := range strings.SplitSeq(s, "\n") {
		w.WriteString(prefix)
		w.Write(appendEscaped(nil, l, "\t"))
		w.WriteByte('\n')
	}
}

// firstLine is the first line of s, trimmed.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// summary is a table's description cell: the title, the first line of the
// description, or both.
func summary(title, descr string) string {
	d := firstLine(descr)
	switch {
	case title == "":
		return d
	case d == "" || d == title:
		return title
	}
	return title + " - " + d
}

// column is one column of a table.
type column struct {
	head string
	// max bounds the column's width (0: none); the last column is cut to
	// the terminal's width instead.
	max int
}

// writeTable writes rows under a header, in columns two spaces apart. The
// cells are server text, escaped here. The last column is cut to the
// terminal's width; width 0 (not known: --human on a pipe, for a pager)
// cuts nothing.
func writeTable(w *bufio.Writer, width int, cols []column, rows [][]string) {
	cells := make([][]string, len(rows))
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = utf8.RuneCountInString(c.head)
	}
	for r, row := range rows {
		cells[r] = make([]string, len(cols))
		for i := range cols {
			s := oneLine(row[i])
			if m := cols[i].max; m > 0 && i < len(cols)-1 {
				s = cut(s, m)
			}
			cells[r][i] = s
			widths[i] = max(widths[i], utf8.RuneCountInString(s))
		}
	}
	used := 0
	for i := range len(cols) - 1 {
		used += widths[i] + 2
	}
	last := max(width-used-1, 20)
	line := func(row []string) {
		var b strings.Builder
		for i, s := range row {
			if i == len(row)-1 {
				if width > 0 {
					s = cut(s, last)
				}
				b.WriteString(s)
				break
			}
			b.WriteString(s)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s)+2))
		}
		w.WriteString(strings.TrimRight(b.String(), " "))
		w.WriteByte('\n')
	}
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.head
	}
	line(head)
	for _, row := range cells {
		line(row)
	}
}

// cut shortens s to n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// argumentList lists the arguments of a JSON Schema object: required
// ones as they are, in the order of "required", then optional ones in
// brackets, in the order of "properties".
func argumentList(schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	var out []string
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok || len(s.Properties) == 0 {
			out = append(out, r)
		}
	}
	for _, p := range orderedNames(schema, s.Properties) {
		if !slices.Contains(s.Required, p) {
			out = append(out, "["+p+"]")
		}
	}
	return strings.Join(out, " ")
}

// writeTools is the tools command for people.
func writeTools(w *bufio.Writer, width int, raws []json.RawMessage) {
	if len(raws) == 0 {
		w.WriteString("no tools\n")
		return
	}
	rows := make([][]string, 0, len(raws))
	for _, raw := range raws {
		var t mcp.Tool
		if t.UnmarshalJSON(raw) != nil {
			continue
		}
		title := t.Title
		if title == "" && t.Annotations != nil {
			title = t.Annotations.Title
		}
		schema, _ := t.InputSchema.(json.RawMessage)
		rows = append(rows, []string{t.Name, argumentList(schema), summary(title, t.Description)})
	}
	writeTable(w, width, []column{{head: "TOOL"}, {head: "ARGUMENTS", max: 40}, {head: "DESCRIPTION"}}, rows)
}

// tableRows decodes each of raws as a T and returns row of each, skipping
// those that do not decode.
func tableRows[T any](raws []json.RawMessage, row func(*T) []string) [][]string {
	rows := make([][]string, 0, len(raws))
	for _, raw := range raws {
		var v T
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		rows = append(rows, row(&v))
	}
	return rows
}

// writeResources is the resources command for people.
func writeResources(w *bufio.Writer, width int, resources, templates []json.RawMessage) {
	if len(resources) == 0 && len(templates) == 0 {
		w.WriteString("no resources\n")
		return
	}
	if len(resources) > 0 {
		rows := tableRows(resources, func(r *mcp.Resource) []string {
			return []string{r.URI, r.Name, r.MIMEType, summary(r.Title, r.Description)}
		})
		writeTable(w, width, []column{{head: "URI"}, {head: "NAME", max: 32}, {head: "MIME TYPE", max: 32}, {head: "DESCRIPTION"}}, rows)
	}
	if len(templates) > 0 {
		if len(resources) > 0 {
			w.WriteByte('\n')
		}
		rows := tableRows(templates, func(r *mcp.ResourceTemplate) []string {
			return []string{r.URITemplate, r.Name, r.MIMEType, summary(r.Title, r.Description)}
		})
		writeTable(w, width, []column{{head: "URI TEMPLATE"}, {head: "NAME", max: 32}, {head: "MIME TYPE", max: 32}, {head: "DESCRIPTION"}}, rows)
	}
}

// writePrompts is the prompts command for people.
func writePrompts(w *bufio.Writer, width int, raws []json.RawMessage) {
	if len(raws) == 0 {
		w.WriteString("no prompts\n")
		return
	}
	rows := tableRows(raws, func(p *mcp.Prompt) []string {
		var args []string
		for _, a := range p.Arguments {
			if a.Required {
				args = append(args, a.Name)
			}
		}
		for _, a := range p.Arguments {
			if !a.Required {
				args = append(args, "["+a.Name+"]")
			}
		}
		return []string{p.Name, strings.Join(args, " "), summary(p.Title, p.Description)}
	})
	writeTable(w, width, []column{{head: "PROMPT"}, {head: "ARGUMENTS", max: 40}, {head: "DESCRIPTION"}}, rows)
}

// writeDiscover is the discover command for people: who the server is,
// the revision in use, what it offers and its instructions.
func writeDiscover(w *bufio.Writer, c *client.Conn, doc json.RawMessage) {
	var d struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		ServerInfo        *mcp.Implementation        `json:"serverInfo"`
		Instructions      string                     `json:"instructions"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(doc, &d)
	if d.ServerInfo == nil {
		json.Unmarshal(d.Meta[mcp.MetaServerInfo], &d.ServerInfo)
	}
	field := func(name, value string) {
		w.WriteString(name)
		w.WriteString(strings.Repeat(" ", 14-len(name)))
		w.WriteString(value)
		w.WriteByte('\n')
	}
	if s := d.ServerInfo; s != nil {
		v := oneLine(s.Name)
		if s.Version != "" {
			v += " " + oneLine(s.Version)
		}
		if s.Title != "" {
			v += " (" + oneLine(s.Title) + ")"
		}
		field("server", v)
	}
	proto := oneLine(c.ProtocolVersion())
	if len(d.SupportedVersions) > 0 {
		vs := make([]string, len(d.SupportedVersions))
		for i, v := range d.SupportedVersions {
			vs[i] = oneLine(v)
		}
		proto += " (the server speaks " + strings.Join(vs, ", ") + ")"
	}
	field("protocol", proto)
	if id := c.SessionID(); id != "" {
		field("session", oneLine(id))
	}
	names := make([]string, 0, len(d.Capabilities))
	for k := range d.Capabilities {
		names = append(names, k)
	}
	slices.Sort(names)
	caps := make([]string, 0, len(names))
	for _, k := range names {
		var sub map[string]json.RawMessage
		json.Unmarshal(d.Capabilities[k], &sub)
		var on []string
		for s, v := range sub {
			if k == "experimental" || k == "extensions" || string(v) == "true" {
				on = append(on, oneLine(s))
			}
		}
		slices.Sort(on)
		c := oneLine(k)
		if len(on) > 0 {
			c += " (" + strings.Join(on, ", ") + ")"
		}
		caps = append(caps, c)
	}
	if len(caps) == 0 {
		caps = []string{"none"}
	}
	field("capabilities", strings.Join(caps, ", "))
	if d.Instructions != "" {
		w.WriteString("instructions:\n")
		writeText(w, d.Instructions, "  ")
	}
}

// byteSize is n bytes for people.
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// writeBlock writes one content block (a tool result's, a prompt
// message's) after prefix: text as it is, media and resources summarised.
func writeBlock(w *bufio.Writer, raw json.RawMessage, prefix string) {
	c, err := mcp.UnmarshalContent(raw)
	if err != nil {
		var t struct {
			Type string `json:"type"`
		}
		json.Unmarshal(raw, &t)
		w.WriteString(prefix + "[content of type " + oneLine(strconv.Quote(t.Type)) + "; --json shows it]\n")
		return
	}
	switch c := c.(type) {
	case *mcp.TextContent:
		writeText(w, c.Text, prefix)
	case *mcp.ImageContent:
		w.WriteString(prefix + "[image " + oneLine(c.MIMEType) + ", " + byteSize(len(c.Data)) + "]\n")
	case *mcp.AudioContent:
		w.WriteString(prefix + "[audio " + oneLine(c.MIMEType) + ", " + byteSize(len(c.Data)) + "]\n")
	case *mcp.ResourceLink:
		s := "[resource link " + oneLine(c.URI)
		if c.Name != "" {
			s += " " + oneLine(strconv.Quote(c.Name))
		}
		if c.MIMEType != "" {
			s += ", " + oneLine(c.MIMEType)
		}
		w.WriteString(prefix + s + "]\n")
	case *mcp.EmbeddedResource:
		writeContents(w, c.Resource, prefix, true)
	}
}

// writeContents writes a resource's contents: a header naming it (when
// header is set, or always for binary contents), then its text, or a
// summary of its blob.
func writeContents(w *bufio.Writer, rc mcp.ResourceContents, prefix string, header bool) {
	mime := ""
	if rc.MIMEType != "" {
		mime = ", " + oneLine(rc.MIMEType)
	}
	if rc.Blob != nil {
		w.WriteString(prefix + "[resource " + oneLine(rc.URI) + mime + ", " + byteSize(len(rc.Blob)) + " of binary data]\n")
		return
	}
	if header {
		w.WriteString(prefix + "[resource " + oneLine(rc.URI) + mime + "]\n")
	}
	writeText(w, rc.Text, prefix)
}

// writeCallResult is a tools/call result for people: its content blocks,
// then its structured content as indented JSON. Nothing is shown twice: a
// text block that only repeats the structured content as JSON (what
// servers send for clients of 2025-03-26) is left out, and structured
// content that is a JSON string some text block holds is not repeated.
func writeCallResult(w *bufio.Writer, doc json.RawMessage) {
	var r struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	}
	json.Unmarshal(doc, &r)
	var structured []byte
	if len(r.StructuredContent) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, r.StructuredContent) == nil {
			structured = buf.Bytes()
		}
	}
	// Structured content that is a JSON string is shown once, as the
	// text block that carries the same string.
	var str string
	if structured != nil && json.Unmarshal(structured, &str) == nil {
		for _, raw := range r.Content {
			var t struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(raw, &t) == nil && t.Type == "text" && t.Text == str {
				structured = nil
				break
			}
		}
	}
	shown := 0
	for _, raw := range r.Content {
		if structured != nil {
			var t struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			var buf bytes.Buffer
			if json.Unmarshal(raw, &t) == nil && t.Type == "text" && json.Compact(&buf, []byte(t.Text)) == nil && bytes.Equal(buf.Bytes(), structured) {
				continue
			}
		}
		writeBlock(w, raw, "")
		shown++
	}
	if structured != nil {
		writeJSON(w, structured, "")
		shown++
	}
	if shown == 0 {
		w.WriteString("(no content)\n")
	}
}

// writeReadResult is a resources/read result for people: the text of a
// single text resource as it is; otherwise each content under a header.
func writeReadResult(w *bufio.Writer, doc json.RawMessage) {
	var r mcp.ReadResourceResult
	json.Unmarshal(doc, &r)
	if len(r.Contents) == 0 {
		w.WriteString("(no contents)\n")
		return
	}
	for _, c := range r.Contents {
		writeContents(w, c, "", len(r.Contents) > 1)
	}
}

// writePromptResult is a prompts/get result for people: its description,
// then each message under its role.
func writePromptResult(w *bufio.Writer, doc json.RawMessage) {
	var r struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(doc, &r)
	if r.Description != "" {
		writeText(w, r.Description, "")
		w.WriteByte('\n')
	}
	for _, m := range r.Messages {
		w.WriteString(oneLine(m.Role) + ":\n")
		writeBlock(w, m.Content, "  ")
	}
	if len(r.Messages) == 0 {
		w.WriteString("(no messages)\n")
	}
}

// writeLog shows a notifications/message on stderr, on one line.
func writeLog(stderr io.Writer, params json.RawMessage) {
	var m struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if json.Unmarshal(params, &m) != nil {
		return
	}
	var data string
	if json.Unmarshal(m.Data, &data) == nil {
		data = oneLine(data)
	} else {
		data = compactJSON(m.Data)
	}
	logger := ""
	if m.Logger != "" {
		logger = " " + oneLine(m.Logger) + ":"
	}
	fmt.Fprintf(stderr, "mcpfn: log [%s]%s %s\n", oneLine(m.Level), logger, data)
}

// writeProgress shows a notifications/progress on stderr, on one line.
func writeProgress(stderr io.Writer, p client.Progress) {
	s := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		s += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		s += " " + oneLine(p.Message)
	}
	fmt.Fprintf(stderr, "mcpfn: progress %s\n", s)
}

// writeTaskStatus shows a change of a task's status (the Tasks extension):
// "mcpfn: task ID: STATUS[: statusMessage]".
func writeTaskStatus(stderr io.Writer, t *mcp.DetailedTask) {
	s := string(t.Status)
	if t.StatusMessage != "" {
		s += ": " + oneLine(t.StatusMessage)
	}
	fmt.Fprintf(stderr, "mcpfn: task %s: %s\n", oneLine(t.TaskID), s)
}
