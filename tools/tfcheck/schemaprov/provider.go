package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// server is one provider (aws or random): its committed schema, the
// committed validators of its types, and what it computes.
type server struct {
	name       string // "aws" or "random"
	schema     *providerSchema
	validators map[string][]*validator // "resource TYPE" or "data TYPE"
	region     string                  // aws: the configured region
}

func newServer(name string, schemaJSON, validatorsTxt []byte) (*server, error) {
	ps, err := loadSchema(schemaJSON)
	if err != nil {
		return nil, err
	}
	vs, err := parseValidators(validatorsTxt)
	if err != nil {
		return nil, err
	}
	s := &server{name: name, schema: ps, validators: map[string][]*validator{}}
	for _, v := range vs {
		var sch *tfprotov5.Schema
		if v.Kind == "resource" {
			sch = ps.resources[v.Type]
		} else {
			sch = ps.dataSources[v.Type]
		}
		if !strings.HasPrefix(v.Type, name+"_") {
			continue // the other provider's
		}
		if sch == nil {
			return nil, fmt.Errorf("validators.txt:%d: %s %s is not in the %s schema", v.Line, v.Kind, v.Type, name)
		}
		if !hasPath(sch.Block, strings.Split(v.Path, ".")) {
			return nil, fmt.Errorf("validators.txt:%d: %s %s has no attribute %s", v.Line, v.Kind, v.Type, v.Path)
		}
		key := v.Kind + " " + v.Type
		s.validators[key] = append(s.validators[key], v)
	}
	return s, nil
}

func hasPath(b *tfprotov5.SchemaBlock, steps []string) bool {
	if len(steps) == 1 {
		for _, a := range b.Attributes {
			if a.Name == steps[0] {
				return true
			}
		}
		return false
	}
	for _, bt := range b.BlockTypes {
		if bt.TypeName == steps[0] {
			return hasPath(bt.Block, steps[1:])
		}
	}
	return false
}

func errorDiag(format string, args ...any) []*tfprotov5.Diagnostic {
	return []*tfprotov5.Diagnostic{{Severity: tfprotov5.DiagnosticSeverityError, Summary: fmt.Sprintf(format, args...)}}
}

func (s *server) GetMetadata(context.Context, *tfprotov5.GetMetadataRequest) (*tfprotov5.GetMetadataResponse, error) {
	resp := &tfprotov5.GetMetadataResponse{ServerCapabilities: &tfprotov5.ServerCapabilities{PlanDestroy: true}}
	for _, n := range sortedKeys(s.schema.resources) {
		resp.Resources = append(resp.Resources, tfprotov5.ResourceMetadata{TypeName: n})
	}
	for _, n := range sortedKeys(s.schema.dataSources) {
		resp.DataSources = append(resp.DataSources, tfprotov5.DataSourceMetadata{TypeName: n})
	}
	return resp, nil
}

func (s *server) GetProviderSchema(context.Context, *tfprotov5.GetProviderSchemaRequest) (*tfprotov5.GetProviderSchemaResponse, error) {
	return &tfprotov5.GetProviderSchemaResponse{
		ServerCapabilities:       &tfprotov5.ServerCapabilities{PlanDestroy: true},
		Provider:                 s.schema.provider,
		ResourceSchemas:          s.schema.resources,
		DataSourceSchemas:        s.schema.dataSources,
		Functions:                map[string]*tfprotov5.Function{},
		EphemeralResourceSchemas: map[string]*tfprotov5.Schema{},
	}, nil
}

func (s *server) GetResourceIdentitySchemas(context.Context, *tfprotov5.GetResourceIdentitySchemasRequest) (*tfprotov5.GetResourceIdentitySchemasResponse, error) {
	return &tfprotov5.GetResourceIdentitySchemasResponse{IdentitySchemas: map[string]*tfprotov5.ResourceIdentitySchema{}}, nil
}

func (s *server) PrepareProviderConfig(_ context.Context, req *tfprotov5.PrepareProviderConfigRequest) (*tfprotov5.PrepareProviderConfigResponse, error) {
	return &tfprotov5.PrepareProviderConfigResponse{PreparedConfig: req.Config}, nil
}

func (s *server) ConfigureProvider(_ context.Context, req *tfprotov5.ConfigureProviderRequest) (*tfprotov5.ConfigureProviderResponse, error) {
	if s.name != "aws" {
		return &tfprotov5.ConfigureProviderResponse{}, nil
	}
	cfg, err := req.Config.Unmarshal(s.schema.provider.ValueType())
	if err != nil {
		return nil, err
	}
	s.region = stringAttr(cfg, "region")
	for _, env := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if s.region == "" {
			s.region = os.Getenv(env)
		}
	}
	if s.region == "" {
		return &tfprotov5.ConfigureProviderResponse{Diagnostics: errorDiag("tfcheck schema provider: no region: set the provider's region (or AWS_REGION)")}, nil
	}
	if _, ok := regions[s.region]; !ok {
		return &tfprotov5.ConfigureProviderResponse{Diagnostics: errorDiag("tfcheck schema provider: region %q is not in its table of regions", s.region)}, nil
	}
	return &tfprotov5.ConfigureProviderResponse{}, nil
}

func (s *server) StopProvider(context.Context, *tfprotov5.StopProviderRequest) (*tfprotov5.StopProviderResponse, error) {
	return &tfprotov5.StopProviderResponse{}, nil
}

func (s *server) runValidators(key string, sch *tfprotov5.Schema, config *tfprotov5.DynamicValue) ([]*tfprotov5.Diagnostic, error) {
	vs := s.validators[key]
	if len(vs) == 0 || config == nil {
		return nil, nil
	}
	cfg, err := config.Unmarshal(sch.ValueType())
	if err != nil {
		return nil, err
	}
	var diags []*tfprotov5.Diagnostic
	for _, v := range vs {
		diags = append(diags, v.validate(cfg)...)
	}
	return diags, nil
}

func (s *server) ValidateResourceTypeConfig(_ context.Context, req *tfprotov5.ValidateResourceTypeConfigRequest) (*tfprotov5.ValidateResourceTypeConfigResponse, error) {
	sch, ok := s.schema.resources[req.TypeName]
	if !ok {
		return &tfprotov5.ValidateResourceTypeConfigResponse{Diagnostics: errorDiag("unknown resource type %s", req.TypeName)}, nil
	}
	diags, err := s.runValidators("resource "+req.TypeName, sch, req.Config)
	return &tfprotov5.ValidateResourceTypeConfigResponse{Diagnostics: diags}, err
}

func (s *server) ValidateDataSourceConfig(_ context.Context, req *tfprotov5.ValidateDataSourceConfigRequest) (*tfprotov5.ValidateDataSourceConfigResponse, error) {
	sch, ok := s.schema.dataSources[req.TypeName]
	if !ok {
		return &tfprotov5.ValidateDataSourceConfigResponse{Diagnostics: errorDiag("unknown data source %s", req.TypeName)}, nil
	}
	diags, err := s.runValidators("data "+req.TypeName, sch, req.Config)
	return &tfprotov5.ValidateDataSourceConfigResponse{Diagnostics: diags}, err
}

func (s *server) UpgradeResourceState(_ context.Context, req *tfprotov5.UpgradeResourceStateRequest) (*tfprotov5.UpgradeResourceStateResponse, error) {
	sch, ok := s.schema.resources[req.TypeName]
	if !ok {
		return &tfprotov5.UpgradeResourceStateResponse{Diagnostics: errorDiag("unknown resource type %s", req.TypeName)}, nil
	}
	v, err := req.RawState.UnmarshalWithOpts(sch.ValueType(), tfprotov5.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		return &tfprotov5.UpgradeResourceStateResponse{Diagnostics: errorDiag("upgrading the state of %s: %s", req.TypeName, err)}, nil
	}
	dv, err := tfprotov5.NewDynamicValue(sch.ValueType(), v)
	return &tfprotov5.UpgradeResourceStateResponse{UpgradedState: &dv}, err
}

func (s *server) ReadResource(_ context.Context, req *tfprotov5.ReadResourceRequest) (*tfprotov5.ReadResourceResponse, error) {
	return &tfprotov5.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
}

// PlanResourceChange: the proposed state, with each computed attribute the
// configuration leaves unset unknown when the resource is to be created (as
// the providers plan them: known after apply).
func (s *server) PlanResourceChange(_ context.Context, req *tfprotov5.PlanResourceChangeRequest) (*tfprotov5.PlanResourceChangeResponse, error) {
	sch, ok := s.schema.resources[req.TypeName]
	if !ok {
		return &tfprotov5.PlanResourceChangeResponse{Diagnostics: errorDiag("unknown resource type %s", req.TypeName)}, nil
	}
	t := sch.ValueType()
	prior, err := req.PriorState.Unmarshal(t)
	if err != nil {
		return nil, err
	}
	proposed, err := req.ProposedNewState.Unmarshal(t)
	if err != nil {
		return nil, err
	}
	config, err := req.Config.Unmarshal(t)
	if err != nil {
		return nil, err
	}
	planned := proposed
	if prior.IsNull() && !proposed.IsNull() {
		planned, err = planCreate(sch.Block, config, proposed)
		if err != nil {
			return nil, err
		}
	}
	dv, err := tfprotov5.NewDynamicValue(t, planned)
	return &tfprotov5.PlanResourceChangeResponse{PlannedState: &dv, PlannedPrivate: req.PriorPrivate}, err
}

func planCreate(b *tfprotov5.SchemaBlock, config, proposed tftypes.Value) (tftypes.Value, error) {
	if proposed.IsNull() || !proposed.IsKnown() {
		return proposed, nil
	}
	var attrs, cfg map[string]tftypes.Value
	if err := proposed.As(&attrs); err != nil {
		return proposed, err
	}
	if !config.IsNull() && config.IsKnown() {
		if err := config.As(&cfg); err != nil {
			return proposed, err
		}
	}
	for _, a := range b.Attributes {
		if c, ok := cfg[a.Name]; a.Computed && (!ok || c.IsNull()) {
			attrs[a.Name] = tftypes.NewValue(a.Type, tftypes.UnknownValue)
		}
	}
	for _, bt := range b.BlockTypes {
		p, c := attrs[bt.TypeName], cfg[bt.TypeName]
		switch bt.Nesting {
		case tfprotov5.SchemaNestedBlockNestingModeSingle, tfprotov5.SchemaNestedBlockNestingModeGroup:
			v, err := planCreate(bt.Block, c, p)
			if err != nil {
				return proposed, err
			}
			attrs[bt.TypeName] = v
		case tfprotov5.SchemaNestedBlockNestingModeList:
			if p.IsNull() || !p.IsKnown() {
				continue
			}
			var ps, cs []tftypes.Value
			if err := p.As(&ps); err != nil {
				return proposed, err
			}
			if !c.IsNull() && c.IsKnown() {
				if err := c.As(&cs); err != nil {
					return proposed, err
				}
			}
			for i := range ps {
				ci := tftypes.NewValue(bt.Block.ValueType(), nil)
				if i < len(cs) {
					ci = cs[i]
				}
				v, err := planCreate(bt.Block, ci, ps[i])
				if err != nil {
					return proposed, err
				}
				ps[i] = v
			}
			attrs[bt.TypeName] = tftypes.NewValue(p.Type(), ps)
		}
		// Sets and maps of blocks: as proposed (none of the types used has
		// computed attributes in them that a plan reads).
	}
	return tftypes.NewValue(proposed.Type(), attrs), nil
}

// ApplyResourceChange: the planned state, unknowns filled with stand-ins
// (random_bytes with random bytes). The checks apply only under tofu test's
// mock providers, which do not call it; it is here for completeness.
func (s *server) ApplyResourceChange(_ context.Context, req *tfprotov5.ApplyResourceChangeRequest) (*tfprotov5.ApplyResourceChangeResponse, error) {
	sch, ok := s.schema.resources[req.TypeName]
	if !ok {
		return &tfprotov5.ApplyResourceChangeResponse{Diagnostics: errorDiag("unknown resource type %s", req.TypeName)}, nil
	}
	t := sch.ValueType()
	planned, err := req.PlannedState.Unmarshal(t)
	if err != nil {
		return nil, err
	}
	var randomBytes []byte
	if req.TypeName == "random_bytes" && !planned.IsNull() {
		var attrs map[string]tftypes.Value
		_ = planned.As(&attrs)
		var n big.Float
		_ = attrs["length"].As(&n)
		length, _ := n.Int64()
		randomBytes = make([]byte, length)
		_, _ = rand.Read(randomBytes)
	}
	state, err := tftypes.Transform(planned, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() {
			return v, nil
		}
		name := ""
		if steps := p.Steps(); len(steps) > 0 {
			if a, ok := steps[len(steps)-1].(tftypes.AttributeName); ok {
				name = string(a)
			}
		}
		switch {
		case randomBytes != nil && name == "base64":
			return tftypes.NewValue(tftypes.String, base64.StdEncoding.EncodeToString(randomBytes)), nil
		case randomBytes != nil && name == "hex":
			return tftypes.NewValue(tftypes.String, hex.EncodeToString(randomBytes)), nil
		case v.Type().Is(tftypes.String):
			return tftypes.NewValue(tftypes.String, "tfcheck-"+name), nil
		case v.Type().Is(tftypes.Number):
			return tftypes.NewValue(tftypes.Number, 0), nil
		case v.Type().Is(tftypes.Bool):
			return tftypes.NewValue(tftypes.Bool, false), nil
		case v.Type().Is(tftypes.List{}), v.Type().Is(tftypes.Set{}):
			return tftypes.NewValue(v.Type(), []tftypes.Value{}), nil
		case v.Type().Is(tftypes.Map{}):
			return tftypes.NewValue(v.Type(), map[string]tftypes.Value{}), nil
		}
		return tftypes.NewValue(v.Type(), nil), nil
	})
	if err != nil {
		return nil, err
	}
	dv, err := tfprotov5.NewDynamicValue(t, state)
	return &tfprotov5.ApplyResourceChangeResponse{NewState: &dv, Private: req.PlannedPrivate}, err
}

func (s *server) ImportResourceState(_ context.Context, req *tfprotov5.ImportResourceStateRequest) (*tfprotov5.ImportResourceStateResponse, error) {
	return &tfprotov5.ImportResourceStateResponse{Diagnostics: errorDiag("tfcheck schema provider: %s cannot be imported", req.TypeName)}, nil
}

func (s *server) MoveResourceState(_ context.Context, req *tfprotov5.MoveResourceStateRequest) (*tfprotov5.MoveResourceStateResponse, error) {
	return &tfprotov5.MoveResourceStateResponse{Diagnostics: errorDiag("tfcheck schema provider: %s cannot be moved", req.TargetTypeName)}, nil
}

func (s *server) UpgradeResourceIdentity(_ context.Context, req *tfprotov5.UpgradeResourceIdentityRequest) (*tfprotov5.UpgradeResourceIdentityResponse, error) {
	return &tfprotov5.UpgradeResourceIdentityResponse{Diagnostics: errorDiag("tfcheck schema provider: %s has no identity", req.TypeName)}, nil
}

func (s *server) GenerateResourceConfig(_ context.Context, req *tfprotov5.GenerateResourceConfigRequest) (*tfprotov5.GenerateResourceConfigResponse, error) {
	return &tfprotov5.GenerateResourceConfigResponse{Diagnostics: errorDiag("tfcheck schema provider: no configuration generation for %s", req.TypeName)}, nil
}

func (s *server) ReadDataSource(_ context.Context, req *tfprotov5.ReadDataSourceRequest) (*tfprotov5.ReadDataSourceResponse, error) {
	sch, ok := s.schema.dataSources[req.TypeName]
	if !ok {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: errorDiag("unknown data source %s", req.TypeName)}, nil
	}
	t := sch.ValueType()
	config, err := req.Config.Unmarshal(t)
	if err != nil {
		return nil, err
	}
	var attrs map[string]tftypes.Value
	if err := config.As(&attrs); err != nil {
		return nil, err
	}
	var set map[string]string
	switch req.TypeName {
	case "aws_region":
		set, err = readRegion(attrs, s.region)
	case "aws_partition":
		set = partitionOf(s.region)
	case "aws_iam_policy_document":
		set, err = readPolicyDocument(attrs)
	default:
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: errorDiag("tfcheck schema provider: data source %s is not implemented", req.TypeName)}, nil
	}
	if err != nil {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: errorDiag("%s", err)}, nil
	}
	for k, v := range set {
		if _, ok := attrs[k]; ok {
			attrs[k] = tftypes.NewValue(tftypes.String, v)
		}
	}
	dv, err := tfprotov5.NewDynamicValue(t, tftypes.NewValue(t, attrs))
	return &tfprotov5.ReadDataSourceResponse{State: &dv}, err
}

func (s *server) CallFunction(_ context.Context, req *tfprotov5.CallFunctionRequest) (*tfprotov5.CallFunctionResponse, error) {
	return &tfprotov5.CallFunctionResponse{Error: &tfprotov5.FunctionError{Text: "tfcheck schema provider: no function " + req.Name}}, nil
}

func (s *server) GetFunctions(context.Context, *tfprotov5.GetFunctionsRequest) (*tfprotov5.GetFunctionsResponse, error) {
	return &tfprotov5.GetFunctionsResponse{Functions: map[string]*tfprotov5.Function{}}, nil
}

func (s *server) ValidateEphemeralResourceConfig(_ context.Context, req *tfprotov5.ValidateEphemeralResourceConfigRequest) (*tfprotov5.ValidateEphemeralResourceConfigResponse, error) {
	return &tfprotov5.ValidateEphemeralResourceConfigResponse{Diagnostics: errorDiag("unknown ephemeral resource %s", req.TypeName)}, nil
}

func (s *server) OpenEphemeralResource(_ context.Context, req *tfprotov5.OpenEphemeralResourceRequest) (*tfprotov5.OpenEphemeralResourceResponse, error) {
	return &tfprotov5.OpenEphemeralResourceResponse{Diagnostics: errorDiag("unknown ephemeral resource %s", req.TypeName)}, nil
}

func (s *server) RenewEphemeralResource(_ context.Context, req *tfprotov5.RenewEphemeralResourceRequest) (*tfprotov5.RenewEphemeralResourceResponse, error) {
	return &tfprotov5.RenewEphemeralResourceResponse{Diagnostics: errorDiag("unknown ephemeral resource %s", req.TypeName)}, nil
}

func (s *server) CloseEphemeralResource(_ context.Context, req *tfprotov5.CloseEphemeralResourceRequest) (*tfprotov5.CloseEphemeralResourceResponse, error) {
	return &tfprotov5.CloseEphemeralResourceResponse{Diagnostics: errorDiag("unknown ephemeral resource %s", req.TypeName)}, nil
}

func stringAttr(obj tftypes.Value, name string) string {
	var attrs map[string]tftypes.Value
	if obj.IsNull() || !obj.IsKnown() || obj.As(&attrs) != nil {
		return ""
	}
	v, ok := attrs[name]
	if !ok || v.IsNull() || !v.IsKnown() {
		return ""
	}
	var s string
	_ = v.As(&s)
	return s
}
