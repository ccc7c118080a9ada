package mcpfnenv

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// AllowedOrigins parses MCPFN_ALLOWED_ORIGINS (core.ServerOptions.AllowedOrigins):
// comma-separated origins (scheme://host[:port], http or https) or "*";
// empty entries are skipped.
func AllowedOrigins() ([]string, error) {
	var out []string
	for o := range strings.SplitSeq(os.Getenv("MCPFN_ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
				(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
				return nil, fmt.Errorf("MCPFN_ALLOWED_ORIGINS: %q is not an origin (scheme://host[:port]) or \"*\"", o)
			}
			o = u.Scheme + "://" + u.Host
		}
		out = append(out, o)
	}
	return out, nil
}

// StateKeys parses MCPFN_STATE_KEY, if set (nil otherwise): comma-separated
// keys, each standard base64 of at least core.MinKeyBytes bytes; the first
// seals and all open (core.KeyProvider), which is how a fixed key rotates.
// The id of each key is derived from it (a truncated SHA-256), so that a
// state sealed with a key removed since is reported as one of an unknown
// key rather than as a bad signature.
func StateKeys() (core.StaticKeys, error) {
	v := os.Getenv("MCPFN_STATE_KEY")
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var keys core.StaticKeys
	for i, k := range strings.Split(v, ",") {
		secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("MCPFN_STATE_KEY: key %d is not standard base64 (openssl rand -base64 32): %v", i+1, err)
		}
		if len(secret) < core.MinKeyBytes {
			return nil, fmt.Errorf("MCPFN_STATE_KEY: key %d has %d bytes, at least %d required (openssl rand -base64 32)", i+1, len(secret), core.MinKeyBytes)
		}
		sum := sha256.Sum256(secret)
		id := "env-" + hex.EncodeToString(sum[:4])
		for _, prev := range keys {
			if prev.ID == id {
				return nil, fmt.Errorf("MCPFN_STATE_KEY: key %d is listed twice", i+1)
			}
		}
		keys = append(keys, core.Key{ID: id, Secret: secret})
	}
	return keys, nil
}

// Bool parses the boolean variable name: unset or empty is false;
// otherwise one of strconv.ParseBool's spellings (1, true, 0, false, ...).
func Bool(name string) (bool, error) {
	v := os.Getenv(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: %q is not 1 or 0 (true or false)", name, v)
	}
	return b, nil
}

// Duration parses the duration variable name: unset or empty is zero (the
// default of the option it sets); otherwise a positive Go duration (90s,
// 5m) or a whole number of seconds (300, what the Terraform modules give).
func Duration(name string) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	s := v
	if strings.Trim(s, "0123456789") == "" {
		s += "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive duration (seconds, or a Go duration such as 5m)", name, v)
	}
	return d, nil
}
