// Package docs_test keeps the repository's documentation true: every Go
// code block of README.md and docs/*.md compiles against the workspace's
// modules, every identifier the prose names exists, the README's Quick
// start is examples/calculator, the stated dependencies and module counts
// are measured, and the tutorials of docs/lambda.md and docs/gcf.md are
// built and run as a user would (docs/design.md, "Tests").
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/test/internal/repo"
)

// block is a fenced code block of a Markdown file.
type block struct {
	file string // relative to the repository root
	line int    // 1-based line of the opening fence
	lang string // the info string's first word ("go", "sh", ...)
	// mark is the snippet marker of the HTML comment on the line before the
	// fence, `<!-- snippet: KIND -->`, or "".
	mark string
	text string
}

func (b block) String() string { return b.file + ":" + strconv.Itoa(b.line) }

var snippetMark = regexp.MustCompile(`^<!--\s*snippet:\s*([a-z-]+)\b.*-->$`)

// blocks returns the fenced code blocks of a Markdown text in order.
func blocks(file, text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "```") {
			continue
		}
		fence := l[:strings.LastIndex(l, "`")+1]
		b := block{file: file, line: i + 1, lang: strings.Fields(strings.TrimLeft(l, "`") + " x")[0]}
		if strings.TrimLeft(l, "`") == "" {
			b.lang = ""
		}
		for j := i - 1; j >= 0; j-- {
			p := strings.TrimSpace(lines[j])
			if p == "" {
				continue
			}
			if m := snippetMark.FindStringSubmatch(p); m != nil {
				b.mark = m[1]
			}
			break
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
			body = append(body, lines[i])
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// inlineCode returns the inline code spans (`like this`) of a Markdown
// text outside fenced blocks and indented code, with their line numbers.
func inlineCode(text string) (spans []string, lineOf []int) {
	inFence := false
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			continue
		}
		if inFence || strings.HasPrefix(l, "    ") && !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "|") {
			continue
		}
		for {
			a := strings.Index(l, "`")
			if a < 0 {
				break
			}
			b := strings.Index(l[a+1:], "`")
			if b < 0 {
				break
			}
			spans = append(spans, l[a+1:a+1+b])
			lineOf = append(lineOf, i+1)
			l = l[a+1+b+1:]
		}
	}
	return spans, lineOf
}

// docFiles returns README.md and docs/*.md, relative to the root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	more, err := filepath.Glob(filepath.Join(repo.Root(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		files = append(files, filepath.Join("docs", filepath.Base(f)))
	}
	return files
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo.Root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the text of the Markdown section whose heading is title
// (any level), up to the next heading of the same or a higher level.
func section(text, title string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level == 0 || strings.TrimSpace(l[level:]) != title {
			continue
		}
		var out []string
		for _, m := range lines[i+1:] {
			if ml := len(m) - len(strings.TrimLeft(m, "#")); ml > 0 && ml <= level && strings.HasPrefix(m[ml:], " ") {
				break
			}
			out = append(out, m)
		}
		return strings.Join(out, "\n")
	}
	return ""
}

func TestBlocksParser(t *testing.T) {
	t.Parallel()
	text := "a\n<!-- snippet: body -->\n```go\nx := 1\n```\n\n```sh\nls\n```\n````go\npackage main\n```\n````\n"
	got := blocks("f.md", text)
	if len(got) != 3 {
		t.Fatalf("got %d blocks, want 3: %+v", len(got), got)
	}
	if got[0].lang != "go" || got[0].mark != "body" || got[0].text != "x := 1\n" || got[0].line != 3 {
		t.Errorf("block 0 = %+v", got[0])
	}
	if got[1].lang != "sh" || got[1].mark != "" {
		t.Errorf("block 1 = %+v", got[1])
	}
	if got[2].text != "package main\n```\n" {
		t.Errorf("a four-backtick fence keeps a three-backtick line: %q", got[2].text)
	}
	spans, _ := inlineCode("use `core.AddTool` and `req.Input`\n    `indented` code\n```\n`fenced`\n```\n")
	if strings.Join(spans, ",") != "core.AddTool,req.Input" {
		t.Errorf("inline spans = %q", spans)
	}
	if s := section("# A\n## B\nb\n### C\nc\n## D\nd\n", "B"); s != "b\n### C\nc" {
		t.Errorf("section B = %q", s)
	}
}
