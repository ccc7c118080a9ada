package lambdalocal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests run this test binary as the function's bootstrap: with
// LAMBDALOCAL_TEST_BOOTSTRAP=1, TestMain speaks the Lambda Runtime API as
// aws-lambda-go does (GET .../next, POST .../response buffered or streamed
// with chunked encoding, POST .../error, POST .../init/error), with
// AWS_LAMBDA_MAX_CONCURRENCY loops in one process. test/lambdafront and
// cmd/mcpfn's dev tests run real aws-lambda-go bootstraps; this one needs
// no module outside the standard library.

func TestMain(m *testing.M) {
	if os.Getenv("LAMBDALOCAL_TEST_BOOTSTRAP") == "1" {
		bootstrap()
		return
	}
	os.Exit(m.Run())
}

var (
	counter    atomic.Int64
	rendezvous = make(chan struct{})
	meetOnce   sync.Once
)

func bootstrap() {
	api := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/"
	if os.Getenv("LAMBDALOCAL_TEST_INIT") == "fail" {
		http.Post(api+"init/error", "application/json", strings.NewReader(`{"errorMessage":"no config","errorType":"InitError"}`))
		fmt.Fprintln(os.Stderr, "init failed: no config")
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "bootstrap up; function", os.Getenv("AWS_LAMBDA_FUNCTION_NAME"))
	n, _ := strconv.Atoi(os.Getenv("AWS_LAMBDA_MAX_CONCURRENCY"))
	for range max(n, 1) - 1 {
		go loop(api)
	}
	loop(api)
}

func loop(api string) {
	for {
		res, err := http.Get(api + "invocation/next")
		if err != nil {
			os.Exit(2)
		}
		event, _ := io.ReadAll(res.Body)
		res.Body.Close()
		handle(api+"invocation/"+res.Header.Get("Lambda-Runtime-Aws-Request-Id")+"/", event)
	}
}

// handle answers one event: a Function URL event (its path says what to
// do), or {"count":true} from the Invoke API.
func handle(base string, event []byte) {
	var ev struct {
		RawPath        string `json:"rawPath"`
		RawQueryString string `json:"rawQueryString"`
		Body           string `json:"body"`
		Count          bool   `json:"count"`
	}
	json.Unmarshal(event, &ev)
	q, _ := url.ParseQuery(ev.RawQueryString)
	reply := func(body string) {
		b, _ := json.Marshal(map[string]any{"statusCode": 200, "headers": map[string]string{"Content-Type": "text/plain"}, "body": body})
		http.Post(base+"response", "application/json", bytes.NewReader(b))
	}
	if ev.Count {
		n := counter.Add(1)
		if hook := os.Getenv("LAMBDALOCAL_TEST_HOOK"); hook != "" {
			http.Get(hook + "?n=" + strconv.FormatInt(n, 10))
		}
		http.Post(base+"response", "application/json", strings.NewReader(`{"count":`+strconv.FormatInt(n, 10)+`}`))
		return
	}
	switch ev.RawPath {
	case "/echo":
		reply("echo " + ev.Body)
	case "/pid":
		reply(strconv.Itoa(os.Getpid()))
	case "/count":
		reply(strconv.FormatInt(counter.Add(1), 10))
	case "/rendezvous":
		// The first invocation waits for the second: both must run at
		// once in this process.
		first := false
		meetOnce.Do(func() { first = true })
		if first {
			<-rendezvous
		} else {
			close(rendezvous)
		}
		reply(strconv.Itoa(os.Getpid()))
	case "/sleep":
		ms, _ := strconv.Atoi(q.Get("ms"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		reply("slept")
	case "/error":
		http.Post(base+"error", "application/json", strings.NewReader(`{"errorMessage":"boom","errorType":"Boom"}`))
	case "/exit":
		os.Exit(3)
	case "/stream":
		// A streamed response: the prelude and "first", then, once the
		// gate URL answers (the test's client has read "first"), "second".
		pr, pw := io.Pipe()
		go func() {
			pw.Write([]byte(`{"statusCode":200,"headers":{"Content-Type":"text/event-stream"}}`))
			pw.Write(make([]byte, 8))
			pw.Write([]byte("first\n"))
			if gate := q.Get("gate"); gate != "" {
				if res, err := http.Get(gate); err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}
			pw.Write([]byte("second\n"))
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, base+"response", pr)
		req.Header.Set("Content-Type", "application/vnd.awslambda.http-integration-response")
		req.Header.Set("Lambda-Runtime-Function-Response-Mode", "streaming")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	default:
		reply("unknown " + ev.RawPath)
	}
}
