package lambdalocal_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/mcpfn/mcpfn/lambdalocal"
)

// A Lambda function built for this machine (go build -tags lambda.norpc
// -o bootstrap .), behind a Function URL with invoke mode RESPONSE_STREAM.
func ExampleNewFunction() {
	fn, err := lambdalocal.NewFunction(lambdalocal.Config{
		Bootstrap: "./bootstrap",
		Env:       append(os.Environ(), "MCPFN_STREAMING=1"),
		Output:    os.Stderr,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer fn.Close()
	door := &lambdalocal.Door{Function: fn, Integration: lambdalocal.FunctionURL, Mode: lambdalocal.Streaming}
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", door))
}

// The event a Function URL makes of a request.
func ExampleDoor_Event() {
	door := &lambdalocal.Door{Integration: lambdalocal.FunctionURL}
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp?x=1", nil)
	r.Header.Set("Content-Type", "application/json")
	event, err := door.Event(r, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		log.Fatal(err)
	}
	var ev struct {
		Version        string            `json:"version"`
		RawPath        string            `json:"rawPath"`
		RawQueryString string            `json:"rawQueryString"`
		Headers        map[string]string `json:"headers"`
		Body           string            `json:"body"`
		RequestContext struct {
			DomainName string `json:"domainName"`
			HTTP       struct {
				Method string `json:"method"`
			} `json:"http"`
		} `json:"requestContext"`
	}
	json.Unmarshal(event, &ev)
	fmt.Println(ev.Version, ev.RequestContext.HTTP.Method, ev.RawPath, ev.RawQueryString)
	fmt.Println(strings.Contains(ev.RequestContext.DomainName, ".lambda-url."), ev.Headers["content-type"], ev.Headers["x-forwarded-proto"])
	fmt.Println(ev.Body)
	// Output:
	// 2.0 POST /mcp x=1
	// true application/json http
	// {"jsonrpc":"2.0","id":1,"method":"ping"}
}

// A Secrets Manager endpoint holding a key secret in store/secretsmanager's
// format, for a function started with MCPFN_KEYS_SECRET_ID=app/keys and
// AWS_ENDPOINT_URL_SECRETS_MANAGER set to its URL.
func ExampleNewSecretsManager() {
	sm := httptest.NewServer(lambdalocal.NewSecretsManager(map[string]string{"app/keys": lambdalocal.NewKeySecret()}))
	defer sm.Close()
	env := []string{"MCPFN_KEYS_SECRET_ID=app/keys", "AWS_ENDPOINT_URL_SECRETS_MANAGER=" + sm.URL,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local"}
	fmt.Println(len(env), "variables")
	// Output: 4 variables
}
