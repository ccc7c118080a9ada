package authtest

import (
	"net/http"
)

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	if !s.arrive(w, r, EndpointMetadata, &s.metadataFetches, &s.jwksDown, "down") {
		return
	}
	is := s.Issuer
	md := map[string]any{
		"issuer":                                         is,
		"authorization_endpoint":                         is + "/authorize",
		"token_endpoint":                                 is + "/token",
		"registration_endpoint":                          is + "/register",
		"introspection_endpoint":                         is + "/introspect",
		"jwks_uri":                                       s.jwksURI(),
		"scopes_supported":                               s.opts.Scopes,
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          s.grantTypes(),
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          s.opts.AuthMethods,
		"authorization_response_iss_parameter_supported": true,
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          []string{"RS256"},
	}
	if len(s.opts.Scopes) == 0 {
		delete(md, "scopes_supported") // RECOMMENDED, but never null
	}
	if s.opts.DPoP {
		md["dpop_signing_alg_values_supported"] = dpopAlgs
	}
	if s.opts.ClientIDMetadataDocuments {
		md["client_id_metadata_document_supported"] = true
	}
	for k, v := range s.opts.Metadata {
		if v == nil {
			delete(md, k)
		} else {
			md[k] = v
		}
	}
	writeJSON(w, http.StatusOK, md)
}
