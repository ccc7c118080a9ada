// peer-ts-v2.mjs: a 2026-07-28 server built with the official TypeScript SDK
// v2 (@modelcontextprotocol/server, createMcpHandler: a server instance per
// request, legacy requests refused), served by node:http.
//
//   - every caller gets the tool "where", whose inputSchema declares
//     x-mcp-header Region (string) and Level (integer); the SDK validates
//     the Mcp-Param-* headers against the body (-32020);
//   - the bearer tokens "alice" and "bob" see a tool of their own
//     (alice_tool, bob_tool); tools/list is private with a ttlMs of one
//     minute (cacheHints), so a client that caches it across credentials
//     shows it. Any other token gets 401. A caller without a token (the
//     host of stdio-host.mjs) also gets "progress" and "ask" (input_required).
//
//   GET /admin/stats   {"calls":[{Mcp-Param-* of each tools/call}],"lists":{token:N}}
//
//   node peer-ts-v2.mjs   prints "serving MCP on http://127.0.0.1:PORT/mcp"
import http from 'node:http';
import { McpServer, acceptedContent, createMcpHandler, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';

const users = { alice: 'alice_tool', bob: 'bob_tool' };
const stats = { calls: [], lists: {} };

const whereSchema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    level: { type: 'integer', 'x-mcp-header': 'Level' },
  },
};

function tokenOf(request) {
  const a = request?.headers.get('authorization') ?? '';
  return a.startsWith('Bearer ') ? a.slice(7) : '';
}

const handler = createMcpHandler((ctx) => {
  const s = new McpServer({ name: 'peer-ts-v2', version: '1' }, {
    cacheHints: { 'tools/list': { ttlMs: 60000, cacheScope: 'private' } },
  });
  s.registerTool('where', { description: 'mirrors region and level', inputSchema: fromJsonSchema(whereSchema) },
    async (args) => ({ content: [{ type: 'text', text: `region=${args.region} level=${args.level ?? 0}` }] }));
  // For the host of stdio-host.mjs, which sends no token: progress on the
  // request's stream, and a multi round-trip elicitation (input_required).
  if (!tokenOf(ctx.requestInfo)) s.registerTool('progress', { description: 'reports progress 1 and 2 of 2' }, async (c) => {
    const progressToken = c.mcpReq._meta?.progressToken;
    for (const progress of [1, 2]) {
      if (progressToken !== undefined) {
        await c.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 2 } });
      }
    }
    return { content: [{ type: 'text', text: 'done' }] };
  });
  if (!tokenOf(ctx.requestInfo)) s.registerTool('ask', { description: 'asks for a name' }, async (c) => {
    const got = acceptedContent(c.mcpReq.inputResponses, 'name');
    if (got) return { content: [{ type: 'text', text: `accept:${got.name}` }] };
    return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }) } });
  });
  const own = users[tokenOf(ctx.requestInfo)];
  if (own) {
    s.registerTool(own, { description: 'the caller\'s own tool' }, async () => ({ content: [{ type: 'text', text: own }] }));
  }
  return s;
}, { legacy: 'reject' });

function record(req) {
  const method = req.headers['mcp-method'];
  if (method === 'tools/call') {
    const h = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (k.startsWith('mcp-param-')) h['Mcp-Param-' + k.slice('mcp-param-'.length).replace(/^./, (c) => c.toUpperCase())] = String(v);
    }
    stats.calls.push(h);
  } else if (method === 'tools/list') {
    const tok = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    stats.lists[tok] = (stats.lists[tok] ?? 0) + 1;
  }
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://${req.headers.host}`);
    if (url.pathname === '/admin/stats') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(stats));
    }
    const tok = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (req.headers.authorization !== undefined && !users[tok]) {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"' });
      return res.end();
    }
    if (req.method === 'POST') record(req);
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      for (const x of Array.isArray(v) ? v : [v]) headers.append(k, x);
    }
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const response = await handler.fetch(new Request(url, {
      method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, signal: ac.signal,
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
