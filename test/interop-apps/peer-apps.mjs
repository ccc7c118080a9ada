// peer-apps.mjs: the reference side of the MCP Apps golden test
// (apps_test.go): a server built with the official TypeScript SDK v2
// (@modelcontextprotocol/server, createMcpHandler; 2026-07-28, and the
// legacy revisions statelessly) whose app is registered with
// @modelcontextprotocol/ext-apps' own server helpers (registerAppTool,
// registerAppResource), advertising the extension
// (io.modelcontextprotocol/ui: {}) in its capabilities as SEP-2133 shows.
// The same app is registered on mcpfn by apps_test.go; the two servers'
// tools/list, resources/list and resources/read must agree.
//
// The app (the shared fixture, see app.json):
//   get_weather      model and app; _meta.ui.resourceUri = the dashboard
//   refresh_weather  app only (visibility ["app"])
//   ui://weather/dashboard.html  the view: text/html;profile=mcp-app, with
//                    CSP domains, permissions, a domain and prefersBorder
//
//   node peer-apps.mjs   prints "serving MCP on http://127.0.0.1:PORT/mcp"
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { EXTENSION_ID, RESOURCE_MIME_TYPE, registerAppResource, registerAppTool } from '@modelcontextprotocol/ext-apps/server';
import * as z from 'zod';

const app = JSON.parse(readFileSync(process.env.APP_JSON, 'utf8'));

const handler = createMcpHandler(() => {
  const s = new McpServer({ name: 'peer-apps', version: '1' }, {
    capabilities: { extensions: { [EXTENSION_ID]: {} } },
  });
  registerAppTool(s, 'get_weather', {
    title: app.tool.title,
    description: app.tool.description,
    inputSchema: { location: z.string() },
    _meta: { ui: { resourceUri: app.resource.uri } },
  }, async ({ location }) => ({
    content: [{ type: 'text', text: `Sunny in ${location}` }],
    structuredContent: { location, conditions: 'sunny' },
  }));
  registerAppTool(s, 'refresh_weather', {
    description: app.appOnlyTool.description,
    _meta: { ui: { resourceUri: app.resource.uri, visibility: ['app'] } },
  }, async () => ({ content: [{ type: 'text', text: 'refreshed' }] }));
  registerAppResource(s, app.resource.name, app.resource.uri, {
    description: app.resource.description,
    _meta: { ui: app.resource.ui },
  }, async () => ({
    contents: [{ uri: app.resource.uri, mimeType: RESOURCE_MIME_TYPE, text: app.resource.html, _meta: { ui: app.resource.ui } }],
  }));
  return s;
}, { legacy: 'stateless' });

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://${req.headers.host}`);
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      for (const x of Array.isArray(v) ? v : [v]) headers.append(k, x);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const response = await handler.fetch(new Request(url, {
      method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined,
    }));
    const out = {};
    response.headers.forEach((v, k) => { out[k] = v; });
    res.writeHead(response.status, out);
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch (e) {
    console.error(e);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
server.listen(0, '127.0.0.1', () => {
  console.log(`serving MCP on http://127.0.0.1:${server.address().port}/mcp`);
});
