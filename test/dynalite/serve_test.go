package dynalite_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpfn/mcpfn/internal/testenv"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
)

// TestClientAbortKeepsServing: a client that goes away in the middle of a
// request (a replica killed while it reads or writes its task, as
// test/replicas does) must not take dynalite down for every other client.
// dynalite's request handler rethrows the request's "aborted" error, which
// ends the Node process unless serve.js catches it. It runs a private
// dynalite (start.sh with a state directory of its own); like the other
// dynalite tests it runs only where MCPFN_DYNAMODB_ENDPOINT is set.
func TestClientAbortKeepsServing(t *testing.T) {
	testenv.DynamoEndpoint(t) // the gate: dynalite can run here
	state := t.TempDir()
	env := append(os.Environ(), "MCPFN_DYNALITE_STATE="+state)
	start := exec.Command("./start.sh", "--detach")
	start.Env = env
	out, err := start.Output()
	if err != nil {
		t.Fatalf("start.sh: %v", err)
	}
	t.Cleanup(func() {
		stop := exec.Command("./stop.sh")
		stop.Env = env
		stop.Run()
	})
	m := regexp.MustCompile(`MCPFN_DYNAMODB_ENDPOINT=(\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("start.sh printed %q", out)
	}
	endpoint := string(m[1])
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	client := dynalite.Client(endpoint)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := client.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}

	// A request whose headers the server has taken (its 100 Continue
	// says so: the handler runs), half a body, then the connection
	// closes: the server sees the request aborted.
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"+
		"Content-Type: application/x-amz-json-1.0\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", u.Host)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	fmt.Fprint(c, "{")
	c.Close()
	// Requests on new connections, each after the close reached the
	// server: it still answers them.
	for i := range 3 {
		if _, err := client.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
			log, _ := os.ReadFile(filepath.Join(state, "log"))
			t.Fatalf("request %d after a client aborted its request: %v\ndynalite's log:\n%s", i+1, err, log)
		}
	}
}
