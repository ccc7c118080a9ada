// Package echo is the http.Handler of the front-door tests' Lambda
// function (see ../echofn): it reports the request it received, and answers
// with cookies, binary bodies and server-sent events.
//
// Routes:
//
//	/echo    the request as JSON ([Echo]); sets X-Multi twice, two cookies,
//	         and the status from ?status=
//	/binary  the request body, or the 256 bytes 0..255, as
//	         application/octet-stream
//	/sse     three server-sent events ([SSEBody]), flushed one by one;
//	         ?panic=1 panics after the first
//	/panic   panics before writing
//	/sleep   sleeps ?ms= milliseconds, ignoring the deadline, then answers
//	         like /echo
//	/exit    ends the process (exit status 3) without answering
package echo

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda"
)

// SSEBody is the complete body of /sse.
const SSEBody = "id: 0\nevent: message\ndata: {\"n\":0}\n\n" +
	"id: 1\nevent: message\ndata: {\"n\":1}\n\n" +
	"id: 2\nevent: message\ndata: {\"n\":2}\n\n"

// Cookies are the Set-Cookie headers of /echo.
var Cookies = []string{"session=abc; Path=/; HttpOnly", "theme=dark; Expires=Wed, 02 Jan 2030 03:04:05 GMT"}

// Echo is the body of /echo.
type Echo struct {
	Method     string              `json:"method"`
	Path       string              `json:"path"`
	RawQuery   string              `json:"rawQuery"`
	Host       string              `json:"host"`
	RemoteAddr string              `json:"remoteAddr"`
	Header     map[string][]string `json:"header"`
	Cookies    []string            `json:"cookies"`
	Body       string              `json:"body"` // base64
	EventType  string              `json:"eventType"`
	Deadline   bool                `json:"deadline"`
}

// Handler returns the handler. If releaseURL is set, /sse fetches it (GET)
// after flushing its first event and before writing the others.
func Handler(releaseURL string) http.Handler {
	mux := http.NewServeMux()
	echo := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		e := Echo{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Host: r.Host,
			RemoteAddr: r.RemoteAddr, Header: r.Header, Body: base64.StdEncoding.EncodeToString(body),
		}
		for _, c := range r.Cookies() {
			e.Cookies = append(e.Cookies, c.Name+"="+c.Value)
		}
		ev, _ := lambda.RequestFromContext(r.Context())
		e.EventType = fmt.Sprintf("%T", ev)
		_, e.Deadline = r.Context().Deadline()
		status := http.StatusOK
		if s, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil {
			status = s
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		for _, c := range Cookies {
			w.Header().Add("Set-Cookie", c)
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(e)
	}
	mux.HandleFunc("/echo", echo)
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if len(body) == 0 {
			body = make([]byte, 256)
			for i := range body {
				body[i] = byte(i)
			}
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(body)
	})
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		for i := range 3 {
			fmt.Fprintf(w, "id: %d\nevent: message\ndata: {\"n\":%d}\n\n", i, i)
			w.(http.Flusher).Flush()
			if i > 0 {
				continue
			}
			if r.URL.Query().Get("panic") == "1" {
				panic("echofn: panic after the first event")
			}
			if releaseURL != "" {
				res, err := http.Get(releaseURL)
				if err != nil {
					panic(err)
				}
				res.Body.Close()
			}
		}
	})
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("echofn: panic") })
	mux.HandleFunc("/exit", func(http.ResponseWriter, *http.Request) { os.Exit(3) })
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		time.Sleep(time.Duration(ms) * time.Millisecond) // even past the deadline
		echo(w, r)
	})
	return mux
}
