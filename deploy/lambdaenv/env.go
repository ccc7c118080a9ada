package lambdaenv

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcpfn/mcpfn/auth"
)

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
