package lambdaenv

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
)

// allowedOrigins parses MCPFN_ALLOWED_ORIGINS: comma-separated origins
// (scheme://host[:port], http or https) or "*"; empty entries are skipped.
func allowedOrigins() ([]string, error) {
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

// stateKey parses MCPFN_STATE_KEY, if set: comma-separated keys, each
// standard base64 of at least core.MinKeyBytes bytes; the first seals and
// all open (core.KeyProvider), which is how a fixed key rotates. The id of
// each key is derived from it (a truncated SHA-256), so that a state sealed
// with a key removed since is reported as one of an unknown key rather
// than as a bad signature.
func stateKey() (core.StaticKeys, error) {
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

// boolVar parses a boolean variable: unset or empty is false; otherwise
// one of strconv.ParseBool's spellings (1, true, 0, false, ...).
func boolVar(name string) (bool, error) {
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

// durationVar parses a duration variable: unset or empty is zero (the
// default of the option it sets); otherwise a positive Go duration (90s,
// 5m) or a whole number of seconds (300, what the Terraform modules give).
func durationVar(name string) (time.Duration, error) {
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

// authFromEnv returns the OAuth protected resource the MCPFN_AUTH_*
// variables describe, or nil when MCPFN_AUTH_RESOURCE is unset.
func authFromEnv(log *slog.Logger) (*auth.ProtectedResource, error) {
	resource := os.Getenv("MCPFN_AUTH_RESOURCE")
	if resource == "" {
		for _, name := range []string{"MCPFN_AUTH_ISSUER", "MCPFN_AUTH_JWKS_URL", "MCPFN_AUTH_SCOPES", "MCPFN_AUTH_METADATA_URL", "MCPFN_AUTH_METADATA_PATH"} {
			if os.Getenv(name) != "" {
				return nil, fmt.Errorf("%s is set but MCPFN_AUTH_RESOURCE is not: set the MCP endpoint's URL (https://.../mcp) to protect it", name)
			}
		}
		return nil, nil
	}
	issuer := os.Getenv("MCPFN_AUTH_ISSUER")
	if issuer == "" {
		return nil, fmt.Errorf("MCPFN_AUTH_ISSUER: not set, but MCPFN_AUTH_RESOURCE is: name the authorization server (its issuer URL)")
	}
	rs, err := auth.New(&auth.Options{
		Resource:     resource,
		MetadataURL:  os.Getenv("MCPFN_AUTH_METADATA_URL"),
		MetadataPath: os.Getenv("MCPFN_AUTH_METADATA_PATH"),
		Issuers:      []auth.Issuer{{Issuer: issuer, JWKSURL: os.Getenv("MCPFN_AUTH_JWKS_URL")}},
		Required:     strings.Fields(os.Getenv("MCPFN_AUTH_SCOPES")),
		Logger:       log,
	})
	if err != nil {
		return nil, fmt.Errorf("MCPFN_AUTH_* (MCPFN_AUTH_RESOURCE %q, MCPFN_AUTH_ISSUER %q): %w", resource, issuer, err)
	}
	return rs, nil
}
