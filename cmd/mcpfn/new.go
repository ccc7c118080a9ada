package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// templates are the files mcpfn new writes: common/ for every target, then
// the target's own directory. A name ending in .tmpl loses the suffix;
// gitignore.tmpl becomes .gitignore. Placeholders: __NAME__ (the project's
// name), __PKG__ (its Go package), __REF__ (the release tag infra/ fetches
// the Terraform modules at), __TARGET_TITLE__ and __DEPLOY__ (README).
//
//go:embed all:templates
var templates embed.FS

// newTargets are the targets of mcpfn new, in the order usage lists them.
var newTargets = []string{"lambda", "gcf", "workers", "http"}

// deployNotes is the README's "Deploy" section per target.
var deployNotes = map[string]string{
	"lambda": "## Deploy to AWS Lambda\n\n" +
		"    mcpfn package lambda -o __NAME__.zip .   # a provided.al2023 bootstrap for arm64\n" +
		"    terraform -chdir=infra init\n" +
		"    terraform -chdir=infra apply -var zip_path=../__NAME__.zip\n" +
		"    mcpfn tools \"$(terraform -chdir=infra output -raw mcp_endpoint)\"\n\n" +
		"`infra/` uses the mcp-lambda module: a Function URL with response streaming, a DynamoDB table\n" +
		"for sessions and tasks, the signing key in Secrets Manager. Without `-var 'auth=…'` the URL takes\n" +
		"SigV4-signed requests only; see the module's README for OAuth.\n",
	"gcf": "## Deploy to Google Cloud Functions\n\n" +
		"    gcloud functions deploy __NAME__ --gen2 --runtime=go126 --trigger-http --entry-point=MCP --source=.\n\n" +
		"or, with Terraform and an existing bucket for the source:\n\n" +
		"    zip -r ../__NAME__-src.zip go.mod go.sum *.go\n" +
		"    terraform -chdir=infra init\n" +
		"    terraform -chdir=infra apply -var project=PROJECT -var source_bucket=BUCKET -var source_zip_path=../../__NAME__-src.zip\n",
	"workers": "## Deploy to Cloudflare Workers\n\n" +
		"    mcpfn package workers -o dist .          # app.wasm, the glue, wrangler.toml\n" +
		"    cd dist\n" +
		"    openssl rand -base64 32 | npx wrangler secret put MCPFN_STATE_KEY\n" +
		"    npx wrangler deploy\n\n" +
		"The generated `wrangler.toml` declares the Durable Objects that hold sessions and tasks.\n",
	"http": "## Deploy\n\n" +
		"    CGO_ENABLED=0 go build -o __NAME__ .\n\n" +
		"serves `/mcp` with the timeouts a public server needs; put TLS in front of it.\n",
}

var targetTitles = map[string]string{
	"lambda": "AWS Lambda", "gcf": "Google Cloud Functions", "workers": "Cloudflare Workers", "http": "net/http",
}

// scaffold is one mcpfn new.
type scaffold struct {
	Dir    string // the directory to create; must not exist or be empty
	Target string // lambda, gcf, workers or http
	Module string // the module path; "" means the directory's name
	// Version is the mcpfn version the module requires and infra/ fetches
	// the Terraform modules at; "" or "devel" leaves the choice to go mod
	// tidy (the newest version the module proxy has) and infra/ at v0.1.0.
	Version string
	// Replace maps mcpfn module paths to local directories (go.mod replace
	// directives): a module made from a checkout of the repository.
	Replace map[string]string
	// Tidy runs go mod tidy at the end, with Env as its environment (nil:
	// the process's).
	Tidy   bool
	Env    []string
	Stderr io.Writer
}

// mcpfnModules are the modules of mcpfn a generated project may import,
// by target: go.mod requires them at the CLI's version.
var mcpfnModules = map[string][]string{
	"lambda":  {"github.com/mcpfn/mcpfn", "github.com/mcpfn/mcpfn/deploy/lambdaenv"},
	"gcf":     {"github.com/mcpfn/mcpfn", "github.com/mcpfn/mcpfn/deploy/gcfenv"},
	"workers": {"github.com/mcpfn/mcpfn", "github.com/mcpfn/mcpfn/adapters/workers"},
	"http":    {"github.com/mcpfn/mcpfn"},
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// packageName turns a directory name into a Go package name: lower case,
// letters, digits and underscores, not starting with a digit.
func packageName(name string) string {
	p := nonIdent.ReplaceAllString(strings.ToLower(name), "")
	if p == "" || unicode.IsDigit(rune(p[0])) {
		p = "mcp" + p
	}
	return p
}

// run writes the project and returns the files written, relative to Dir.
func (s *scaffold) run(ctx context.Context) ([]string, error) {
	if !slices.Contains(newTargets, s.Target) {
		return nil, fmt.Errorf("unknown target %q: want %s", s.Target, strings.Join(newTargets, ", "))
	}
	if entries, err := os.ReadDir(s.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s exists and is not empty", s.Dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	abs, err := filepath.Abs(s.Dir)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(abs)
	module := s.Module
	if module == "" {
		module = name
	}
	pkg := "main"
	if s.Target == "gcf" {
		pkg = packageName(name)
	}
	ref := "v0.1.0"
	version := s.Version
	if version == "devel" {
		version = ""
	}
	if strings.HasPrefix(version, "v") && !strings.Contains(version, "-") {
		ref = version
	}
	repl := strings.NewReplacer("__NAME__", name, "__PKG__", pkg, "__REF__", ref,
		"__TARGET_TITLE__", targetTitles[s.Target], "__DEPLOY__", deployNotes[s.Target])
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	var written []string
	write := func(rel string, data []byte) error {
		p := filepath.Join(abs, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		written = append(written, rel)
		return os.WriteFile(p, data, 0o644)
	}
	for _, root := range []string{"templates/common", "templates/" + s.Target} {
		err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := templates.ReadFile(p)
			if err != nil {
				return err
			}
			rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
			if rel == "gitignore" {
				rel = ".gitignore"
			}
			return write(rel, []byte(repl.Replace(string(b))))
		})
		if err != nil {
			return written, err
		}
	}
	var mod bytes.Buffer
	fmt.Fprintf(&mod, "module %s\n\ngo 1.26\n", module)
	if version != "" {
		mod.WriteString("\nrequire (\n")
		for _, m := range mcpfnModules[s.Target] {
			fmt.Fprintf(&mod, "\t%s %s\n", m, version)
		}
		mod.WriteString(")\n")
	}
	if len(s.Replace) > 0 {
		keys := make([]string, 0, len(s.Replace))
		for k := range s.Replace {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		mod.WriteString("\n")
		for _, k := range keys {
			fmt.Fprintf(&mod, "replace %s => %s\n", k, s.Replace[k])
		}
	}
	if err := write("go.mod", mod.Bytes()); err != nil {
		return written, err
	}
	slices.SortFunc(written, func(a, b string) int { return strings.Compare(path.Clean(a), path.Clean(b)) })
	if !s.Tidy {
		return written, nil
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "tidy")
	cmd.Dir = abs
	cmd.Env = s.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		hint := ""
		if len(s.Replace) == 0 && strings.Contains(msg, "github.com/mcpfn/mcpfn") {
			hint = "\nno release of mcpfn may be reachable from your GOPROXY yet: from a clone of the repository, " +
				"tools/release/proxy.sh /tmp/mcpfn-proxy v0.1.0 writes one, then run, in " + s.Dir + ":\n" +
				"  GOPROXY=file:///tmp/mcpfn-proxy,$(go env GOPROXY) GONOSUMDB=github.com/mcpfn/mcpfn GOWORK=off go mod tidy"
		}
		return written, fmt.Errorf("go mod tidy in %s: %v\n%s%s", s.Dir, err, msg, hint)
	}
	if _, err := os.Stat(filepath.Join(abs, "go.sum")); err == nil {
		written = append(written, "go.sum")
	}
	return written, nil
}

// newCmd is mcpfn new DIR: the project, then what to run next.
func newCmd(ctx context.Context, cfg *config, e *env, stdout, stderr io.Writer, bad func(string) int) int {
	for _, f := range append(append([]string{}, packageFlags...), serverFlags...) {
		if cfg.set[f] {
			return bad("-" + f + " is not a flag of new")
		}
	}
	if len(cfg.args) != 2 {
		return bad("new takes one DIR: mcpfn new DIR [-target lambda|gcf|workers|http] [-module PATH]")
	}
	target := cfg.target
	if target == "" {
		target = "http"
	}
	if !slices.Contains(newTargets, target) {
		return bad("-target must be " + strings.Join(newTargets, ", ") + ", not " + strconv.Quote(target))
	}
	dir := cfg.args[1]
	if e.dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(e.dir, dir)
	}
	s := &scaffold{Dir: dir, Target: target, Module: cfg.module, Version: moduleVersion(), Tidy: true, Env: e.environ, Stderr: stderr}
	files, err := s.run(ctx)
	if err != nil {
		return failure(stderr, err)
	}
	fmt.Fprintf(stdout, "created %s (%s): %s\nnext:\n  cd %s\n  go test ./...\n  mcpfn dev\n", cfg.args[1], targetTitles[target], strings.Join(files, " "), cfg.args[1])
	return exitOK
}
