package docs_test

import (
	"archive/zip"
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
	"github.com/mcpfn/mcpfn/test/internal/repo"
	"github.com/mcpfn/mcpfn/test/internal/rie"
)

// releaseVersion is the version the tutorials install (`go install
// …/cmd/mcpfn@v0.1.0`, the requires `go mod tidy` resolves), which
// tools/release/proxy.sh writes into the test's module proxy.
const releaseVersion = "v0.1.0"

// The route README.md's "Install" gives, and each tutorial repeats, while
// no version is published: a clone, a file-system module proxy of the
// release made from it (tools/release/proxy.sh), and the go command
// pointed at that proxy. The test cannot clone what is not published: the
// user's ~/src/mcpfn is a link to this checkout.
const cloneLine = "git clone https://github.com/mcpfn/mcpfn ~/src/mcpfn"

var (
	// installRoute makes the proxy and points the go command at it, in
	// the user's shell.
	installRoute = []string{
		"~/src/mcpfn/tools/release/proxy.sh ~/mcpfn-proxy " + releaseVersion,
		"export GOPROXY=file://$HOME/mcpfn-proxy,$(go env GOPROXY) GONOSUMDB=github.com/mcpfn/mcpfn GOWORK=off",
	}
	// cloneInstall installs the command line from the clone (README only).
	cloneInstall = "go -C ~/src/mcpfn install ./cmd/mcpfn"
	// routeDocs are the documents that give the route.
	routeDocs = []string{"README.md", "docs/lambda.md", "docs/gcf.md", "docs/workers.md"}
)

// release is the environment of the go command for users of the release,
// as README.md's "Install" route makes it: the user's home holds the clone
// (~/src/mcpfn) and the proxy the route's lines write (~/mcpfn-proxy); the
// route's export puts that proxy first in GOPROXY, before the machine's
// module download cache (a proxy too: third-party modules without the
// network) and its default proxy. No workspace, and a private module
// cache, so that no earlier copy of the version is reused.
type release struct {
	base string
	env  []string
}

// newRelease follows the route: it checks that every document of
// routeDocs gives its lines, runs them as written with sh in the user's
// home, and keeps the environment the export leaves. It also installs the
// command line from the clone as README.md says, and checks that it runs.
func newRelease(t *testing.T) *release {
	t.Helper()
	root := repo.Root(t)
	for _, doc := range routeDocs {
		text := readFile(t, doc)
		for _, line := range append([]string{cloneLine}, installRoute...) {
			if !strings.Contains(text, "\n"+line+"\n") {
				t.Fatalf("%s no longer has the line %q of the install route: keep the documents and this test in line", doc, line)
			}
		}
	}
	if !strings.Contains(readFile(t, "README.md"), "\n"+cloneInstall+"\n") {
		t.Fatalf("README.md no longer installs the command line from the clone with %q", cloneInstall)
	}
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(filepath.Join(home, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(home, "src", "mcpfn")); err != nil { // the clone
		t.Fatal(err)
	}
	goenv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	// The machine's proxies, which the route's $(go env GOPROXY) reads.
	goproxy := "file://" + filepath.Join(goenv("GOMODCACHE"), "cache", "download")
	if def := goenv("GOPROXY"); def != "" && def != "off" {
		goproxy += "," + def
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GO") && k != "GOROOT" && k != "GOPATH":
		case strings.HasPrefix(k, "AWS_"), strings.HasPrefix(k, "MCPFN_"), k == "HOME":
		default:
			env = append(env, kv)
		}
	}
	modcache := filepath.Join(base, "modcache")
	env = append(env,
		"HOME="+home,
		// The build cache is the machine's (a new home would make a cold
		// one): it only saves time.
		"GOCACHE="+goenv("GOCACHE"),
		"GOPROXY="+goproxy,
		"GOFLAGS=-modcacherw",
		"GOMODCACHE="+modcache,
		"GOTOOLCHAIN=local",
	)
	// proxy.sh's go run sets GOFLAGS=-mod=readonly, leaving read-only
	// module files in the private cache: make them removable.
	t.Cleanup(func() {
		filepath.WalkDir(modcache, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	// The command line from the clone, built while the route runs (with
	// GOWORK=off: the clone's go.work would only make the private module
	// cache load the go.mod files of every module of the workspace).
	bin := filepath.Join(base, "clonebin")
	install := exec.Command("sh", "-c", cloneInstall)
	var installOut strings.Builder
	install.Dir, install.Env = home, append(append([]string{}, env...), "GOWORK=off", "GOBIN="+bin)
	install.Stdout, install.Stderr = &installOut, &installOut
	if err := install.Start(); err != nil {
		t.Fatal(err)
	}
	script := "set -e\n" + strings.Join(installRoute, "\n") + "\n" + `printf '%s\n' "$GOPROXY" "$GONOSUMDB" "$GOWORK"` + "\n"
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = home, env
	out, err := cmd.Output()
	installErr := install.Wait()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("the install route:\n%s\n: %v\n%s", script, err, stderr)
	}
	vars := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(vars) != 3 || !strings.HasPrefix(vars[0], "file://"+home+"/mcpfn-proxy,"+goproxy) || vars[1] != "github.com/mcpfn/mcpfn" || vars[2] != "off" {
		t.Fatalf("the install route left GOPROXY, GONOSUMDB, GOWORK = %q", vars)
	}
	if _, err := os.Stat(filepath.Join(home, "mcpfn-proxy", "github.com", "mcpfn", "mcpfn", "@v", releaseVersion+".zip")); err != nil {
		t.Fatalf("the install route made no proxy of the root module at %s: %v", releaseVersion, err)
	}
	env = append(env, "GOPROXY="+vars[0], "GONOSUMDB="+vars[1], "GOWORK="+vars[2])
	if installErr != nil {
		t.Fatalf("%s: %v\n%s", cloneInstall, installErr, installOut.String())
	}
	if out, err := exec.Command(filepath.Join(bin, "mcpfn"), "--help").Output(); err != nil || !strings.Contains(string(out), "mcpfn [flags] call URL TOOL") {
		t.Fatalf("mcpfn installed from the clone: --help: %v\n%s", err, out)
	}
	return &release{base: base, env: env}
}

// user is a fresh directory outside the repository, with its own GOBIN
// first on PATH, in which a tutorial's commands run.
type user struct {
	t   *testing.T
	dir string
	bin string
	env []string
}

func (r *release) user(t *testing.T) *user {
	t.Helper()
	base := t.TempDir()
	dir, bin := filepath.Join(base, "calc"), filepath.Join(base, "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(append([]string{}, r.env...), "GOBIN="+bin,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &user{t: t, dir: dir, bin: bin, env: env}
}

// TestTutorials follows docs/lambda.md and docs/gcf.md as a user would,
// from one module proxy of the release.
func TestTutorials(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules from the release's proxy")
	}
	t.Parallel()
	rel := newRelease(t)
	t.Run("lambda", func(t *testing.T) { t.Parallel(); lambdaTutorial(t, rel) })
	t.Run("gcf", func(t *testing.T) { t.Parallel(); gcfTutorial(t, rel) })
	t.Run("two-commands", func(t *testing.T) { t.Parallel(); twoCommands(t, rel) })
}

// run runs a command of the tutorial in the user's directory and returns
// its standard output.
func (u *user) run(extraEnv []string, name string, args ...string) string {
	u.t.Helper()
	if name == "mcpfn" {
		name = filepath.Join(u.bin, name) // exec looks names up in the test's PATH
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = u.dir
	cmd.Env = append(append([]string{}, u.env...), extraEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		u.t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// shell runs a command line exactly as the tutorial writes it (checked to
// be there) with sh.
func (u *user) shell(doc, line string) string {
	u.t.Helper()
	if !strings.Contains(readFile(u.t, doc), "\n"+line+"\n") {
		u.t.Fatalf("%s no longer has the command line %q: keep the tutorial and its test in line", doc, line)
	}
	return u.run(nil, "sh", "-c", line)
}

// firstGoBlock returns the first ```go block of a document: the user's
// whole file.
func firstGoBlock(t *testing.T, doc string) string {
	t.Helper()
	for _, b := range blocks(doc, readFile(t, doc)) {
		if b.lang == "go" {
			if snippetKind(b) != "file" {
				t.Fatalf("%s: the first Go block is not a complete file", b)
			}
			return b.text
		}
	}
	t.Fatalf("%s has no ```go block", doc)
	return ""
}

// lambdaTutorial follows docs/lambda.md as a user would, outside the
// repository, with the release's modules from a module proxy: its first Go
// block becomes main.go of a new module (`go mod init`, `go mod tidy`), it
// is compiled for linux/arm64 (the tutorial's architecture), `mcpfn` is
// installed with the tutorial's `go install` and packages it (amd64 here,
// for the emulator on this machine) into a zip holding bootstrap. The
// bootstrap then runs under the Lambda Runtime Interface Emulator, behind a
// Function URL front door in RESPONSE_STREAM mode (test/lambdafront), with
// the environment mcp-lambda gives the function: its session table (in
// dynalite), its key secret (in smfake, a Secrets Manager stand-in),
// MCPFN_STREAMING=1, MCPFN_LOG_LEVEL and Lambda's JSON log format; and the
// tutorial's `mcpfn call` gets the tool's answer.
func lambdaTutorial(t *testing.T, rel *release) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("the emulator runs linux/amd64 or linux/arm64 bootstraps, not on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	riePath := rie.Path(t)
	dynamoEndpoint := testenv.DynamoEndpoint(t)
	const doc = "docs/lambda.md"
	u := rel.user(t)

	// 1. Write main.go.
	u.shell(doc, "go mod init example.com/calc")
	if err := os.WriteFile(filepath.Join(u.dir, "main.go"), []byte(firstGoBlock(t, doc)), 0o644); err != nil {
		t.Fatal(err)
	}
	u.shell(doc, "go mod tidy")
	u.run([]string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", os.DevNull, ".")
	if mod := readAbs(t, filepath.Join(u.dir, "go.mod")); !strings.Contains(mod, "github.com/mcpfn/mcpfn/deploy/lambdaenv "+releaseVersion) {
		t.Errorf("go mod tidy did not require deploy/lambdaenv %s:\n%s", releaseVersion, mod)
	}

	// 2. Package it.
	u.shell(doc, "go install github.com/mcpfn/mcpfn/cmd/mcpfn@"+releaseVersion)
	if !strings.Contains(readFile(t, doc), "\nmcpfn package lambda -o fn.zip\n") {
		t.Fatalf("%s no longer packages with `mcpfn package lambda -o fn.zip`", doc)
	}
	arch := runtime.GOARCH // the tutorial's arm64 is the default; the emulator runs this machine's
	u.run(nil, "mcpfn", "package", "lambda", "-arch", arch, "-o", "fn.zip")
	bootstrap := unzipBootstrap(t, filepath.Join(u.dir, "fn.zip"), t.TempDir())

	// 3. The environment the Terraform module gives the function.
	ctx := t.Context()
	_, table, err := dynalite.NewTable(ctx, dynamoEndpoint, "tutorial-")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "./store/secretsmanager/internal/smfake/cmd/smfake", "./test/lambdafront")
	build.Dir = repo.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build smfake lambdafront: %v\n%s", err, out)
	}
	const secret = "my-mcp-server/state-keys"
	smURL := startLine(t, filepath.Join(bin, "smfake"), []string{"-addr", "127.0.0.1:0", "-secret", secret}, os.Environ(),
		regexp.MustCompile(`serving Secrets Manager on (http://\S+)`), nil)
	moduleEnv := map[string]string{
		"MCPFN_DYNAMODB_TABLE":  table,
		"MCPFN_KEYS_SECRET_ID":  secret,
		"MCPFN_STREAMING":       "1",
		"MCPFN_ALLOWED_ORIGINS": "",
		"MCPFN_LOG_LEVEL":       "info",
	}
	tf := readFile(t, "infra/terraform/modules/mcp-lambda/function.tf")
	for k := range moduleEnv {
		if !regexp.MustCompile(`(?m)^\s*` + k + `\s*=`).MatchString(tf) {
			t.Errorf("modules/mcp-lambda no longer sets %s: keep this test's environment in line", k)
		}
	}
	env := []string{
		// Lambda's own: the region, the role's credentials, the log format
		// of logging_config { log_format = "JSON" }.
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"AWS_LAMBDA_LOG_FORMAT=JSON",
		// The emulators in place of the AWS endpoints.
		"AWS_ENDPOINT_URL_DYNAMODB=" + dynamoEndpoint,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + smURL,
	}
	for k, v := range moduleEnv {
		env = append(env, k+"="+v)
	}
	var funcLog mcptest.LogBuffer
	frontEnv := append(cleanEnv(), env...)
	url := startLine(t, filepath.Join(bin, "lambdafront"),
		[]string{"-addr", "127.0.0.1:0", "-rie", riePath, "-bootstrap", bootstrap, "-door", "url", "-mode", "streaming", "-runtime", "rie", "-concurrency", "1"},
		frontEnv, regexp.MustCompile(`msg=serving url=(\S+)`), &funcLog)

	// 4. Call it.
	line := `mcpfn call "$URL" add '{"left":2,"right":3}'`
	if !strings.Contains(readFile(t, doc), line) && !strings.Contains(readFile(t, doc), strings.Replace(line, "mcpfn ", "mcpfn --oauth ", 1)) {
		t.Fatalf("%s no longer calls the tool with %s", doc, line)
	}
	out := u.run([]string{"URL=" + url + "/mcp"}, "sh", "-c", line)
	var res struct {
		StructuredContent *int `json:"structuredContent"`
		IsError           bool `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.StructuredContent == nil || *res.StructuredContent != 5 || res.IsError {
		t.Errorf("mcpfn call add(2, 3) printed %q (%v); want a result with structuredContent 5\nfunction log:\n%s", out, err, funcLog.String())
	}
	// The function used the shared key, not a per-process one.
	if strings.Contains(funcLog.String(), "MCPFN_KEYS_SECRET_ID") {
		t.Errorf("the function warned about its keys with MCPFN_KEYS_SECRET_ID set:\n%s", funcLog.String())
	}
}

// gcfTutorial follows docs/gcf.md: its first Go block becomes
// function.go of a new module outside the repository (`go mod init`, `go
// mod tidy` against the release's module proxy), then runs under the
// Functions Framework, as Cloud Functions run it, with a state key as
// `--set-secrets` gives it, and `mcpfn call` gets the tool's answer.
func gcfTutorial(t *testing.T, rel *release) {
	const doc = "docs/gcf.md"
	u := rel.user(t)
	u.shell(doc, "go mod init example.com/calc")
	if err := os.WriteFile(filepath.Join(u.dir, "function.go"), []byte(firstGoBlock(t, doc)), 0o644); err != nil {
		t.Fatal(err)
	}
	u.shell(doc, "go mod tidy")
	// What Cloud Functions' build adds: a main that serves the function.
	main := `package main

import (
	"log"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	_ "example.com/calc"
)

func main() {
	if err := funcframework.StartHostPort("127.0.0.1", os.Getenv("PORT")); err != nil {
		log.Fatal(err)
	}
}
`
	if err := os.MkdirAll(filepath.Join(u.dir, "cmd", "serve"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(u.dir, "cmd", "serve", "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	u.run(nil, "go", "mod", "tidy")
	// Before a release is published, Cloud Build cannot download it: the
	// tutorial vendors the dependencies, the Functions Framework included
	// (an import it adds to function.go), and the build below uses the
	// vendor directory, as Cloud Build would.
	ffImport := `_ "github.com/GoogleCloudPlatform/functions-framework-go/funcframework"`
	if !strings.Contains(readFile(t, doc), "`"+ffImport+"`") {
		t.Fatalf("%s no longer adds %s to function.go", doc, ffImport)
	}
	fn := readAbs(t, filepath.Join(u.dir, "function.go"))
	if !strings.Contains(fn, "\nimport (\n") {
		t.Fatalf("function.go has no import block")
	}
	fn = strings.Replace(fn, "\nimport (\n", "\nimport (\n\t"+ffImport+"\n", 1)
	if err := os.WriteFile(filepath.Join(u.dir, "function.go"), []byte(fn), 0o644); err != nil {
		t.Fatal(err)
	}
	u.shell(doc, "go mod tidy && go mod vendor")
	if _, err := os.Stat(filepath.Join(u.dir, "vendor", "github.com", "mcpfn", "mcpfn", "deploy", "gcfenv")); err != nil {
		t.Fatalf("go mod vendor did not vendor deploy/gcfenv: %v", err)
	}
	serve := filepath.Join(t.TempDir(), "serve")
	u.run(nil, "go", "build", "-mod=vendor", "-o", serve, "./cmd/serve")
	u.shell(doc, "go install github.com/mcpfn/mcpfn/cmd/mcpfn@"+releaseVersion)

	port := freePort(t)
	cmd := exec.Command(serve)
	key := make([]byte, 32)
	rand.Read(key)
	cmd.Env = append(cleanEnv(), "PORT="+port, "FUNCTION_TARGET=MCP",
		"MCPFN_STATE_KEY="+base64.StdEncoding.EncodeToString(key), "MCPFN_LOG_LEVEL=info")
	var log mcptest.LogBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	waitListening(t, "127.0.0.1:"+port, exited, &log)

	line := `mcpfn --token "$(gcloud auth print-identity-token)" call "$URL" add '{"left":2,"right":3}'`
	if !strings.Contains(readFile(t, doc), line) {
		t.Fatalf("%s no longer calls the tool with %s", doc, line)
	}
	// The same call without the identity token Cloud Functions' front
	// end checks and strips.
	out := u.run([]string{"URL=http://127.0.0.1:" + port + "/"}, "sh", "-c", `mcpfn call "$URL" add '{"left":2,"right":3}'`)
	var res struct {
		StructuredContent *int `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.StructuredContent == nil || *res.StructuredContent != 5 {
		t.Errorf("mcpfn call add(2, 3) printed %q (%v); want structuredContent 5\nfunction log:\n%s", out, err, log.String())
	}
	if strings.Contains(log.String(), "MCPFN_STATE_KEY") {
		t.Errorf("the function warned about its key with MCPFN_STATE_KEY set:\n%s", log.String())
	}
}

// inspectorVersion is the MCP Inspector the newcomer's path runs
// (README.md: npx @modelcontextprotocol/inspector --cli URL ...).
const inspectorVersion = "2.12.0"

// twoCommands follows README.md's "Your own function in two commands" as
// a newcomer would, outside the repository, with the release's modules:
// `mcpfn new my-tools -target lambda`, then `mcpfn dev` in it, which
// prints its URL; the README's `mcpfn call` and the official MCP
// Inspector's CLI (the README's npx line, run from a directory where the
// pinned Inspector is installed once, so npx needs no network) use that
// URL.
func twoCommands(t *testing.T, rel *release) {
	const doc = "README.md"
	readme := readFile(t, doc)
	for _, re := range []string{
		`\nmcpfn new my-tools -target lambda +#`,
		`\ncd my-tools && mcpfn dev +# prints: mcpfn dev: serving http://127\.0\.0\.1:8080/mcp\n`,
	} {
		if !regexp.MustCompile(re).MatchString(readme) {
			t.Fatalf("%s no longer has a line matching %q: keep it and this test in line", doc, re)
		}
	}
	const defaultURL = "http://127.0.0.1:8080/mcp"
	callLine := `mcpfn call ` + defaultURL + ` add '{"left":2,"right":3}'`
	inspectorLine := `npx @modelcontextprotocol/inspector --cli ` + defaultURL + ` --method tools/list`
	for _, line := range []string{callLine, inspectorLine} {
		if !strings.Contains(readme, "\n"+line+"\n") {
			t.Fatalf("%s no longer has the line %q", doc, line)
		}
	}
	// The Inspector first (npm), while the module builds.
	inspector := make(chan string, 1)
	go func() {
		// Installed once, where test/node/install.sh keeps the suite's
		// other npm packages (it does nothing when the install is complete).
		tools := os.Getenv("MCPFN_TOOLS")
		if tools == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				inspector <- "error: " + err.Error()
				return
			}
			tools = filepath.Join(home, ".cache", "mcpfn")
		}
		dir := filepath.Join(tools, "inspector-"+inspectorVersion)
		cmd := exec.Command(filepath.Join(repo.Root(t), "test", "node", "install.sh"), dir, "@modelcontextprotocol/inspector@"+inspectorVersion)
		out, err := cmd.CombinedOutput()
		if err != nil {
			inspector <- fmt.Sprintf("error: installing the Inspector: %v\n%s", err, out)
			return
		}
		inspector <- dir
	}()

	u := rel.user(t)
	u.run(nil, "go", "install", "github.com/mcpfn/mcpfn/cmd/mcpfn@"+releaseVersion)
	u.run(nil, "mcpfn", "new", "my-tools", "-target", "lambda")
	project := filepath.Join(u.dir, "my-tools")
	var devLog mcptest.LogBuffer
	url := startLine(t, filepath.Join(u.bin, "mcpfn"), []string{"dev", "-addr", "127.0.0.1:0", project},
		u.env, regexp.MustCompile(`^mcpfn dev: serving (http://\S+/mcp)$`), &devLog)

	out := u.run(nil, "sh", "-c", strings.Replace(callLine, defaultURL, url, 1))
	var res struct {
		StructuredContent *int `json:"structuredContent"`
		IsError           bool `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.StructuredContent == nil || *res.StructuredContent != 5 || res.IsError {
		t.Errorf("mcpfn call add(2, 3) printed %q (%v); want structuredContent 5\nmcpfn dev:\n%s", out, err, devLog.String())
	}

	dir := <-inspector
	if strings.HasPrefix(dir, "error: ") {
		t.Fatal(dir)
	}
	nodeOut, err := exec.Command(filepath.Join(repo.Root(t), "test", "node", "install.sh")).Output()
	if err != nil {
		t.Fatalf("test/node/install.sh: %v", err)
	}
	node := strings.TrimSpace(string(nodeOut))
	npx := exec.Command("sh", "-c", strings.Replace(inspectorLine, defaultURL, url, 1))
	npx.Dir = dir
	npx.Env = append(cleanEnv(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"), "npm_config_offline=true")
	var stderr strings.Builder
	npx.Stderr = &stderr
	list, err := npx.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", inspectorLine, err, list, stderr.String())
	}
	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list, &tools); err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "add" || !strings.Contains(string(tools.Tools[0].InputSchema), `"left"`) {
		t.Errorf("the Inspector listed %s (%v); want the one tool add, with its input schema", list, err)
	}
}

// TestLambdaDeployFromClone follows docs/lambda.md's step 3 as it stands
// before a release is published: the example root and the module copied
// from the clone (~/src/mcpfn), the module's source rewritten to the copy;
// the result is the example with that one line changed, and, where
// terraform is installed, `terraform get` installs the module from it (no
// provider is downloaded: validate and apply are test/terraform's).
func TestLambdaDeployFromClone(t *testing.T) {
	t.Parallel()
	const doc = "docs/lambda.md"
	lines := []string{
		"cp -R ~/src/mcpfn/infra/terraform/examples/own-function/. deploy/",
		"cp -R ~/src/mcpfn/infra/terraform/modules/mcp-lambda deploy/",
		`sed -i.orig 's|source *= "git::.*"|source = "./mcp-lambda"|' deploy/main.tf`,
	}
	text := readFile(t, doc)
	for _, l := range append([]string{"mkdir deploy"}, lines...) {
		if !strings.Contains(text, "\n"+l+"\n") {
			t.Fatalf("%s no longer has the line %q", doc, l)
		}
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := repo.Root(t)
	if err := os.Symlink(root, filepath.Join(home, "src", "mcpfn")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "calc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "mkdir deploy\n"+strings.Join(lines, "\n"))
	cmd.Dir, cmd.Env = dir, append(cleanEnv(), "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := strings.Replace(readFile(t, "infra/terraform/examples/own-function/main.tf"),
		`source = "git::https://github.com/mcpfn/mcpfn.git//infra/terraform/modules/mcp-lambda?ref=`+releaseVersion+`"`, `source = "./mcp-lambda"`, 1)
	if got := readAbs(t, filepath.Join(dir, "deploy", "main.tf")); got != want || strings.Contains(got, "git::") {
		t.Errorf("deploy/main.tf after the rewrite:\n%s\nwant:\n%s", got, want)
	}
	for _, f := range []string{"variables.tf", "outputs.tf", "versions.tf", "mcp-lambda/function.tf", "mcp-lambda/versions.tf"} {
		if _, err := os.Stat(filepath.Join(dir, "deploy", f)); err != nil {
			t.Errorf("deploy/%s: %v", f, err)
		}
	}
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not installed: the module source is not resolved")
	}
	get := exec.Command(tf, "-chdir=deploy", "get")
	get.Dir, get.Env = dir, append(cleanEnv(), "HOME="+home, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	if out, err := get.CombinedOutput(); err != nil {
		t.Fatalf("terraform get: %v\n%s", err, out)
	}
}

// cleanEnv is the test's environment without the AWS, MCPFN and Go
// module settings of the caller.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "MCPFN_") {
			env = append(env, kv)
		}
	}
	return env
}

func readAbs(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unzipBootstrap checks that the package holds exactly one executable
// named bootstrap, as provided.al2023 runs it, and extracts it into dir.
func unzipBootstrap(t *testing.T, zipPath, dir string) string {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" || zr.File[0].Mode().Perm()&0o111 == 0 {
		t.Fatalf("%s: want one executable named bootstrap, got %d entries", zipPath, len(zr.File))
	}
	in, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(dir, "bootstrap")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, in); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// startLine starts a long-running command, waits (at most 60 s) for the
// line of its output that matches re, and returns the first submatch; the
// rest of its output goes to log (when not nil). The command is stopped
// at the end of the test.
func startLine(t *testing.T, bin string, args, env []string, re *regexp.Regexp, log io.Writer) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		pw.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	found := make(chan string, 1)
	var seen mcptest.LogBuffer
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent {
				io.WriteString(&seen, line+"\n")
				if m := re.FindStringSubmatch(line); m != nil {
					found <- m[1]
					sent = true
				}
			}
			if log != nil {
				io.WriteString(log, line+"\n")
			}
		}
		io.Copy(io.Discard, pr)
		if !sent {
			close(found)
		}
	}()
	// mcpfn dev builds the user's module before it prints its URL: on a
	// shared, busy machine a cold build has taken over three minutes. The
	// bound only ends a hang.
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	select {
	case m, ok := <-found:
		if !ok {
			t.Fatalf("%s exited before printing %s:\n%s", filepath.Base(bin), re, seen.String())
		}
		return m
	case <-ctx.Done():
		t.Fatalf("%s did not print %s in time:\n%s", filepath.Base(bin), re, seen.String())
	}
	return ""
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitListening waits until addr accepts connections (the Functions
// Framework prints nothing when it listens), or the process exits.
func waitListening(t *testing.T, addr string, exited <-chan struct{}, log *mcptest.LogBuffer) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("the function exited before listening on %s:\n%s", addr, log.String())
		case <-deadline:
			t.Fatalf("the function did not listen on %s:\n%s", addr, log.String())
		case <-time.After(20 * time.Millisecond): // polling another process's port
		}
	}
}
