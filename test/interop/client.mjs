// client.mjs URL: drive an mcpfn server with the official TypeScript SDK
// client (@modelcontextprotocol/sdk 1.x, legacy era: initialize, sessions,
// server-to-client requests) and check what comes back. Exits non-zero, with
// the reason, on the first wrong answer.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const url = new URL(process.argv[2]);
const fail = (msg) => { console.error(`interop: FAIL: ${msg}`); process.exit(1); };
const check = (cond, msg) => { if (!cond) fail(msg); else console.log(`interop: ok: ${msg}`); };

const client = new Client(
  { name: 'mcpfn-interop', version: '1.0.0' },
  { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } },
);
const asked = { elicitation: [], sampling: [], roots: 0 };
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.elicitation.push(req.params);
  return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  asked.sampling.push(req.params);
  return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'interop-model', stopReason: 'endTurn' };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  asked.roots++;
  return { roots: [{ uri: 'file:///interop', name: 'interop' }] };
});

const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
check(client.getServerVersion()?.name === 'mcpfn-everything', `initialize: server ${client.getServerVersion()?.name}`);
check(typeof transport.sessionId === 'string' && transport.sessionId.length > 20, 'the server issued a session id');

// list
const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
check(names.includes('test_simple_text') && names.includes('test_elicitation'), `tools/list: ${tools.length} tools`);
check(tools.every((t) => t.inputSchema?.type === 'object'), 'every tool has an object input schema');
check(tools.every((t) => t.outputSchema === undefined || t.outputSchema.type === 'object'), 'legacy output schemas have object roots');

// call
const simple = await client.callTool({ name: 'test_simple_text', arguments: {} });
check(simple.content?.[0]?.text === 'This is a simple text response for testing.', 'tools/call test_simple_text');
const err = await client.callTool({ name: 'test_error_handling', arguments: {} });
check(err.isError === true && err.content?.[0]?.text?.length > 0, 'a tool error is an isError result');

// progress
const progress = [];
const prog = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
  onprogress: (p) => progress.push(p),
});
check(progress.length === 3 && progress[2].progress === 100 && progress[2].total === 100,
  `progress notifications: ${JSON.stringify(progress.map((p) => p.progress))}`);
check(prog.content?.[0]?.text?.length > 0, 'tools/call test_tool_with_progress completes');

// elicitation answered by the client's handler (the tool is written in the
// multi round-trip style; the server bridges it to elicitation/create)
const eli = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
check(asked.elicitation.length === 1 && asked.elicitation[0].message === 'Who are you?', 'the server sent elicitation/create');
check(/"username":"ada"/.test(eli.content?.[0]?.text ?? ''), `the tool got the answer: ${eli.content?.[0]?.text}`);

// sampling, and three inputs at once on one call's stream
const smp = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
check(smp.content?.[0]?.text === 'LLM response: Paris', `sampling: ${smp.content?.[0]?.text}`);

// resources and prompts
const res = await client.readResource({ uri: 'test://template/42/data' });
check(res.contents?.[0]?.text?.includes('42'), 'resources/read of a template resource');
const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x', arg2: 'y' } });
check(prompt.messages?.[0]?.content?.text?.includes("arg1='x'"), 'prompts/get with arguments');
try {
  await client.callTool({ name: 'no_such_tool', arguments: {} });
  fail('an unknown tool did not fail');
} catch (e) {
  check(e.code === -32602, `an unknown tool is JSON-RPC error ${e.code}`);
}

await transport.terminateSession();
await client.close();
console.log('interop: PASS');
