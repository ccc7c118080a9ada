module github.com/mcpfn/mcpfn

go 1.26

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/google/jsonschema-go v0.4.3
	github.com/invopop/jsonschema v0.14.0
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	// invopop/jsonschema v0.14.0 asks (through pb33f/ordered-map v2.3.1) for
	// go.yaml.in/yaml/v4 v4.0.0-rc.2; the release is required here so that no
	// user links a release candidate (docs/design.md, "Module layout").
	go.yaml.in/yaml/v4 v4.0.0 // indirect
)
