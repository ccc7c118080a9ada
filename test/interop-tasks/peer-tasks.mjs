// peer-tasks.mjs: a 2026-07-28 server of the Tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663) that mcpfn did not write, for
// package client's task support (tasks_test.go).
//
// No official server side of the extension exists for the 2026-07-28 era:
// @modelcontextprotocol/ext-tasks ships a requester (client) and a receiver
// of 2025-11-25 task-augmented sampling/elicitation only. So the server is
// the official TypeScript SDK v2 low-level Server (@modelcontextprotocol/server:
// era classification, the Mcp-Name = params.taskId header check of SEP-2663's
// Streamable HTTP binding, MRTR lifting of inputResponses) with the task
// state machine written here by hand, and every task message checked with
// the extension's own generated wire schemas (@modelcontextprotocol/ext-tasks/core/v2):
// each tasks/get, tasks/update and tasks/cancel the client sends must pass
// isGetTaskRequestV2 / isUpdateTaskRequestV2 / isCancelTaskRequestV2 and
// declare the extension (hasTaskClientCapabilityV2), and each
// CreateTaskResult and DetailedTask this server returns must pass
// isCreateTaskResultV2 / isDetailedTaskV2; failures are listed in stats.
//
// Tools (all answer with a task, pollIntervalMs 20):
//   greet      working for two polls, then input_required with one
//              elicitation "name"; the key stays outstanding for one more
//              poll after the answer (the update is eventually consistent),
//              then completed with "Hello, NAME!"
//   tool_error completed with isError true
//   fail       failed with the JSON-RPC error -32603 "backend exploded"
//   forever    working until tasks/cancel, then cancelled
// A tools/call that does not declare the extension gets -32021.
//
//   GET /admin/stats   {"gets":N,"updates":{taskId:{key:count}},"cancels":[taskId],
//                       "invalid":["what failed"],"created":[taskId]}
//
//   node peer-tasks.mjs   prints "serving MCP on http://127.0.0.1:PORT/mcp"
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import {
  hasTaskClientCapabilityV2, isCancelTaskRequestV2, isCreateTaskResultV2,
  isDetailedTaskV2, isGetTaskRequestV2, isUpdateTaskRequestV2,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import * as z from 'zod';

const EXT = 'io.modelcontextprotocol/tasks';
const POLL_MS = 20;
const stats = { gets: 0, updates: {}, cancels: [], invalid: [], created: [] };
const tasks = new Map(); // taskId → task record

const now = () => new Date().toISOString();

function missingCapability() {
  const e = new Error('Missing required client capability');
  e.code = -32021;
  e.data = { requiredCapabilities: { extensions: { [EXT]: {} } } };
  return e;
}

function unknownTask() {
  const e = new Error('Failed to retrieve task: Task not found');
  e.code = -32602;
  return e;
}

// view is the DetailedTask of t, the tasks/get result.
function view(t) {
  const v = {
    resultType: 'complete', taskId: t.id, status: t.status, createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt, ttlMs: 600000, pollIntervalMs: POLL_MS,
  };
  if (t.statusMessage) v.statusMessage = t.statusMessage;
  if (t.status === 'input_required') v.inputRequests = t.inputRequests;
  if (t.status === 'completed') v.result = t.result;
  if (t.status === 'failed') v.error = t.error;
  return v;
}

function set(t, status, extra = {}) {
  Object.assign(t, { status, lastUpdatedAt: now() }, extra);
}

// advance moves t on by one poll of tasks/get.
function advance(t) {
  t.polls++;
  if (t.status === 'cancelled' || t.status === 'completed' || t.status === 'failed') return;
  switch (t.tool) {
    case 'greet':
      if (t.answer !== undefined) {
        if (t.status === 'input_required' && !t.lagged) { t.lagged = true; return; } // eventually consistent
        set(t, 'completed', { statusMessage: 'greeted', result: { content: [{ type: 'text', text: `Hello, ${t.answer}!` }], isError: false } });
      } else if (t.polls >= 2 && t.status === 'working') {
        set(t, 'input_required', {
          statusMessage: 'waiting for a name',
          inputRequests: {
            name: {
              method: 'elicitation/create',
              params: {
                mode: 'form', message: 'Please enter your name.',
                requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
              },
            },
          },
        });
      }
      return;
    case 'tool_error':
      set(t, 'completed', { result: { content: [{ type: 'text', text: 'invalid input' }], isError: true } });
      return;
    case 'fail':
      set(t, 'failed', { statusMessage: 'Tool execution failed', error: { code: -32603, message: 'backend exploded' } });
  }
}

function check(ok, what) {
  if (!ok) stats.invalid.push(what);
}

const TaskParams = z.looseObject({ taskId: z.string() });

const handler = createMcpHandler(() => {
  const s = new Server({ name: 'peer-tasks', version: '1' }, { capabilities: { tools: {}, extensions: { [EXT]: {} } } });
  s.setRequestHandler('tools/list', async () => ({
    tools: ['greet', 'tool_error', 'fail', 'forever'].map((name) => ({ name, inputSchema: { type: 'object' } })),
  }));
  s.setRequestHandler('tools/call', async (req, ctx) => {
    // The SDK lifts the per-request _meta envelope out of params.
    if (!hasTaskClientCapabilityV2({ _meta: ctx.mcpReq.envelope })) throw missingCapability();
    const t = { id: randomUUID(), tool: req.params.name, status: 'working', createdAt: now(), polls: 0 };
    t.lastUpdatedAt = t.createdAt;
    tasks.set(t.id, t);
    stats.created.push(t.id);
    const r = { resultType: 'task', taskId: t.id, status: 'working', createdAt: t.createdAt, lastUpdatedAt: t.lastUpdatedAt, ttlMs: 600000, pollIntervalMs: POLL_MS };
    check(isCreateTaskResultV2(r), 'CreateTaskResult');
    return r;
  });
  s.setRequestHandler('tasks/get', { params: TaskParams }, async (p) => {
    stats.gets++;
    const t = tasks.get(p.taskId);
    if (!t) throw unknownTask();
    advance(t);
    const v = view(t);
    check(isDetailedTaskV2(v), `DetailedTask ${t.status}`);
    return v;
  });
  s.setRequestHandler('tasks/update', { params: TaskParams }, async (p, ctx) => {
    const t = tasks.get(p.taskId);
    if (!t) throw unknownTask();
    const responses = ctx.mcpReq.inputResponses ?? {};
    const seen = (stats.updates[t.id] ??= {});
    for (const [key, r] of Object.entries(responses)) {
      seen[key] = (seen[key] ?? 0) + 1;
      // Keys not outstanding are ignored (SEP-2663 §Task Update Requests).
      if (key === 'name' && t.status === 'input_required' && t.answer === undefined && r.action === 'accept') {
        t.answer = r.content?.name;
      }
    }
    return { resultType: 'complete' };
  });
  s.setRequestHandler('tasks/cancel', { params: TaskParams }, async (p) => {
    const t = tasks.get(p.taskId);
    if (!t) throw unknownTask();
    stats.cancels.push(t.id);
    if (t.status === 'working' || t.status === 'input_required') set(t, 'cancelled', { statusMessage: 'cancelled by the client' });
    return { resultType: 'complete' };
  });
  return s;
}, { legacy: 'reject' });

// checkWire checks a task request as it came off the wire with the
// extension's own schemas.
function checkWire(body) {
  let m;
  try { m = JSON.parse(body); } catch { return; }
  const guards = { 'tasks/get': isGetTaskRequestV2, 'tasks/update': isUpdateTaskRequestV2, 'tasks/cancel': isCancelTaskRequestV2 };
  const g = guards[m?.method];
  if (!g) return;
  check(g(m), `${m.method} request shape`);
  check(hasTaskClientCapabilityV2(m.params), `${m.method} without the extension declared`);
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://${req.headers.host}`);
    if (url.pathname === '/admin/stats') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(stats));
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    if (req.method === 'POST') checkWire(body.toString('utf8'));
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      for (const x of Array.isArray(v) ? v : [v]) headers.append(k, x);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const response = await handler.fetch(new Request(url, { method: req.method, headers, body: hasBody ? body : undefined }));
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
