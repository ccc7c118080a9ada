package lambda_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// startRuntimeChild runs the test named test of this test binary in a
// child process, as a function under the Runtime API served at apiURL,
// with env added to its environment. The child is killed when the test
// ends. The returned builder collects its output.
func startRuntimeChild(t *testing.T, test, apiURL string, env ...string) *strings.Builder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(apiURL, "http://"), "_LAMBDA_SERVER_PORT=")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return out
}

// unexpectedRuntimeCall fails the test on a call the loopback Runtime API
// does not serve, and answers it 404.
func unexpectedRuntimeCall(t *testing.T, w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	t.Errorf("unexpected runtime API call %s %s: %s", r.Method, r.URL.Path, raw)
	w.WriteHeader(http.StatusNotFound)
}
