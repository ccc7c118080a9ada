// Package apps implements the server side of MCP Apps (SEP-1865, the
// extension io.modelcontextprotocol/ui, stable 2026-01-26: ext-apps
// specification/2026-01-26/apps.mdx): interactive HTML views a host renders
// in a sandboxed iframe for a tool's results.
//
// An app is a UI resource, a ui:// URI whose content is an HTML document of
// MIME type text/html;profile=mcp-app with its security settings in
// _meta.ui (CSP domains, permissions, a dedicated domain, a border
// preference), and tools whose _meta.ui.resourceUri points to it:
//
//	apps.AddResource(s, apps.UIResource{URI: "ui://weather/dashboard.html", Name: "weather_dashboard", HTML: page,
//		UI: &apps.ResourceUI{CSP: &apps.CSP{ConnectDomains: []string{"https://api.weather.example"}}}})
//	apps.AddTool(s, &core.Tool{Name: "get_weather"}, apps.ToolUI{ResourceURI: "ui://weather/dashboard.html"}, getWeather)
//
// Both advertise the extension in the server's capabilities
// (capabilities.extensions["io.modelcontextprotocol/ui"] = {}, SEP-2133),
// in server/discover and initialize alike. A handler asks whether the
// calling client renders apps with ClientSupportsUI: a client declares the
// extension with the MIME types it renders, per request in 2026-07-28 and
// at initialize in the legacy revisions. Tools keep returning meaningful
// text content for clients that do not (apps.mdx, "Graceful Degradation").
//
// The package registers through core's public API only (core.AddTool,
// Server.AddResource, Server.AddExtension); it writes what
// @modelcontextprotocol/ext-apps' server helpers write (registerAppTool,
// registerAppResource), which test/interop-apps checks.
package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpfn/mcpfn/core"
)

// The extension's identifiers (apps.mdx, "Extension Identifier", "UI
// Resource Format", "Resource Discovery").
const (
	// ExtensionID identifies MCP Apps in capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/ui"
	// MIMEType is the MIME type of an app's HTML document.
	MIMEType = "text/html;profile=mcp-app"
	// ResourceURIMetaKey is the flat _meta key of a tool's resource URI
	// that apps.mdx deprecates in favour of _meta.ui.resourceUri. AddTool
	// writes both, as ext-apps' registerAppTool does, so that hosts that
	// read only the flat key still find the view.
	ResourceURIMetaKey = "ui/resourceUri"
	// Scheme is the URI scheme of UI resources.
	Scheme = "ui://"
)

// CSP is the Content Security Policy a view needs (_meta.ui.csp): the
// origins it may reach. A host builds the iframe's CSP from it and allows
// nothing undeclared; an omitted list means none (apps.mdx, "UI Resource
// Format").
type CSP struct {
	// ConnectDomains are origins for fetch, XHR and WebSocket (connect-src).
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains are origins for scripts, images, styles, fonts and
	// media (script-src, img-src, style-src, font-src, media-src).
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains are origins for nested iframes (frame-src).
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains are the allowed base URIs of the document (base-uri).
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// Permissions are the browser capabilities a view asks for
// (_meta.ui.permissions), which a host may grant through the iframe's
// allow attribute; a view must not assume them. Each is sent as an empty
// object when set.
type Permissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

// permissionNames are the wire names of Permissions, in apps.mdx's order.
var permissionNames = [...]string{"camera", "microphone", "geolocation", "clipboardWrite"}

func (p *Permissions) fields() [4]*bool {
	return [4]*bool{&p.Camera, &p.Microphone, &p.Geolocation, &p.ClipboardWrite}
}

// MarshalJSON writes each permission asked for as an empty object.
func (p Permissions) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range p.fields() {
		if *f {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), permissionNames[i]...), `":{}`...)
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a permission as asked for when its member is an
// object.
func (p *Permissions) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*p = Permissions{}
	for i, f := range p.fields() {
		v := m[permissionNames[i]]
		*f = len(v) > 0 && v[0] == '{'
	}
	return nil
}

// ResourceUI is the _meta.ui of a UI resource: its listing and the content
// resources/read returns (apps.mdx, "UI Resource Format").
type ResourceUI struct {
	// CSP lists the origins the view may reach; nil: the host's
	// restrictive default (no external origin).
	CSP *CSP `json:"csp,omitempty"`
	// Permissions are the browser capabilities the view asks for.
	Permissions *Permissions `json:"permissions,omitempty"`
	// Domain is a dedicated sandbox origin for the view, in the format of
	// the host (host-specific; see the host's documentation).
	Domain string `json:"domain,omitempty"`
	// PrefersBorder asks the host for a visible border and background
	// (true) or none (false); nil leaves it to the host.
	PrefersBorder *bool `json:"prefersBorder,omitempty"`
}

// Visibility says who may call a tool of an app (_meta.ui.visibility).
type Visibility string

const (
	// VisibilityModel: the tool is in the agent's tool list.
	VisibilityModel Visibility = "model"
	// VisibilityApp: the tool is callable by the server's views.
	VisibilityApp Visibility = "app"
)

// ToolUI is the _meta.ui of a tool (apps.mdx, "Resource Discovery").
type ToolUI struct {
	// ResourceURI is the ui:// resource that renders the tool's results.
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility lists who may call the tool; nil: both the model and
	// the app (["model", "app"]). A host keeps a tool whose visibility
	// lacks "model" out of the agent's list, and refuses a view's call of
	// a tool whose visibility lacks "app".
	Visibility []Visibility `json:"visibility,omitempty"`
}

// UIResource is a UI resource: an app's HTML view.
type UIResource struct {
	// URI is the resource's ui:// URI.
	URI string
	// Name (required), Title and Description are listed as a resource's.
	Name        string
	Title       string
	Description string
	// UI is the resource's _meta.ui, in resources/list and in the content
	// of resources/read.
	UI *ResourceUI
	// HTML is the document (a complete HTML5 document), unless Read is
	// set.
	HTML string
	// Read, when set, returns the document on each read.
	Read func(ctx context.Context, req *core.ReadResourceRequest) (string, error)
	// Meta holds other _meta members of the listing and the content (the
	// "ui" member is UI's).
	Meta core.Meta
}

// Enable advertises the extension (capabilities.extensions
// ["io.modelcontextprotocol/ui"] = {}) in server/discover and initialize.
// AddResource and AddTool call it; a server whose apps are registered
// otherwise (a list handler) calls it itself.
func Enable(s *core.Server) {
	s.AddExtension(core.Extension{ID: ExtensionID})
}

// AddResource registers an app's view as a resource of s: listed with
// mimeType text/html;profile=mcp-app and _meta.ui, read as one text
// content of that type with the same _meta.ui. It advertises the
// extension (Enable). It panics on a URI that is not ui://, a missing
// name, or neither HTML nor Read.
func AddResource(s *core.Server, res UIResource) {
	if !strings.HasPrefix(res.URI, Scheme) || len(res.URI) == len(Scheme) {
		panic(fmt.Sprintf("apps: AddResource %q: a UI resource's URI is ui://…", res.URI))
	}
	if res.Name == "" {
		panic(fmt.Sprintf("apps: AddResource %q: a name is required", res.URI))
	}
	if res.HTML == "" && res.Read == nil {
		panic(fmt.Sprintf("apps: AddResource %q: no HTML and no Read", res.URI))
	}
	meta := resourceMeta(res)
	read := res.Read
	html := res.HTML
	Enable(s)
	s.AddResource(&core.Resource{URI: res.URI, Name: res.Name, Title: res.Title, Description: res.Description,
		MIMEType: MIMEType, Meta: meta}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		doc := html
		if read != nil {
			var err error
			if doc, err = read(ctx, req); err != nil {
				return nil, err
			}
		}
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: MIMEType, Text: doc, Meta: resourceMeta(res)}}}, nil
	})
}

// resourceMeta is the _meta of a UI resource's listing and content: Meta
// with UI as "ui".
func resourceMeta(res UIResource) core.Meta {
	if res.UI == nil && len(res.Meta) == 0 {
		return nil
	}
	m := make(core.Meta, len(res.Meta)+1)
	for k, v := range res.Meta {
		m[k] = v
	}
	if res.UI != nil {
		m["ui"] = res.UI
	}
	return m
}

// ToolMeta returns t's _meta with ui added: "ui" holds ui, and the
// deprecated flat "ui/resourceUri" the resource URI (ResourceURIMetaKey).
// AddTool uses it; a tool registered otherwise (AddSessionTool, a list
// handler) can too.
func ToolMeta(meta core.Meta, ui ToolUI) core.Meta {
	m := make(core.Meta, len(meta)+2)
	for k, v := range meta {
		m[k] = v
	}
	m["ui"] = ui
	if ui.ResourceURI != "" {
		m[ResourceURIMetaKey] = ui.ResourceURI
	}
	return m
}

// AddTool registers a typed tool (core.AddTool) whose results a view
// renders: t's _meta gets ui (ToolMeta). It advertises the extension
// (Enable), and panics as core.AddTool does, or when ui's resource URI is
// not ui:// or its visibility holds anything but "model" and "app". The
// handler should return text content a client without apps can use
// (ClientSupportsUI), and structured content for the view.
func AddTool[In, Out any](s *core.Server, t *core.Tool, ui ToolUI, h core.ToolFunc[In, Out], opts ...*core.ToolOptions) {
	if t == nil {
		panic("apps: AddTool: nil tool")
	}
	if !strings.HasPrefix(ui.ResourceURI, Scheme) || len(ui.ResourceURI) == len(Scheme) {
		panic(fmt.Sprintf("apps: AddTool %q: the resource URI %q is not ui://…", t.Name, ui.ResourceURI))
	}
	for _, v := range ui.Visibility {
		if v != VisibilityModel && v != VisibilityApp {
			panic(fmt.Sprintf("apps: AddTool %q: visibility %q is neither model nor app", t.Name, v))
		}
	}
	tc := *t
	tc.Meta = ToolMeta(t.Meta, ui)
	Enable(s)
	core.AddTool(s, &tc, h, opts...)
}

// ClientSettings are the settings a client declares with the
// extension (apps.mdx, "Client (Host) Capabilities").
type ClientSettings struct {
	// MIMETypes are the content types the client renders, e.g.
	// ["text/html;profile=mcp-app"].
	MIMETypes []string `json:"mimeTypes,omitempty"`
}

// ClientCapability returns the settings the calling client declared with
// the extension, and whether it declared it: per request in 2026-07-28,
// at initialize in the legacy revisions (core.Request.Extension). Settings
// that do not decode are returned empty.
func ClientCapability(r *core.Request) (ClientSettings, bool) {
	var c ClientSettings
	settings, ok := r.Extension(ExtensionID)
	if !ok {
		return c, false
	}
	if b, err := json.Marshal(settings); err == nil {
		if json.Unmarshal(b, &c) != nil {
			c = ClientSettings{}
		}
	}
	return c, true
}

// ClientSupportsUI reports whether the calling client renders apps: it
// declared the extension with text/html;profile=mcp-app among its MIME
// types (the check apps.mdx, "Server Behavior", asks servers to make).
func ClientSupportsUI(r *core.Request) bool {
	c, ok := ClientCapability(r)
	return ok && slices.Contains(c.MIMETypes, MIMEType)
}
