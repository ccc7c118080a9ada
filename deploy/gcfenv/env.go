package gcfenv

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
)

// newLogger returns the logger MCPFN_LOG_LEVEL and the platform's log
// format describe, writing to w: JSON when json is set (in Cloud Logging's
// structured form), text otherwise.
func newLogger(w io.Writer, json bool) (*slog.Logger, error) {
	var level slog.Level
	if v := os.Getenv("MCPFN_LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, fmt.Errorf("MCPFN_LOG_LEVEL: %q is not debug, info, warn or error", v)
		}
	}
	ho := &slog.HandlerOptions{Level: level}
	if json {
		ho.ReplaceAttr = cloudLoggingKeys
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return slog.New(slog.NewTextHandler(w, ho)), nil
}

// maxInstances parses MCPFN_MAX_INSTANCES: the function's bound on
// instances (--max-instances), a whole number; unset or 0 means no bound
// the kit knows of.
func maxInstances() (int, error) {
	v := os.Getenv("MCPFN_MAX_INSTANCES")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("MCPFN_MAX_INSTANCES: %q is not a whole number of instances (the function's --max-instances)", v)
	}
	return n, nil
}

// cloudLoggingKeys renames the level and message of a JSON record as Cloud
// Logging reads them: "severity" (DEBUG, INFO, WARNING, ERROR) and
// "message" (https://cloud.google.com/logging/docs/structured-logging).
func cloudLoggingKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.MessageKey:
		a.Key = "message"
	case slog.LevelKey:
		a.Key = "severity"
		if l, ok := a.Value.Any().(slog.Level); ok {
			switch {
			case l >= slog.LevelError:
				a.Value = slog.StringValue("ERROR")
			case l >= slog.LevelWarn:
				a.Value = slog.StringValue("WARNING")
			case l >= slog.LevelInfo:
				a.Value = slog.StringValue("INFO")
			default:
				a.Value = slog.StringValue("DEBUG")
			}
		}
	}
	return a
}
