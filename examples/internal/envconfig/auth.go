package envconfig

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
)

// authFromEnv returns the OAuth protected resource the MCPFN_AUTH_*
// variables describe, or nil when MCPFN_AUTH_RESOURCE is unset.
func authFromEnv(log *slog.Logger) (core.Authenticator, error) {
	resource := os.Getenv("MCPFN_AUTH_RESOURCE")
	if resource == "" {
		return nil, nil
	}
	issuer := os.Getenv("MCPFN_AUTH_ISSUER")
	if issuer == "" {
		return nil, fmt.Errorf("MCPFN_AUTH_RESOURCE is set but MCPFN_AUTH_ISSUER is not")
	}
	rs, err := auth.New(auth.Options{
		Resource:     resource,
		MetadataURL:  os.Getenv("MCPFN_AUTH_METADATA_URL"),
		MetadataPath: os.Getenv("MCPFN_AUTH_METADATA_PATH"),
		Issuers:      []auth.Issuer{{Issuer: issuer, JWKSURL: os.Getenv("MCPFN_AUTH_JWKS_URL")}},
		Required:     strings.Fields(os.Getenv("MCPFN_AUTH_SCOPES")),
		Logger:       log,
	})
	if err != nil {
		return nil, fmt.Errorf("MCPFN_AUTH_*: %w", err)
	}
	return rs, nil
}
