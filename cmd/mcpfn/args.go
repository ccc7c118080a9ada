package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// defaultTimeout bounds a whole command unless --timeout says otherwise:
// long enough for a browser login (the authorization code lives at most
// ten minutes, RFC 6749 §4.1.2), for slow tools and for a cold build, short
// enough that a server streaming events forever does not hold a script.
const defaultTimeout = 10 * time.Minute

type config struct {
	mode    client.Mode
	header  http.Header
	token   string
	oauth   bool
	answers []string
	timeout time.Duration
	session string
	noInit  bool
	// insecure allows a credential over plain http to a remote host.
	insecure bool
	json     bool   // --json: the JSON document even on a terminal
	human    bool   // --human: text for people even when piped
	logLevel string // "" unset, "none", or an mcp.LoggingLevel
	version  bool
	help     bool
	arch     string // package lambda
	out      string // package lambda and workers
	name     string // package workers
	devKey   bool   // package workers
	target   string // new
	module   string // new
	// set records the flags given, by canonical name, for the checks of
	// which command takes which.
	set  map[string]bool
	args []string
}

func parseArgs(argv []string) (*config, error) {
	cfg := &config{header: http.Header{}, timeout: defaultTimeout, set: map[string]bool{}}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			cfg.args = append(cfg.args, argv[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			cfg.args = append(cfg.args, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		needVal := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(argv) {
				return "", fmt.Errorf("flag -%s needs a value", name)
			}
			i++
			return argv[i], nil
		}
		switch name {
		case "H":
			name = "header"
		case "output":
			name = "o"
		case "h":
			name = "help"
		}
		cfg.set[name] = true
		var v string
		if takesValue(name) {
			var err error
			if v, err = needVal(); err != nil {
				return nil, err
			}
		}
		switch name {
		case "mode":
			switch v {
			case "auto":
				cfg.mode = client.ModeAuto
			case "modern":
				cfg.mode = client.ModeModern
			case "legacy":
				cfg.mode = client.ModeLegacy
			default:
				return nil, fmt.Errorf("--mode must be auto, modern or legacy, not %q", v)
			}
		case "header":
			k, hv, ok := strings.Cut(v, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("--header wants 'Name: value', got %q", v)
			}
			cfg.header.Add(strings.TrimSpace(k), strings.TrimSpace(hv))
		case "token":
			cfg.token = v
		case "oauth":
			cfg.oauth = true
		case "session":
			cfg.session = v
		case "no-initialize":
			cfg.noInit = true
		case "insecure":
			cfg.insecure = true
		case "json":
			cfg.json = true
		case "human":
			cfg.human = true
		case "version":
			cfg.version = true
		case "help":
			cfg.help = true
		case "log-level":
			if v != "none" && !validLevel(v) {
				return nil, fmt.Errorf("--log-level must be debug, info, notice, warning, error, critical, alert, emergency or none, not %q", v)
			}
			cfg.logLevel = v
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("--timeout wants a duration such as 30s or 5m (0: none), not %q", v)
			}
			cfg.timeout = d
		case "answer":
			if _, err := parseAnswer(v); err != nil {
				return nil, err
			}
			cfg.answers = append(cfg.answers, v)
		case "arch":
			cfg.arch = v
		case "name":
			cfg.name = v
		case "dev-key":
			cfg.devKey = true
		case "target":
			cfg.target = v
		case "module":
			cfg.module = v
		case "o":
			if v == "" {
				return nil, errors.New("-o needs a file name")
			}
			cfg.out = v
		default:
			return nil, fmt.Errorf("unknown flag %s", a)
		}
	}
	return cfg, nil
}

// takesValue reports whether the flag with the canonical name name takes a
// value (flags lists it with one).
func takesValue(name string) bool {
	for i := range flags {
		if flags[i].name == name {
			return flags[i].value != ""
		}
	}
	return false
}

func validLevel(v string) bool {
	switch mcp.LoggingLevel(v) {
	case mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
		mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency:
		return true
	}
	return false
}

func parseAnswer(v string) (*mcp.ElicitResult, error) {
	switch v {
	case mcp.ActionAccept, mcp.ActionDecline, mcp.ActionCancel:
		return &mcp.ElicitResult{Action: v}, nil
	}
	if strings.HasPrefix(strings.TrimSpace(v), "{") {
		if err := jsonObjectError("--answer", v); err != nil {
			return nil, err
		}
	}
	var content map[string]any
	if err := json.Unmarshal([]byte(v), &content); err != nil || content == nil {
		return nil, fmt.Errorf("--answer must be accept, decline, cancel or a JSON object, not %q", v)
	}
	return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: content}, nil
}
