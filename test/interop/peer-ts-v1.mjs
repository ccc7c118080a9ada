// peer-ts-v1.mjs: a 2025-11-25 server built with the official TypeScript SDK
// v1 (@modelcontextprotocol/sdk), StreamableHTTPServerTransport with
// sessions, wired as the SDK's simpleStreamableHttp example is: a map of
// sessions, and an unknown or expired session id answered with HTTP 404 and
// {"error":{"code":-32001,"message":"Session not found"}}.
//
// Tools: "count" (a side effect: it counts its runs) and "echo"; for the
// host of stdio-host.mjs also "progress" and "ask" (an elicitation on the
// GET stream). Test hooks:
//   POST /admin/expire-next  the next request (not a notification) that
//                            carries a session id finds its session ended
//                            (closed and forgotten, as the example's idle
//                            sweep does), so it gets the 404
//   POST /admin/expire-all   end every session now
//   GET  /admin/stats        {"initialize":N,"count":N,"notFound":N,"sessions":N}
//
//   node peer-ts-v1.mjs      prints "serving MCP on http://127.0.0.1:PORT/mcp"
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

const stats = { initialize: 0, count: 0, notFound: 0 };
const sessions = new Map(); // id -> transport
let expireNext = false;

function newServer(stdioHost) {
  const s = new McpServer({ name: 'peer-ts-v1', version: '1' });
  s.registerTool('count', { description: 'counts its runs' }, async () => {
    stats.count++;
    return { content: [{ type: 'text', text: String(stats.count) }] };
  });
  s.registerTool('echo', { description: 'echo' }, async () => ({ content: [{ type: 'text', text: 'echo' }] }));
  if (!stdioHost) return s;
  // For the host of test/interop/stdio-host.mjs (its clientInfo, which the
  // bridge passes on): progress on the request's stream, and an elicitation
  // the server sends on the session's GET stream (no related request),
  // answered by a POST.
  s.registerTool('progress', { description: 'reports progress 1 and 2 of 2' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    for (const progress of [1, 2]) {
      if (progressToken !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 2 } });
      }
    }
    return { content: [{ type: 'text', text: 'done' }] };
  });
  s.registerTool('ask', { description: 'asks for a name' }, async () => {
    const r = await s.server.elicitInput({ message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } });
    return { content: [{ type: 'text', text: `${r.action}:${r.content?.name}` }] };
  });
  return s;
}

async function end(id) {
  const t = sessions.get(id);
  sessions.delete(id);
  if (t) await t.close();
}

function json(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

const notFound = (res) => {
  stats.notFound++;
  json(res, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
};

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/admin/expire-next' && req.method === 'POST') { expireNext = true; return json(res, 200, {}); }
    if (url.pathname === '/admin/expire-all' && req.method === 'POST') {
      for (const id of [...sessions.keys()]) await end(id);
      return json(res, 200, {});
    }
    if (url.pathname === '/admin/stats') return json(res, 200, { ...stats, sessions: sessions.size });
    if (url.pathname !== '/mcp') return json(res, 404, {});
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (sid && expireNext && req.method === 'POST' && isJSONRPCRequest(body)) {
      expireNext = false;
      await end(sid);
    }
    const t = sid ? sessions.get(sid) : undefined;
    if (t) return await t.handleRequest(req, res, body);
    if (sid) return notFound(res);
    if (req.method === 'POST' && isInitializeRequest(body)) {
      stats.initialize++;
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => { sessions.set(id, transport); },
      });
      transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
      await newServer(body.params?.clientInfo?.name === 'mcpfn-stdio-host').connect(transport);
      return await transport.handleRequest(req, res, body);
    }
    json(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
  } catch (e) {
    console.error(e);
    if (!res.headersSent) json(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
  }
});
server.listen(0, '127.0.0.1', () => {
  console.log(`serving MCP on http://127.0.0.1:${server.address().port}/mcp`);
});
