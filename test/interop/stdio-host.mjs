// stdio-host.mjs HOST MCPFN URL PROGRESS-TOOL ASK-TOOL ASK-ARGS WANT [ERA]: a
// desktop-style MCP host built with an official TypeScript SDK client and
// its StdioClientTransport, which spawns `MCPFN stdio URL` (cmd/mcpfn: the
// stdio bridge) as its server, as Claude Desktop and the like do. HOST:
//
//   v1         @modelcontextprotocol/sdk 1.x: initialize (2025-11-25)
//   v2         @modelcontextprotocol/client 2.x, its default: initialize
//   v2-modern  @modelcontextprotocol/client 2.x pinned to 2026-07-28:
//              per-request _meta, input_required answered by the client
//   v2-auto    @modelcontextprotocol/client 2.x probing the era with
//              server/discover over stdio (a sibling process), then
//              2026-07-28 or the fallback to initialize
//
// It lists the tools, calls PROGRESS-TOOL with a progress callback (at
// least one notifications/progress must arrive before the result), and
// calls ASK-TOOL with ASK-ARGS (JSON), answering the elicitation with
// {"name":"Ada","username":"ada","email":"ada@example.com"}: the result's
// text must contain WANT. A v2 host must have negotiated ERA, when given.
// Exits non-zero, with the reason, on the first wrong answer.
const [host, mcpfn, url, progressTool, askTool, askArgs, want, wantEra] = process.argv.slice(2);
const tag = `stdio(${host})`;
const fail = (msg) => { console.error(`${tag}: FAIL: ${msg}`); process.exit(1); };
const check = (cond, msg) => { if (!cond) fail(msg); else console.log(`${tag}: ok: ${msg}`); };

let client, transport, elicitations = 0;
const answer = async () => {
  elicitations++;
  return { action: 'accept', content: { name: 'Ada', username: 'ada', email: 'ada@example.com' } };
};
const params = { command: mcpfn, args: ['stdio', url], stderr: 'pipe' };
if (host === 'v1') {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  client = new Client({ name: 'mcpfn-stdio-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, answer);
  transport = new StdioClientTransport(params);
} else {
  const { Client } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const negotiation = { v2: undefined, 'v2-modern': { mode: { pin: '2026-07-28' } }, 'v2-auto': { mode: 'auto' } }[host];
  client = new Client({ name: 'mcpfn-stdio-host', version: '1.0.0' },
    { capabilities: { elicitation: {} }, ...(negotiation ? { versionNegotiation: negotiation } : {}) });
  client.setRequestHandler('elicitation/create', answer);
  transport = new StdioClientTransport(params);
}
let stderr = '';
transport.stderr?.on('data', (d) => { stderr += d; });
const timer = setTimeout(() => fail(`no answer within 60 s; the bridge's stderr:\n${stderr}`), 60000);
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check(names.includes(progressTool) && names.includes(askTool), `tools/list through the bridge: ${tools.length} tools`);

  // What crosses the bridge is read on the transport: the SDKs run
  // notification handlers a tick later than they settle responses, so
  // onprogress misses a notification that arrives with the result.
  let sent, arrived = [];
  const send = transport.send.bind(transport);
  transport.send = (m, ...rest) => {
    if (m.method === 'tools/call' && m.params?.name === progressTool) sent = m;
    return send(m, ...rest);
  };
  const onmessage = transport.onmessage;
  transport.onmessage = (m, ...rest) => {
    if (sent && (m.method === 'notifications/progress' || (m.method === undefined && m.id === sent.id))) arrived.push(m);
    return onmessage(m, ...rest);
  };
  const progress = [];
  const opts = { onprogress: (p) => progress.push(p.progress) };
  const p = { name: progressTool, arguments: {} };
  const r1 = host === 'v1' ? await client.callTool(p, undefined, opts) : await client.callTool(p, opts);
  check(!r1.isError && r1.content?.length > 0, `tools/call ${progressTool}`);
  const token = sent?.params?._meta?.progressToken;
  const notes = arrived.slice(0, -1);
  check(token !== undefined && notes.length > 0 && arrived.at(-1).id === sent.id &&
    notes.every((n) => n.method === 'notifications/progress' && n.params.progressToken === token) &&
    notes.every((n, i) => i === 0 || n.params.progress > notes[i - 1].params.progress),
    `progress crossed the bridge before the result, with the host's token ${token}: ` +
    `${JSON.stringify(notes.map((n) => n.params.progress))} (onprogress saw ${JSON.stringify(progress)})`);

  const r2 = await client.callTool({ name: askTool, arguments: JSON.parse(askArgs) });
  const text = r2.content?.map((c) => c.text).join(' ') ?? '';
  check(elicitations === 1, `the elicitation crossed the bridge (${elicitations} asked)`);
  check(text.includes(want), `tools/call ${askTool}: ${text}`);
  if (wantEra) {
    const era = client.getNegotiatedProtocolVersion?.();
    check(era === wantEra, `the host negotiated ${era}`);
  }
  await client.close();
} catch (e) {
  fail(`${e?.stack ?? e}\nthe bridge's stderr:\n${stderr}`);
}
clearTimeout(timer);
