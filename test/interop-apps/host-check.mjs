// host-check.mjs URL ERA: a host of MCP Apps that mcpfn did not write checks
// the app a server serves: the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, whose result schemas parse every answer)
// declaring the extension io.modelcontextprotocol/ui with the MIME type
// text/html;profile=mcp-app, pinned to ERA (2026-07-28 or 2025-11-25), and
// @modelcontextprotocol/ext-apps' host side: getUiCapability on the
// server's capabilities, getToolUiResourceUri / isToolVisibilityAppOnly /
// isToolVisibilityModelOnly on the tools (app-bridge: what a host reads to
// find a tool's view), the generated McpUiToolMetaSchema /
// McpUiResourceMetaSchema / McpUiResourceCspSchema on their _meta.ui,
// buildAllowAttribute on the permissions, RESOURCE_MIME_TYPE on the
// listing and the content. The app is the fixture of app.json.
//
// It also calls get_weather twice, declaring the extension and not, and
// prints each result's text ("CALL declared|bare TEXT") for apps_test.go,
// which checks that mcpfn's ClientSupportsUI saw what the client declared.
// Prints PASS/FAIL lines; exits 1 on any failure.
import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  McpUiResourceCspSchema, McpUiResourceMetaSchema, McpUiToolMetaSchema, RESOURCE_MIME_TYPE,
  buildAllowAttribute, getToolUiResourceUri, isToolVisibilityAppOnly, isToolVisibilityModelOnly,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { EXTENSION_ID, getUiCapability } from '@modelcontextprotocol/ext-apps/server';

const [url, era] = process.argv.slice(2);
const app = JSON.parse(readFileSync(process.env.APP_JSON, 'utf8'));
let failed = false;
const check = (cond, what, detail = '') => {
  console.log(`${cond ? 'PASS' : 'FAIL'} ${era}: ${what}${cond ? '' : ': ' + detail}`);
  if (!cond) failed = true;
};
const schemaOK = (schema, v) => {
  const r = schema.safeParse(v);
  return [r.success && v !== undefined, r.success ? JSON.stringify(v) : JSON.stringify(r.error.issues)];
};

async function open(declare) {
  const capabilities = declare ? { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {};
  const versionNegotiation = era === '2026-07-28' ? { mode: { pin: era } } : { mode: 'legacy' };
  const client = new Client({ name: 'apps-host-check', version: '1' }, { capabilities, versionNegotiation });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

try {
  const client = await open(true);
  check(client.getProtocolEra() === (era === '2026-07-28' ? 'modern' : 'legacy'), 'the era', client.getProtocolEra());
  const caps = client.getServerCapabilities();
  check(getUiCapability(caps) !== undefined, `the server advertises ${EXTENSION_ID}`, JSON.stringify(caps));

  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ['get_weather', 'refresh_weather']) {
    const t = byName[name];
    if (!t) { check(false, `tools/list has ${name}`, JSON.stringify(tools)); continue; }
    let uri;
    try { uri = getToolUiResourceUri(t); } catch (e) { uri = `throws ${e.message}`; }
    check(uri === app.resource.uri, `getToolUiResourceUri(${name})`, String(uri));
    const [ok, detail] = schemaOK(McpUiToolMetaSchema, t._meta?.ui);
    check(ok, `McpUiToolMetaSchema accepts ${name}'s _meta.ui`, detail);
  }
  check(byName.refresh_weather && isToolVisibilityAppOnly(byName.refresh_weather), 'refresh_weather is app-only');
  check(byName.get_weather && !isToolVisibilityAppOnly(byName.get_weather) && !isToolVisibilityModelOnly(byName.get_weather),
    'get_weather is visible to the model and the app');

  const { resources } = await client.listResources();
  const listed = resources.find((r) => r.uri === app.resource.uri);
  check(listed?.mimeType === RESOURCE_MIME_TYPE, 'resources/list: the view has the app MIME type', JSON.stringify(resources));
  if (listed?._meta?.ui !== undefined) {
    const [ok, detail] = schemaOK(McpUiResourceMetaSchema, listed._meta.ui);
    check(ok, 'McpUiResourceMetaSchema accepts the listing\'s _meta.ui', detail);
  }

  const { contents } = await client.readResource({ uri: getToolUiResourceUri(byName.get_weather) });
  const c = contents?.[0];
  check(contents?.length === 1 && c.uri === app.resource.uri && c.mimeType === RESOURCE_MIME_TYPE, 'resources/read: one content of the app MIME type', JSON.stringify(contents));
  check(typeof c?.text === 'string' && c.text === app.resource.html, 'resources/read: the HTML document', JSON.stringify(c?.text));
  const [metaOK, metaDetail] = schemaOK(McpUiResourceMetaSchema, c?._meta?.ui);
  check(metaOK, 'McpUiResourceMetaSchema accepts the content\'s _meta.ui', metaDetail);
  const [cspOK, cspDetail] = schemaOK(McpUiResourceCspSchema, c?._meta?.ui?.csp);
  check(cspOK && JSON.stringify(c._meta.ui.csp) === JSON.stringify(app.resource.ui.csp), 'the CSP domains', cspDetail);
  check(buildAllowAttribute(c?._meta?.ui?.permissions) === 'geolocation; clipboard-write', 'buildAllowAttribute of the permissions',
    buildAllowAttribute(c?._meta?.ui?.permissions));
  check(c?._meta?.ui?.domain === app.resource.ui.domain && c?._meta?.ui?.prefersBorder === true, 'domain and prefersBorder', JSON.stringify(c?._meta?.ui));

  for (const [label, cl] of [['declared', client], ['bare', await open(false)]]) {
    const r = await cl.callTool({ name: 'get_weather', arguments: { location: 'Paris' } });
    const text = r.content?.[0]?.text;
    check(typeof text === 'string' && text.startsWith('Sunny in Paris'), `tools/call get_weather (${label})`, JSON.stringify(r));
    console.log(`CALL ${label} ${text}`);
    await cl.close();
  }
} catch (e) {
  check(false, 'no exception', e?.stack ?? String(e));
}
process.exit(failed ? 1 : 0);
