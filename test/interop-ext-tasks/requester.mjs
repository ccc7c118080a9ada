// requester.mjs: the official requester of the Tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663), @modelcontextprotocol/ext-tasks
// (its /client entry point), plugged into the official TypeScript SDK v2
// client (@modelcontextprotocol/client) pinned to 2026-07-28, against an MCP
// server given by URL (examples/everything served by mcpfn; see run.sh).
//
// A 2026-07-28 task session of the package needs a host-owned request
// coordinator (rawDispatch) for tools/call and tasks/*: the SDK client's own
// result codecs reject the task wire shapes (ext-tasks
// dist/client/sdk-client-adapter.js, requiresRawDispatch and the TypeError of
// the ClientSessionPort constructor). The coordinator here is a plain
// Streamable HTTP POST per request (2026-07-28 is stateless: the response
// comes on the POST, as JSON or as an SSE stream), with the standard headers
// (MCP-Protocol-Version, Mcp-Method, and Mcp-Name = params.name for
// tools/call, params.taskId for tasks/*; tasks spec, "Streamable HTTP"). It
// records every exchange with timestamps and checks each task message with
// the package's own generated wire schemas (@modelcontextprotocol/ext-tasks/core/v2).
//
// Checks, one PASS or FAIL line each:
//   create-shape   the CreateTaskResult of confirm_delete: resultType "task",
//                  the Task fields, nothing else of a result; isCreateTaskResultV2
//   input-round    confirm_delete goes input_required with one form
//                  elicitation "confirm"; the package's input handler answers
//                  it; one tasks/update carries it (Mcp-Name = taskId); the
//                  task completes with "Deleted report.pdf."
//   poll-interval  every tasks/get of the package's execution loop (the
//                  tasks of confirm_delete and failing_job) is sent at least
//                  pollIntervalMs after the previous exchange of its task
//                  ended; the hint must exceed the package's own 1000 ms
//                  fallback (run.sh passes -task-poll 1200ms)
//   cancel         slow_compute (60 s) is cancelled through the package once
//                  a tasks/get showed it working; the outcome is cancelled,
//                  and the package's polling helper (task(id).result()) sees
//                  the task end cancelled on the server
//   is-error       failing_job ends completed with isError true (not failed)
//   inlined-result the result inlined in each completed DetailedTask is a
//                  2026-07-28 CallToolResult (resultType "complete"), which the
//                  package's default result codec (CallToolResultV2Schema)
//                  requires to hand it to the application
//   resume         a slow_compute task is handed off (serializeReference),
//                  the session and client closed, and resumed (resumeTask)
//                  on a fresh connection to completion
//   limit          slow_compute called with 190 KiB arguments, again and again:
//                  once the anonymous pool holds the server's bound of task
//                  bytes (16 MiB), the call is refused, and the package
//                  surfaces the refusal as a JSON-RPC error with code -31429,
//                  data.reason "too_many_task_bytes" and data.retryAfterMs,
//                  sent with HTTP 429 and Retry-After; the tasks created
//                  before it settle completed
//   schemas        every task request sent and every task result received
//                  passes the package's V2 schemas; every tasks/* request and
//                  task-creating tools/call declares the extension
//
//   node requester.mjs URL
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient, DispatchError, toolDeclarationFromMcpTool,
} from '@modelcontextprotocol/ext-tasks/client';
import {
  CallToolResultV2Schema, CancelTaskResultV2Schema, GetTaskResultV2Schema, UpdateTaskResultV2Schema,
  hasTaskClientCapabilityV2, hasTaskServerCapabilityV2, isCancelTaskRequestV2,
  isCreateTaskResultV2, isDetailedTaskV2, isGetTaskRequestV2, isUpdateTaskRequestV2,
} from '@modelcontextprotocol/ext-tasks/core/v2';

const url = process.argv[2];
if (!url) {
  console.error('usage: node requester.mjs URL');
  process.exit(2);
}
const VERSION = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const REQUEST_TIMEOUT_MS = 10_000; // one exchange; the server answers task requests at once
const MAX_BODY = 1 << 20; // bytes of one response
const POLL_SLACK_MS = 10; // see poll-interval
// The requester's cadence for a task without pollIntervalMs (ext-tasks
// 0.2.2 dist/client/execution.js DEFAULT_TASK_POLL_INTERVAL_MS): a hint above
// it tells honouring the hint from ignoring it.
const PACKAGE_DEFAULT_POLL_MS = 1000;
const clientInfo = { name: 'mcpfn-interop-ext-tasks', version: '1.0.0' };
const clientCapabilities = { elicitation: { form: {} } };

let failed = 0;
const pass = (name, detail) => console.log(`PASS ${name}${detail ? `: ${detail}` : ''}`);
const fail = (name, why) => { failed++; console.log(`FAIL ${name}: ${why}`); };
const invalid = []; // schema or framing violations seen by the coordinator
const exchanges = []; // {method, taskId, sentAt, doneAt, request, headers, response}
const watchers = new Set(); // {pred, resolve}: whenExchange callers

// whenExchange resolves with the first finished exchange matching pred, or
// undefined after ms.
function whenExchange(pred, ms) {
  const found = exchanges.find((e) => e.response && pred(e));
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => {
    const w = { pred, resolve: (e) => { clearTimeout(timer); watchers.delete(w); resolve(e); } };
    const timer = setTimeout(() => w.resolve(undefined), ms);
    watchers.add(w);
  });
}

// readBody reads at most MAX_BODY bytes of res.
async function readBody(res) {
  const reader = res.body.getReader();
  const chunks = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > MAX_BODY) {
      await reader.cancel();
      throw new DispatchError(`response larger than ${MAX_BODY} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// responseFor finds the JSON-RPC response with the given id in a JSON body or
// an SSE stream (notifications before it are skipped).
function responseFor(id, contentType, body) {
  if (contentType.startsWith('application/json')) return JSON.parse(body);
  if (contentType.startsWith('text/event-stream')) {
    for (const event of body.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.id === id && ('result' in msg || 'error' in msg)) return msg;
    }
    throw new DispatchError(`no response to ${id} in the event stream`);
  }
  throw new DispatchError(`unexpected Content-Type ${JSON.stringify(contentType)}`);
}

// checkExchange validates one task exchange with the package's schemas.
function checkExchange(request, response) {
  const { method, params } = request;
  const declared = hasTaskClientCapabilityV2(params);
  const check = (ok, what) => { if (!ok) invalid.push(`${method}: ${what}`); };
  if (method.startsWith('tasks/')) check(declared, 'request does not declare the extension');
  if (response.error) return;
  const result = response.result;
  switch (method) {
    case 'tools/call':
      if (result?.resultType === 'task') {
        check(declared, 'a task for a request that did not declare the extension');
        check(isCreateTaskResultV2(result), `CreateTaskResult fails the schema: ${JSON.stringify(result)}`);
      }
      break;
    case 'tasks/get':
      check(isGetTaskRequestV2(request), `request fails the schema: ${JSON.stringify(request)}`);
      check(GetTaskResultV2Schema.safeParse(result).success, `result fails GetTaskResult: ${JSON.stringify(result)}`);
      check(isDetailedTaskV2(result), `result fails DetailedTask: ${JSON.stringify(result)}`);
      break;
    case 'tasks/update':
      check(isUpdateTaskRequestV2(request), `request fails the schema: ${JSON.stringify(request)}`);
      check(UpdateTaskResultV2Schema.safeParse(result).success, `result fails UpdateTaskResult: ${JSON.stringify(result)}`);
      break;
    case 'tasks/cancel':
      check(isCancelTaskRequestV2(request), `request fails the schema: ${JSON.stringify(request)}`);
      check(CancelTaskResultV2Schema.safeParse(result).success, `result fails CancelTaskResult: ${JSON.stringify(result)}`);
      break;
  }
}

// rawDispatch is the host request coordinator of the package's V2 path: it
// owns the request ids (a namespace of its own, apart from the SDK client's
// integer ids) and matches each response to its request.
let nextId = 0;
async function rawDispatch(request, options = {}) {
  const id = `ext-tasks-${++nextId}`;
  const message = { jsonrpc: '2.0', id, method: request.method, ...(request.params === undefined ? {} : { params: request.params }) };
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': VERSION,
    'Mcp-Method': request.method,
    ...(options.context?.headers ?? {}),
  };
  const name = request.method === 'tools/call' ? request.params?.name : request.params?.taskId;
  if (typeof name === 'string') headers['Mcp-Name'] = name;
  const signals = [AbortSignal.timeout(options.context?.requestTimeoutMs ?? REQUEST_TIMEOUT_MS)];
  if (options.signal) signals.push(options.signal);
  const ex = { method: request.method, taskId: request.params?.taskId, sentAt: performance.now(), request: message, headers };
  exchanges.push(ex);
  let res;
  try {
    res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message), signal: AbortSignal.any(signals), redirect: 'error' });
  } catch (e) {
    throw new DispatchError(`${request.method}: ${e.message}`, true, { cause: e });
  }
  const body = await readBody(res);
  ex.doneAt = performance.now();
  ex.status = res.status;
  ex.retryAfter = res.headers.get('retry-after');
  ex.contentType = (res.headers.get('content-type') ?? '').split(';')[0];
  let msg;
  try {
    msg = responseFor(id, res.headers.get('content-type') ?? '', body);
  } catch (e) {
    throw new DispatchError(`${request.method}: HTTP ${res.status}: ${e.message}: ${body.slice(0, 200)}`, false, { cause: e });
  }
  ex.response = msg;
  if (msg.id !== id) throw new DispatchError(`${request.method}: response id ${JSON.stringify(msg.id)}, want ${id}`);
  checkExchange(message, msg);
  for (const w of [...watchers]) if (w.pred(ex)) w.resolve(ex);
  if (msg.error) return { kind: 'error', error: msg.error };
  return { kind: 'result', result: msg.result };
}

const timeout = setTimeout(() => { console.log('FAIL requester: did not finish within 60s'); process.exit(1); }, 60_000);
timeout.unref();

const inputs = []; // what the package's input handler was asked
let tools = new Map(); // the server's tools as the package's declarations

// open connects a fresh SDK client (server/discover, 2026-07-28) and
// creates a task session of the package on it.
async function open() {
  const client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: { pin: VERSION } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  if (client.getProtocolEra() !== 'modern') fail('connect', `era ${client.getProtocolEra()}, want modern`);
  if (!hasTaskServerCapabilityV2(client.getServerCapabilities())) fail('connect', `server/discover does not advertise ${EXT}: ${JSON.stringify(client.getServerCapabilities())}`);
  tools = new Map((await client.listTools()).tools.map((t) => [t.name, toolDeclarationFromMcpTool(t)]));
  for (const name of ['confirm_delete', 'slow_compute', 'failing_job']) {
    if (!tools.has(name)) fail('tools', `the server lists no tool ${name}`);
  }
  const session = createTaskSessionFromClient(client, {
    endpointId: `mcpfn-everything:${url}`,
    rawDispatch,
    v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities },
    tools: { currentTool: (name) => tools.get(name) },
    onInputRequest: async (request, context) => {
      inputs.push({ request, context });
      if (request.kind !== 'elicitation') throw new Error(`unexpected input request ${request.kind}`);
      return { action: 'accept', content: { confirm: true } };
    },
    onError: (e) => fail('session', e.message),
  });
  return { client, session, close: async () => { await session.close(); await client.close(); } };
}

let { session, close } = await open();

const polled = []; // tasks driven by the package's execution loop, for poll-interval
const taskExchanges = (taskId) => exchanges.filter((e) => e.taskId === taskId);
const textOf = (result) => (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');

// run calls a tool, which must answer with a task, and starts settling it,
// keeping every task event the package reports.
async function run(name, args) {
  const execution = await session.callTool(name, args, { task: { preference: 'require' } });
  if (execution.kind !== 'task') throw new Error(`${name}: an immediate result, want a task`);
  const events = [];
  return { execution, events, settled: execution.settle({ onEvent: (e) => { events.push(e); } }) };
}

// A: one input round.
try {
  const { execution, events, settled } = await run('confirm_delete', { filename: 'report.pdf' });
  const taskId = execution.handle.taskId;
  const create = exchanges.find((e) => e.method === 'tools/call' && e.response?.result?.taskId === taskId);
  const created = create?.response?.result ?? {};
  const { outcome } = await settled;

  // create-shape
  const problems = [];
  if (created.resultType !== 'task') problems.push(`resultType ${JSON.stringify(created.resultType)}`);
  if (typeof created.taskId !== 'string' || created.taskId === '') problems.push('no taskId');
  if (!['working', 'input_required'].includes(created.status)) problems.push(`status ${created.status}`);
  for (const k of ['createdAt', 'lastUpdatedAt']) {
    if (typeof created[k] !== 'string' || Number.isNaN(Date.parse(created[k]))) problems.push(`${k} ${JSON.stringify(created[k])}`);
  }
  if (!(created.ttlMs === null || Number.isInteger(created.ttlMs))) problems.push(`ttlMs ${JSON.stringify(created.ttlMs)}`);
  if (!(Number.isInteger(created.pollIntervalMs) && created.pollIntervalMs > 0)) problems.push(`pollIntervalMs ${JSON.stringify(created.pollIntervalMs)}`);
  for (const k of ['result', 'error', 'inputRequests', 'requestState', 'content']) if (k in created) problems.push(`unexpected ${k}`);
  if (!isCreateTaskResultV2(created)) problems.push('fails isCreateTaskResultV2');
  if (create?.headers?.['Mcp-Name'] !== 'confirm_delete') problems.push('tools/call without Mcp-Name');
  if (problems.length) fail('create-shape', `${problems.join('; ')}: ${JSON.stringify(created)}`);
  else pass('create-shape', `status ${created.status}, pollIntervalMs ${created.pollIntervalMs}, ttlMs ${created.ttlMs}`);

  // input-round
  const updates = taskExchanges(taskId).filter((e) => e.method === 'tasks/update');
  const statuses = events.filter((e) => e.type === 'task').map((e) => e.task.status);
  const sawInput = taskExchanges(taskId).some((e) => e.method === 'tasks/get' && e.response?.result?.status === 'input_required' &&
    e.response.result.inputRequests?.confirm?.method === 'elicitation/create');
  const answer = updates[0]?.request?.params?.inputResponses?.confirm;
  const p = [];
  if (!sawInput) p.push('no tasks/get showed input_required with inputRequests.confirm (elicitation/create)');
  if (!statuses.includes('input_required')) p.push(`the package reported no input_required (events ${statuses.join(',')})`);
  if (inputs.length !== 1) p.push(`${inputs.length} input handler calls, want 1`);
  else {
    const [{ request, context }] = inputs;
    if (request.kind !== 'elicitation' || request.params?.mode !== 'form' || !/report\.pdf/.test(request.params?.message ?? '')) p.push(`input request ${JSON.stringify(request)}`);
    if (context.scope !== 'task' || context.delivery !== 'task-update' || context.taskId !== taskId || context.inputId !== 'confirm') p.push(`input context ${JSON.stringify({ ...context, signal: undefined })}`);
  }
  if (updates.length !== 1) p.push(`${updates.length} tasks/update, want 1`);
  else {
    if (updates[0].headers['Mcp-Name'] !== taskId) p.push(`tasks/update Mcp-Name ${updates[0].headers['Mcp-Name']}`);
    if (answer?.action !== 'accept' || answer?.content?.confirm !== true) p.push(`tasks/update answer ${JSON.stringify(answer)}`);
    if (updates[0].response?.error) p.push(`tasks/update error ${JSON.stringify(updates[0].response.error)}`);
  }
  if (outcome.status !== 'completed') p.push(`outcome ${outcome.status} ${outcome.error?.message ?? ''}`);
  else if (textOf(outcome.result) !== 'Deleted report.pdf.' || outcome.result.isError) p.push(`result ${JSON.stringify(outcome.result)}`);
  if (p.length) fail('input-round', p.join('; '));
  else pass('input-round', `statuses ${statuses.join(' → ')}, 1 tasks/update, result "${textOf(outcome.result)}"`);

  polled.push(taskId);
} catch (e) {
  fail('input-round', e.stack);
}

// B: cancel a long-running task once it is working.
try {
  const { execution, settled } = await run('slow_compute', { seconds: 60, label: 'cancel-me' });
  const taskId = execution.handle.taskId;
  const started = performance.now();
  // Cancel once a tasks/get has shown the handler working (bounded).
  const seen = await whenExchange((e) => e.method === 'tasks/get' && e.taskId === taskId && e.response?.result, 10_000);
  const sawWorking = seen?.response.result.status === 'working';
  await execution.cancel();
  const { outcome } = await settled;
  // Cancellation is eventually consistent (tasks.md §Task Cancellation): the
  // package's own polling helper waits for the terminal status, at
  // pollIntervalMs, bounded.
  const ended = await session.task(taskId).result({ signal: AbortSignal.timeout(10_000) });
  const elapsed = performance.now() - started;
  const cancels = taskExchanges(taskId).filter((e) => e.method === 'tasks/cancel');
  const p = [];
  if (!sawWorking) p.push(`before the cancel, tasks/get said ${JSON.stringify(seen?.response?.result ?? 'nothing within 10s')}`);
  if (cancels.length < 1) p.push('no tasks/cancel sent');
  else {
    if (cancels[0].headers['Mcp-Name'] !== taskId) p.push(`tasks/cancel Mcp-Name ${cancels[0].headers['Mcp-Name']}`);
    if (cancels.some((c) => c.response?.error)) p.push(`tasks/cancel error ${JSON.stringify(cancels.find((c) => c.response?.error).response.error)}`);
  }
  if (outcome.status !== 'cancelled') p.push(`outcome ${outcome.status}`);
  if (ended.status !== 'cancelled') p.push(`tasks/get after the cancel: ${ended.status}`);
  if (p.length) fail('cancel', p.join('; '));
  else pass('cancel', `working ("${seen.response.result.statusMessage ?? ''}") → cancelled, ${elapsed.toFixed(0)}ms after creation, ${cancels.length} tasks/cancel`);
} catch (e) {
  fail('cancel', e.stack);
}

// C: a tool error is a completed task with isError.
try {
  const { execution, settled } = await run('failing_job', {});
  polled.push(execution.handle.taskId);
  const { outcome } = await settled;
  const last = taskExchanges(execution.handle.taskId).filter((e) => e.method === 'tasks/get').at(-1)?.response?.result;
  const p = [];
  if (outcome.status !== 'completed') p.push(`outcome ${outcome.status} ${outcome.error?.message ?? ''}`);
  else if (outcome.result.isError !== true) p.push(`result ${JSON.stringify(outcome.result)}`);
  if (last?.status !== 'completed' || last?.result?.isError !== true || 'error' in (last ?? {})) p.push(`last tasks/get ${JSON.stringify(last)}`);
  if (p.length) fail('is-error', p.join('; '));
  else pass('is-error', `completed, isError, "${textOf(outcome.result)}"`);
} catch (e) {
  fail('is-error', e.stack);
}

// D: the task outlives the requester's connection: hand it off, close the
// session and the client, resume it from a fresh connection.
try {
  const execution = await session.callTool('slow_compute', { seconds: 1, label: 'resume' }, { task: { preference: 'require' } });
  if (execution.kind !== 'task') throw new Error('slow_compute: an immediate result, want a task');
  let reference;
  await execution.handoff((r) => { reference = JSON.parse(JSON.stringify(r)); }); // as if persisted
  // handoff() only aborts the local driver; until that abort has settled the
  // execution, session.close() still counts it as live and cancels the task
  // (ext-tasks 0.2.2 dist/client/execution.js close(): shouldCancel =
  // !this.settled). Wait for the local execution to end first.
  await execution.result().catch(() => {});
  await close();
  ({ session, close } = await open());
  const resumed = await session.resumeTask(reference);
  const { outcome } = await resumed.settle();
  const p = [];
  if (reference?.generation !== 'v2' || reference?.taskId !== execution.handle.taskId || reference?.originalOperation !== 'tools/call') p.push(`reference ${JSON.stringify(reference)}`);
  if (taskExchanges(execution.handle.taskId).some((e) => e.method === 'tasks/cancel')) p.push('the handed-off task was cancelled');
  if (outcome.status !== 'completed') p.push(`outcome ${outcome.status} ${outcome.error?.message ?? ''}`);
  else if (textOf(outcome.result) !== 'computed "resume" in 1s') p.push(`result ${JSON.stringify(outcome.result)}`);
  if (p.length) fail('resume', p.join('; '));
  else pass('resume', `task ${reference.taskId.slice(0, 8)}… resumed on a new connection, "${textOf(outcome.result)}"`);
} catch (e) {
  fail('resume', e.stack);
}

// E: a bound of the server (task bytes of the anonymous pool) reached.
try {
  const label = 'x'.repeat(190 << 10); // the record holds it twice (arguments, result): under 400 KiB
  const created = [];
  let refusal;
  for (let i = 0; i < 120 && !refusal; i++) {
    try {
      const execution = await session.callTool('slow_compute', { seconds: 0, label }, { task: { preference: 'require' } });
      if (execution.kind !== 'task') throw new Error('an immediate result, want a task');
      created.push(execution);
    } catch (e) {
      refusal = e;
    }
  }
  const outcomes = await Promise.all(created.map((x) => x.settle().then((r) => r.outcome)));
  const refused = exchanges.filter((e) => e.method === 'tools/call' && e.response?.error).at(-1);
  const p = [];
  if (!refusal) p.push('120 calls of 190 KiB all became tasks (the bound is 16 MiB)');
  else {
    if (refusal.code !== -31429) p.push(`the package raised ${refusal.constructor?.name} code ${refusal.code}: ${refusal.message}`);
    if (refusal.data?.reason !== 'too_many_task_bytes' || !(refusal.data?.retryAfterMs > 0)) p.push(`data ${JSON.stringify(refusal.data)}`);
    if (refused?.status !== 429 || !/^[1-9][0-9]*$/.test(refused?.retryAfter ?? '')) p.push(`HTTP ${refused?.status}, Retry-After ${JSON.stringify(refused?.retryAfter)}`);
  }
  if (created.length < 40) p.push(`only ${created.length} tasks before the refusal`);
  if (outcomes.some((o) => o.status !== 'completed')) p.push(`outcomes of the tasks before the refusal: ${[...new Set(outcomes.map((o) => o.status + ' ' + (o.error?.message ?? '')))].join(', ')}`);
  if (p.length) fail('limit', p.join('; '));
  else pass('limit', `${created.length} tasks of 190 KiB, then ${refusal.constructor?.name} ${refusal.code} (${refusal.data.reason}, retry after ${refusal.data.retryAfterMs} ms; HTTP ${refused.status}, Retry-After ${refused.retryAfter})`);
} catch (e) {
  fail('limit', e.stack);
}

await close();

// poll-interval: in the execution loop of the package, each tasks/get of a
// task waits pollIntervalMs (the latest the requester was told) after the
// previous exchange of that task ended. Node arms a timer from the event
// loop's cached clock, taken when the loop iteration began, so a poll may
// come a few milliseconds "early" by performance.now(): 10 ms of slack.
{
  let gets = 0;
  const early = [];
  const intervals = new Set();
  let minGap = Infinity;
  for (const taskId of polled) {
    const seq = exchanges.filter((e) => (e.method === 'tools/call' && e.response?.result?.taskId === taskId) || e.taskId === taskId);
    let interval = seq[0]?.response?.result?.pollIntervalMs;
    for (let i = 1; i < seq.length; i++) {
      const gap = seq[i].sentAt - seq[i - 1].doneAt;
      if (seq[i].method === 'tasks/get') {
        gets++;
        intervals.add(interval);
        minGap = Math.min(minGap, gap);
        if (!(gap >= interval - POLL_SLACK_MS)) early.push(`tasks/get of ${taskId} ${gap.toFixed(1)}ms after ${seq[i - 1].method}, pollIntervalMs ${interval}`);
        const pi = seq[i].response?.result?.pollIntervalMs;
        if (Number.isInteger(pi)) interval = pi;
      }
    }
  }
  if ([...intervals].some((i) => !(i > PACKAGE_DEFAULT_POLL_MS))) {
    fail('poll-interval', `pollIntervalMs ${[...intervals].join(', ')}: the check needs a hint above the package's own fallback of ${PACKAGE_DEFAULT_POLL_MS} ms (run the fixture with -task-poll)`);
  } else if (gets < 3) fail('poll-interval', `${gets} tasks/get in the execution loops, want at least 3`);
  else if (early.length) fail('poll-interval', early.join('; '));
  else pass('poll-interval', `${gets} tasks/get of ${polled.length} tasks, none sooner than pollIntervalMs (${[...intervals].join(', ')}): the shortest gap ${minGap.toFixed(1)}ms`);
}

const inlined = exchanges.filter((e) => e.method === 'tasks/get' && e.response?.result?.status === 'completed').map((e) => e.response.result.result);
const bad = inlined.filter((r) => !CallToolResultV2Schema.safeParse(r).success);
if (inlined.length === 0) fail('inlined-result', 'no completed task seen');
else if (bad.length) fail('inlined-result', `${bad.length} of ${inlined.length} fail CallToolResultV2Schema, e.g. ${JSON.stringify(bad[0])}`);
else pass('inlined-result', `${inlined.length} inlined results are CallToolResults`);

const kinds = {};
const types = {};
for (const e of exchanges) {
  kinds[e.method] = (kinds[e.method] ?? 0) + 1;
  types[e.contentType] = (types[e.contentType] ?? 0) + 1;
}
if (invalid.length) fail('schemas', invalid.join('; '));
else pass('schemas', `${exchanges.length} exchanges valid (${Object.entries(kinds).map(([k, v]) => `${k} ${v}`).join(', ')}; as ${Object.entries(types).map(([k, v]) => `${k} ${v}`).join(', ')})`);
// For run.sh, which compares it with the server's request log.
console.log(`COUNT ${['tools/call', 'tasks/get', 'tasks/update', 'tasks/cancel'].map((m) => `${m}=${kinds[m] ?? 0}`).join(' ')}`);
process.exit(failed ? 1 : 0);
