package main

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The committed schema files hold, per provider, the part of the object that
// `tofu providers schema -json` prints under provider_schemas[ADDRESS] for
// the types this repository uses (see trim.go): the same JSON, so that the
// full stage can compare them with the real provider's byte for byte.

type providerSchemaJSON struct {
	Provider          *schemaJSON            `json:"provider,omitempty"`
	ResourceSchemas   map[string]*schemaJSON `json:"resource_schemas,omitempty"`
	DataSourceSchemas map[string]*schemaJSON `json:"data_source_schemas,omitempty"`
}

type schemaJSON struct {
	Version int64      `json:"version"`
	Block   *blockJSON `json:"block,omitempty"`
}

type blockJSON struct {
	Attributes         map[string]*attributeJSON `json:"attributes,omitempty"`
	BlockTypes         map[string]*blockTypeJSON `json:"block_types,omitempty"`
	Description        string                    `json:"description,omitempty"`
	DescriptionKind    string                    `json:"description_kind,omitempty"`
	Deprecated         bool                      `json:"deprecated,omitempty"`
	DeprecationMessage string                    `json:"deprecation_message,omitempty"`
}

type attributeJSON struct {
	Type               json.RawMessage `json:"type,omitempty"`
	NestedType         json.RawMessage `json:"nested_type,omitempty"`
	Description        string          `json:"description,omitempty"`
	DescriptionKind    string          `json:"description_kind,omitempty"`
	Deprecated         bool            `json:"deprecated,omitempty"`
	DeprecationMessage string          `json:"deprecation_message,omitempty"`
	Required           bool            `json:"required,omitempty"`
	Optional           bool            `json:"optional,omitempty"`
	Computed           bool            `json:"computed,omitempty"`
	Sensitive          bool            `json:"sensitive,omitempty"`
	WriteOnly          bool            `json:"write_only,omitempty"`
}

type blockTypeJSON struct {
	NestingMode string     `json:"nesting_mode,omitempty"`
	Block       *blockJSON `json:"block,omitempty"`
	MinItems    int64      `json:"min_items,omitempty"`
	MaxItems    int64      `json:"max_items,omitempty"`
}

// A loaded provider schema: the protocol's form, and each type's value type.
type providerSchema struct {
	provider    *tfprotov5.Schema
	resources   map[string]*tfprotov5.Schema
	dataSources map[string]*tfprotov5.Schema
}

func loadSchema(data []byte) (*providerSchema, error) {
	var pj providerSchemaJSON
	if err := json.Unmarshal(data, &pj); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	ps := &providerSchema{resources: map[string]*tfprotov5.Schema{}, dataSources: map[string]*tfprotov5.Schema{}}
	var err error
	if pj.Provider == nil {
		pj.Provider = &schemaJSON{Block: &blockJSON{}}
	}
	if ps.provider, err = convertSchema(pj.Provider); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	for name, s := range pj.ResourceSchemas {
		if ps.resources[name], err = convertSchema(s); err != nil {
			return nil, fmt.Errorf("resource %s: %w", name, err)
		}
	}
	for name, s := range pj.DataSourceSchemas {
		if ps.dataSources[name], err = convertSchema(s); err != nil {
			return nil, fmt.Errorf("data source %s: %w", name, err)
		}
	}
	return ps, nil
}

func convertSchema(s *schemaJSON) (*tfprotov5.Schema, error) {
	b, err := convertBlock(s.Block)
	if err != nil {
		return nil, err
	}
	return &tfprotov5.Schema{Version: s.Version, Block: b}, nil
}

func stringKind(k string) tfprotov5.StringKind {
	if k == "markdown" {
		return tfprotov5.StringKindMarkdown
	}
	return tfprotov5.StringKindPlain
}

var nestingModes = map[string]tfprotov5.SchemaNestedBlockNestingMode{
	"single": tfprotov5.SchemaNestedBlockNestingModeSingle,
	"list":   tfprotov5.SchemaNestedBlockNestingModeList,
	"set":    tfprotov5.SchemaNestedBlockNestingModeSet,
	"map":    tfprotov5.SchemaNestedBlockNestingModeMap,
	"group":  tfprotov5.SchemaNestedBlockNestingModeGroup,
}

func convertBlock(bj *blockJSON) (*tfprotov5.SchemaBlock, error) {
	if bj == nil {
		bj = &blockJSON{}
	}
	b := &tfprotov5.SchemaBlock{
		Description:        bj.Description,
		DescriptionKind:    stringKind(bj.DescriptionKind),
		Deprecated:         bj.Deprecated,
		DeprecationMessage: bj.DeprecationMessage,
	}
	for _, name := range sortedKeys(bj.Attributes) {
		a := bj.Attributes[name]
		if len(a.NestedType) > 0 {
			return nil, fmt.Errorf("attribute %s: nested attribute types need protocol 6", name)
		}
		t, err := tftypes.ParseJSONType(a.Type) //nolint:staticcheck // the type's JSON is exactly what it parses
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		b.Attributes = append(b.Attributes, &tfprotov5.SchemaAttribute{
			Name: name, Type: t,
			Description: a.Description, DescriptionKind: stringKind(a.DescriptionKind),
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			Deprecated: a.Deprecated, DeprecationMessage: a.DeprecationMessage, WriteOnly: a.WriteOnly,
		})
	}
	for _, name := range sortedKeys(bj.BlockTypes) {
		bt := bj.BlockTypes[name]
		mode, ok := nestingModes[bt.NestingMode]
		if !ok {
			return nil, fmt.Errorf("block %s: nesting mode %q", name, bt.NestingMode)
		}
		inner, err := convertBlock(bt.Block)
		if err != nil {
			return nil, fmt.Errorf("block %s: %w", name, err)
		}
		b.BlockTypes = append(b.BlockTypes, &tfprotov5.SchemaNestedBlock{
			TypeName: name, Block: inner, Nesting: mode, MinItems: bt.MinItems, MaxItems: bt.MaxItems,
		})
	}
	return b, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
