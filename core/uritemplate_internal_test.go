package core

import (
	"maps"
	"strings"
	"testing"
)

// rfc6570 are expansion examples of RFC 6570 §3.2, every operator at every
// level (Levels 1 to 4, the variables of §3.2: var "value", hello "Hello
// World!", path "/foo/bar", list ("red", "green", "blue"), keys (semi ";",
// dot ".", comma ","), x "1024", y "768", empty ""), each with what
// matching its expansion recovers. A prefix-modified variable recovers its
// prefix; a list, its items joined with commas.
var rfc6570 = []struct {
	template, expansion string
	want                map[string]string
}{
	// Level 1: simple string expansion.
	{"{var}", "value", map[string]string{"var": "value"}},
	{"{hello}", "Hello%20World%21", map[string]string{"hello": "Hello World!"}},
	// Level 2: reserved and fragment expansion.
	{"{+var}", "value", map[string]string{"var": "value"}},
	{"{+hello}", "Hello%20World!", map[string]string{"hello": "Hello World!"}},
	{"{+path}/here", "/foo/bar/here", map[string]string{"path": "/foo/bar"}},
	{"here?ref={+path}", "here?ref=/foo/bar", map[string]string{"path": "/foo/bar"}},
	{"X{#var}", "X#value", map[string]string{"var": "value"}},
	{"X{#hello}", "X#Hello%20World!", map[string]string{"hello": "Hello World!"}},
	// Level 3: several variables, and the other operators.
	{"map?{x,y}", "map?1024,768", map[string]string{"x": "1024", "y": "768"}},
	{"{x,hello,y}", "1024,Hello%20World%21,768", map[string]string{"x": "1024", "hello": "Hello World!", "y": "768"}},
	{"{+x,hello,y}", "1024,Hello%20World!,768", map[string]string{"x": "1024", "hello": "Hello World!", "y": "768"}},
	{"{+path,x}/here", "/foo/bar,1024/here", map[string]string{"path": "/foo/bar", "x": "1024"}},
	{"{#x,hello,y}", "#1024,Hello%20World!,768", map[string]string{"x": "1024", "hello": "Hello World!", "y": "768"}},
	{"{#path,x}/here", "#/foo/bar,1024/here", map[string]string{"path": "/foo/bar", "x": "1024"}},
	{"X{.var}", "X.value", map[string]string{"var": "value"}},
	{"X{.x,y}", "X.1024.768", map[string]string{"x": "1024", "y": "768"}},
	{"{/var}", "/value", map[string]string{"var": "value"}},
	{"{/var,x}/here", "/value/1024/here", map[string]string{"var": "value", "x": "1024"}},
	{"{;x,y}", ";x=1024;y=768", map[string]string{"x": "1024", "y": "768"}},
	{"{;x,y,empty}", ";x=1024;y=768;empty", map[string]string{"x": "1024", "y": "768", "empty": ""}},
	{"{?x,y}", "?x=1024&y=768", map[string]string{"x": "1024", "y": "768"}},
	{"{?x,y,empty}", "?x=1024&y=768&empty=", map[string]string{"x": "1024", "y": "768", "empty": ""}},
	{"?fixed=yes{&x}", "?fixed=yes&x=1024", map[string]string{"x": "1024"}},
	{"{&x,y,empty}", "&x=1024&y=768&empty=", map[string]string{"x": "1024", "y": "768", "empty": ""}},
	// Level 4: prefix modifiers and exploded lists.
	{"{var:3}", "val", map[string]string{"var": "val"}},
	{"{var:30}", "value", map[string]string{"var": "value"}},
	{"{list}", "red,green,blue", map[string]string{"list": "red,green,blue"}},
	{"{list*}", "red,green,blue", map[string]string{"list": "red,green,blue"}},
	{"{keys}", "semi,%3B,dot,.,comma,%2C", map[string]string{"keys": "semi,;,dot,.,comma,,"}},
	{"{+path:6}/here", "/foo/b/here", map[string]string{"path": "/foo/b"}},
	{"{+list}", "red,green,blue", map[string]string{"list": "red,green,blue"}},
	{"{#path:6}/here", "#/foo/b/here", map[string]string{"path": "/foo/b"}},
	{"X{.var:3}", "X.val", map[string]string{"var": "val"}},
	{"X{.list}", "X.red,green,blue", map[string]string{"list": "red,green,blue"}},
	{"X{.list*}", "X.red.green.blue", map[string]string{"list": "red,green,blue"}},
	{"{/var:1,var}", "/v/value", map[string]string{"var": "value"}},
	{"{/list}", "/red,green,blue", map[string]string{"list": "red,green,blue"}},
	{"{/list*}", "/red/green/blue", map[string]string{"list": "red,green,blue"}},
	{"{/list*,path:4}", "/red/green/blue/%2Ffoo", map[string]string{"list": "red,green,blue", "path": "/foo"}},
	{"{;hello:5}", ";hello=Hello", map[string]string{"hello": "Hello"}},
	{"{;list}", ";list=red,green,blue", map[string]string{"list": "red,green,blue"}},
	{"{;list*}", ";list=red;list=green;list=blue", map[string]string{"list": "red,green,blue"}},
	{"{?var:3}", "?var=val", map[string]string{"var": "val"}},
	{"{?list}", "?list=red,green,blue", map[string]string{"list": "red,green,blue"}},
	{"{?list*}", "?list=red&list=green&list=blue", map[string]string{"list": "red,green,blue"}},
	{"{&var:3}", "&var=val", map[string]string{"var": "val"}},
}

func TestURITemplateRFC6570(t *testing.T) {
	t.Parallel()
	for _, c := range rfc6570 {
		ut, err := compileURITemplate(c.template)
		if err != nil {
			t.Errorf("%s: %v", c.template, err)
			continue
		}
		got := ut.match(c.expansion)
		if !maps.Equal(got, c.want) {
			t.Errorf("%s matching %s = %v, want %v", c.template, c.expansion, got, c.want)
		}
		if !ut.matches(c.expansion) {
			t.Errorf("%s: matches(%s) = false", c.template, c.expansion)
		}
	}
}

// Resource templates as servers write them: what matches, what does not.
func TestURITemplateMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		template, uri string
		want          map[string]string // nil: no match
	}{
		{"file:///{path}", "file:///a.txt", map[string]string{"path": "a.txt"}},
		{"file:///{path}", "file:///dir/a.txt", nil},
		{"file:///{+path}", "file:///dir/a.txt", map[string]string{"path": "dir/a.txt"}},
		{"users://{id}/profile", "users://a%20b/profile", map[string]string{"id": "a b"}},
		{"users://{id}/profile", "users://42/profile/x", nil},
		{"search://items{?q,limit}", "search://items?q=cat&limit=5", map[string]string{"q": "cat", "limit": "5"}},
		{"search://items{?q,limit}", "search://items?limit=5&q=cat", map[string]string{"q": "cat", "limit": "5"}},
		{"search://items{?q,limit}", "search://items?q=cat&other=1", map[string]string{"q": "cat"}},
		{"search://items{?q,limit}", "search://items", map[string]string{}},
		{"weather://{city}{?units}", "weather://paris?units=metric", map[string]string{"city": "paris", "units": "metric"}},
		{"dict://{term:1}/{term}", "dict://c/cat", map[string]string{"term": "cat"}},
		{"dict://{term:1}/{term}", "dict://ca/cat", nil}, // the prefix is one character
		{"doc://x{#section}", "doc://x", map[string]string{}},
		{"repo://{owner}/{repo}{/num}", "repo://a/b", map[string]string{"owner": "a", "repo": "b"}},
		{"repo://{owner}/{repo}{/num}", "repo://a/b/7", map[string]string{"owner": "a", "repo": "b", "num": "7"}},
	} {
		ut, err := compileURITemplate(c.template)
		if err != nil {
			t.Fatalf("%s: %v", c.template, err)
		}
		got := ut.match(c.uri)
		if (got == nil) != (c.want == nil) || !maps.Equal(got, c.want) {
			t.Errorf("%s matching %s = %v, want %v", c.template, c.uri, got, c.want)
		}
	}
}

// A URI past maxTemplateURIBytes matches no template, which bounds the work
// one hostile resources/read costs per template.
func TestURITemplateLongURI(t *testing.T) {
	t.Parallel()
	ut, err := compileURITemplate("file:///{+path}")
	if err != nil {
		t.Fatal(err)
	}
	at := "file:///" + strings.Repeat("a", maxTemplateURIBytes-len("file:///"))
	if ut.match(at) == nil || !ut.matches(at) {
		t.Error("a URI of exactly the bound does not match")
	}
	if ut.match(at+"a") != nil || ut.matches(at+"a") {
		t.Error("a URI over the bound matches")
	}
}

func TestURITemplateInvalid(t *testing.T) {
	t.Parallel()
	for _, tmpl := range []string{
		"{", "a}", "}{a}", "{}", "{a b}", "{=a}", "{,a}", "{!a}", "{@a}", "{|a}", "{a,}", "{a:0}", "{a:01}",
		"{a:10000}", "{a:x}", "{a.}", "{.}", "{?a}{?b}", "{?a}{&b}", "{a*:3}",
	} {
		if _, err := compileURITemplate(tmpl); err == nil {
			t.Errorf("%q: no error", tmpl)
		}
	}
	for _, tmpl := range []string{"{a:9999}", "{a.b}", "{a%20b}", "{_}", "{A9}"} {
		if _, err := compileURITemplate(tmpl); err != nil {
			t.Errorf("%q: %v", tmpl, err)
		}
	}
}

func BenchmarkURITemplateMatch(b *testing.B) {
	for _, c := range []struct{ name, template, uri string }{
		{"segment", "users://{id}/profile", "users://42/profile"},
		{"query", "search://items{?q,limit}", "search://items?limit=5&q=cat"},
		{"reserved-64KiB", "file:///{+path}/x", "file:///" + strings.Repeat("a/", 32<<10-8)},
	} {
		ut, err := compileURITemplate(c.template)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ut.match(c.uri)
			}
		})
	}
}

// FuzzURITemplateMatch: any URI against the RFC's templates and the
// servers' kinds matches or not without a panic, and match and matches
// agree.
func FuzzURITemplateMatch(f *testing.F) {
	var templates []*uriTemplate
	for _, c := range rfc6570 {
		ut, err := compileURITemplate(c.template)
		if err != nil {
			f.Fatal(err)
		}
		templates = append(templates, ut)
		f.Add(c.expansion)
	}
	f.Add("file:///a/b%zz?q=1&q=2#x")
	f.Fuzz(func(t *testing.T, uri string) {
		for _, ut := range templates {
			if (ut.match(uri) != nil) != ut.matches(uri) {
				t.Fatalf("%s: match and matches disagree on %q", ut.re, uri)
			}
		}
	})
}
