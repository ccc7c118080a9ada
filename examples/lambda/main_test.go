package main

import (
	"archive/zip"
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/internal/testenv"
)

// TestBootstrapUnderEmulator builds the deployment package with build.sh,
// runs the bootstrap it holds under the Lambda Runtime Interface Emulator
// behind a Function URL in streaming mode (test/lambdafront), and calls add
// with a 2026-07-28 request. It skips when the emulator is not installed
// (test/lambdafront/install-rie.sh), unless MCPFN_REQUIRE_RIE=1.
func TestBootstrapUnderEmulator(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the deployment package")
	}
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the emulator runs linux/amd64 or linux/arm64 bootstraps, not on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	dir := t.TempDir()
	cmd := exec.Command("./build.sh", runtime.GOARCH)
	cmd.Env = append(os.Environ(), "OUT="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	bootstrap := unzipBootstrap(t, filepath.Join(dir, "lambda-"+runtime.GOARCH+".zip"), dir)

	front := filepath.Join(dir, "lambdafront")
	if out, err := exec.Command("go", "build", "-o", front, "github.com/mcpfn/mcpfn/test/lambdafront").CombinedOutput(); err != nil {
		t.Fatalf("go build lambdafront: %v\n%s", err, out)
	}
	url := startFront(t, front, "-bootstrap", bootstrap, "-door", "url", "-mode", "streaming", "-runtime", "rie", "-concurrency", "1")

	c := &mcptest.Client{URL: url + "/mcp"}
	res, err := c.Call(t.Context(), "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"left": 2, "right": 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		StructuredContent int    `json:"structuredContent"`
		ResultType        string `json:"resultType"`
	}
	if err := res.Decode(&out); err != nil || res.Status != http.StatusOK || out.StructuredContent != 5 || out.ResultType != "complete" {
		t.Errorf("add(2, 3): HTTP %d, %s, %v; want 200 and 5", res.Status, res.Result, err)
	}
}

// unzipBootstrap checks that the package holds exactly an executable
// bootstrap, and extracts it into dir.
func unzipBootstrap(t *testing.T, zipPath, dir string) string {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" || zr.File[0].Mode().Perm()&0o111 == 0 {
		t.Fatalf("%s: want one executable named bootstrap, got %d entries (first %q, mode %v)",
			zipPath, len(zr.File), zr.File[0].Name, zr.File[0].Mode())
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

// startFront runs lambdafront and returns its URL; it skips the test when
// the emulator is missing.
func startFront(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "MCPFN_STREAMING=1", "MCPFN_LOG_LEVEL=warn",
		"MCPFN_DYNAMODB_TABLE=", "MCPFN_KEYS_SECRET_ID=", "MCPFN_STATE_KEY=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log strings.Builder
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				if strings.Contains(log.String(), "aws-lambda-rie not found") {
					testenv.RIE.Missing(t, "aws-lambda-rie not found")
				}
				t.Fatalf("lambdafront exited:\n%s", log.String())
			}
			log.WriteString(line + "\n")
			if _, rest, ok := strings.Cut(line, "msg=serving url="); ok {
				url, _, _ := strings.Cut(rest, " ")
				go func() { // keep draining the function's output
					for range lines {
					}
				}()
				return url
			}
		case <-timeout:
			t.Fatalf("lambdafront did not start:\n%s", log.String())
		}
	}
}
