package main

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// checkEndpoint checks the URL of an MCP endpoint before anything is sent.
// A Streamable HTTP endpoint is an http or https URL with a host
// (2026-07-28 basic/transports/streamable-http); err says what is missing
// or wrong, and proposes a fix where one is likely. A path other than the
// usual /mcp is no error, since servers may serve elsewhere: hint, when not
// empty, is shown if the command fails.
func checkEndpoint(raw string) (hint string, err error) {
	if raw == "" {
		return "", fmt.Errorf("the URL is empty: give the server's MCP endpoint, such as http://127.0.0.1:8080/mcp")
	}
	q := strconv.Quote(raw)
	if !strings.Contains(raw, "://") {
		// "localhost:8080/mcp" parses as scheme "localhost"; a bare host
		// and path as a relative path. Either way: no scheme.
		if guess := withScheme(raw); guess != "" {
			return "", fmt.Errorf("the URL %s has no scheme: did you mean %s?", q, guess)
		}
		return "", fmt.Errorf("the URL %s has no scheme: use http://HOST/mcp or https://HOST/mcp", q)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the URL %s is not valid: %v", q, unwrapURLError(err))
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return "", fmt.Errorf("the URL %s has scheme %q: MCP over Streamable HTTP needs http:// or https://", q, u.Scheme)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return "", fmt.Errorf("the URL %s has no host: use %s://HOST/mcp", q, strings.ToLower(u.Scheme))
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("the URL %s has an invalid port %q", q, port)
		}
	}
	if p := strings.TrimSuffix(u.Path, "/"); !strings.HasSuffix(p, "/mcp") {
		v := *u
		v.RawQuery, v.Fragment = "", ""
		if p == "" {
			v.Path, v.RawPath = "/mcp", ""
			return fmt.Sprintf("MCP endpoints are usually at /mcp: try %s", v.String()), nil
		}
		return fmt.Sprintf("the URL's path is %s; MCP endpoints are usually at /mcp (check the server's documentation)", strconv.Quote(u.Path)), nil
	}
	return "", nil
}

// withScheme returns raw with the scheme it most likely lacks: http for a
// loopback host, https otherwise; "" if raw does not start with a host.
func withScheme(raw string) string {
	hostport, _, _ := strings.Cut(raw, "/")
	if hostport == "" || strings.ContainsAny(hostport, " ?#@") {
		return ""
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "" || host == hostport && !strings.Contains(host, ".") && !strings.EqualFold(host, "localhost") {
		return "" // a word, not a host name
	}
	scheme := "https://"
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || strings.EqualFold(host, "localhost") {
		scheme = "http://"
	}
	return scheme + raw
}

// unwrapURLError drops url.Error's repetition of the URL.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// refusedHint is the hint for an endpoint whose host refused the
// connection: nothing listens at its address. The address the quick start
// serves on gets the two ways to start a server there.
func refusedHint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "is the server running?"
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	addr := net.JoinHostPort(host, port)
	hint := fmt.Sprintf("nothing is listening at %s (tried %s): is the server running, and on that address?", addr, endpoint)
	ip := net.ParseIP(host)
	if port == "8080" && (strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()) {
		hint += "\n  To serve the example calculator there, run `go run ./examples/calculator` in a clone of mcpfn;" +
			"\n  to serve your own server's module there, run `mcpfn dev` in its directory."
	}
	return hint
}
