// auth-client.mjs SDK URL: drive examples/auth (an OAuth-protected notes
// server) with an official TypeScript client: SDK "v1" is
// @modelcontextprotocol/sdk 1.x (2025-11-25), "v2" is
// @modelcontextprotocol/client 2.x (2026-07-28). The authorization server is
// auth/authtest, which approves at once; the provider below follows its
// redirect instead of a browser. The flow: 401 → resource metadata →
// authorization server metadata → dynamic registration → code with PKCE and
// resource → call → 403 insufficient_scope → step-up → success, twice.
const [sdk, endpoint] = process.argv.slice(2);
const fail = (msg) => { console.error(`interop-auth(${sdk}): FAIL: ${msg}`); process.exit(1); };
const check = (cond, msg) => { if (!cond) fail(msg); else console.log(`interop-auth(${sdk}): ok: ${msg}`); };

let Client, StreamableHTTPClientTransport, UnauthorizedError;
if (sdk === 'v1') {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
  ({ UnauthorizedError } = await import('@modelcontextprotocol/sdk/client/auth.js'));
} else {
  ({ Client, StreamableHTTPClientTransport, UnauthorizedError } = await import('@modelcontextprotocol/client'));
}

const redirectUrl = 'http://127.0.0.1:1/callback';
const authorizations = []; // the authorization requests, in order
let callback; // the redirect back from the last authorization

// An in-memory OAuthClientProvider whose "user agent" follows the
// authorization server's redirect without a browser.
const store = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { client_name: `mcpfn-interop-${sdk}`, redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  },
  state() { return 'interop-state'; },
  clientInformation() { return store.client; },
  saveClientInformation(c) { store.client = c; },
  tokens() { return store.tokens; },
  // SDK 1.x answers a 403 by refreshing the token without asking for the
  // new scope, which an RFC 6749 §6 server grants with the old scope; keep
  // no refresh token so that a step-up goes through the authorization
  // endpoint with the challenge's scope.
  saveTokens(t) { store.tokens = sdk === 'v1' ? { ...t, refresh_token: undefined } : t; },
  saveDiscoveryState(s) { store.discovery = s; },
  discoveryState() { return store.discovery; },
  saveCodeVerifier(v) { store.verifier = v; },
  codeVerifier() { return store.verifier; },
  async redirectToAuthorization(url) {
    authorizations.push(url);
    const res = await fetch(url, { redirect: 'manual' });
    if (res.status !== 302) fail(`authorization endpoint answered ${res.status}`);
    callback = new URL(res.headers.get('location'));
  },
};

// withAuth runs fn; after an UnauthorizedError (the provider "redirected"),
// it completes the authorization and runs fn once more.
async function withAuth(transport, fn) {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof UnauthorizedError) && e?.constructor?.name !== 'UnauthorizedError') throw e;
    check(callback?.searchParams.get('code'), `authorization ${authorizations.length} returned a code`);
    check(callback.searchParams.get('state') === 'interop-state', 'the state came back');
    check(callback.searchParams.get('iss')?.length > 0, 'the redirect carries iss (RFC 9207)');
    if (sdk === 'v1') await transport.finishAuth(callback.searchParams.get('code'));
    else await transport.finishAuth(callback.searchParams);
    return await fn();
  }
}

const url = new URL(endpoint);
// v2 negotiates the era only when asked (its default is the legacy
// handshake): pin 2026-07-28.
const client = new Client({ name: `mcpfn-interop-${sdk}`, version: '1.0.0' },
  sdk === 'v1' ? { capabilities: {} } : { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
try {
  await client.connect(transport);
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  // connect() started the transport: finish the authorization on it, then
  // connect a fresh one with the tokens.
  await transport.finishAuth(sdk === 'v1' ? callback.searchParams.get('code') : callback.searchParams);
  transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await client.connect(transport);
}
check(authorizations.length === 1, 'the first request was refused and authorized once');
const version = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
check(version === (sdk === 'v1' ? '2025-11-25' : '2026-07-28'), `protocol version ${version}`);
const first = authorizations[0];
check(first.searchParams.get('code_challenge_method') === 'S256', 'PKCE S256');
check(first.searchParams.get('resource') === endpoint, `resource=${first.searchParams.get('resource')}`);
check(first.searchParams.get('scope')?.split(' ').includes('notes:read'), `first scope: ${first.searchParams.get('scope')}`);

// The server hides what the token lacks the scopes for
// (auth.Options.HideUnauthorized): a notes:read token lists no write tool.
// The v2 client caches the list (the server's ttlMs) per principal, not
// per token: after a step-up of the same user it is refreshed on purpose.
const toolNames = async (opts) => (await withAuth(transport, () => client.listTools(undefined, opts))).tools.map((t) => t.name).sort().join(',');
const readOnly = await toolNames();
check(readOnly === 'list_notes', `tools listed with notes:read: ${readOnly}`);

const list = await withAuth(transport, () => client.callTool({ name: 'list_notes', arguments: {} }));
check(!list.isError, 'list_notes with the first token');

const wrote = await withAuth(transport, () => client.callTool({ name: 'write_note', arguments: { text: 'hello' } }));
check(/\d+ notes/.test(wrote.content?.[0]?.text ?? ''), `write_note after a step-up: ${wrote.content?.[0]?.text}`);
const second = authorizations.at(-1).searchParams.get('scope').split(' ');
check(second.includes('notes:write') && second.includes('notes:read'), `step-up scope: ${second.join(' ')}`);
const writer = await toolNames(sdk === 'v2' ? { cacheMode: 'refresh' } : undefined);
check(writer === 'list_notes,purge,write_note', `tools listed after the step-up to notes:write: ${writer}`);

const purged = await withAuth(transport, () => client.callTool({ name: 'purge', arguments: { all: true } }));
check(/deleted the notes of \d+ users/.test(purged.content?.[0]?.text ?? ''), `purge all after a run-time step-up: ${purged.content?.[0]?.text}`);
const third = authorizations.at(-1).searchParams.get('scope').split(' ');
check(third.includes('notes:admin'), `run-time step-up scope: ${third.join(' ')}`);
check(authorizations.length === 3, `${authorizations.length} authorizations`);
await client.close();
console.log(`interop-auth(${sdk}): all checks passed`);
