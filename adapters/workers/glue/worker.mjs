// worker.mjs: the entry module of a Worker built with
// github.com/mcpfn/mcpfn/adapters/workers. It starts Go instances from
// app.wasm (with Go's wasm_exec.js), hands each request to the instance and
// carries out, in that request's own context, what Go posts to the request:
// Workers tie every promise, timer and stream to the request whose code
// created it, and Go's scheduler resumes goroutines from whichever callback
// is running, so Go never touches a request's JavaScript objects itself.
import { WorkerEntrypoint, env as startEnv } from "cloudflare:workers";
import "./wasm_exec.js";
import wasm from "./app.wasm";

export { McpfnState } from "./state.mjs";

// TICK_MS is the period at which a pending request resumes Go's scheduler
// (Go's own timers may belong to a request that has ended) and drains its
// queue.
const TICK_MS = 2;
// MAX_TICK_MS is the longest pause of an idle request's tick.
const MAX_TICK_MS = 64;

// KEEPALIVE_MS is how long a streamed event-stream response may stay
// silent before the glue writes an SSE comment (":", which clients ignore).
// Workers learn that a client went away only when a write to its stream
// fails: the comment is what cancels the handler of a silent stream whose
// client disconnected.
const KEEPALIVE_MS = 1000;
const KEEPALIVE = new TextEncoder().encode(":\n\n");

// ENV_BYTES bounds the string bindings handed to Go as its environment:
// wasm_exec.js writes argv and the environment below 12 KiB of linear
// memory.
const ENV_BYTES = 7000;

let seq = 0;
let shared = null; // the instance requests share, unless MCPFN_GO_INSTANCE=request

function stringBindings(env) {
  const out = {};
  let size = 0;
  for (const [k, v] of Object.entries(env)) {
    if (typeof v !== "string") continue;
    size += k.length + v.length + 2;
    out[k] = v;
  }
  if (size > ENV_BYTES) {
    throw new Error(`mcpfn: the Worker's string bindings take ${size} bytes; Go's environment holds at most ${ENV_BYTES}`);
  }
  return out;
}

// start starts a Go instance. Go's runtime reads random bytes and the
// clock as it starts, which Workers allow only inside a request: start is
// called from one.
function start(env) {
  const go = new globalThis.Go();
  go.argv = ["worker"];
  go.env = stringBindings(env);
  const s = { go, api: null, dead: false, live: new Set(), entered: 0 };
  s.ready = WebAssembly.instantiate(wasm, go.importObject).then((inst) => {
    globalThis.__mcpfnRegister = (api) => { s.api = api; };
    let exit;
    try {
      exit = go.run(inst); // runs main until it blocks in workers.Serve
    } finally {
      delete globalThis.__mcpfnRegister;
    }
    exit.then(() => { s.dead = true; }, () => { s.dead = true; });
    if (!s.api || go.exited) {
      s.dead = true;
      throw new Error("mcpfn: the Go program exited before it called workers.Serve");
    }
    return s;
  });
  s.ready.catch(() => { s.dead = true; });
  return s;
}

// startEager starts the shared instance while the isolate starts (global
// scope), with MCPFN_EAGER_START=1: the first request then finds main
// done. At global scope Workers refuse crypto.getRandomValues and timers,
// and clocks read 0. Go's runtime reads random bytes once as it starts, to
// seed its own generator (map hash seeds, not secrets): that one read is
// served from Math.random, and any further read at global scope (crypto/rand
// in a package initialiser or main) fails the start, which then happens in
// the first request instead. A timer Go sets at global scope is dropped:
// the first request's tick re-enters Go, which runs every timer that is due.
function startEager(env) {
  const go = new globalThis.Go();
  go.argv = ["worker"];
  go.env = stringBindings(env);
  const s = { go, api: null, dead: false, live: new Set(), entered: 0, eager: true };
  const imp = go.importObject.gojs;
  const random = imp["runtime.getRandomData"];
  const timeout = imp["runtime.scheduleTimeoutEvent"];
  const nanotime = imp["runtime.nanotime1"];
  let phase = "start", seeded = false, clock = 0, refused = "";
  // Go's monotonic clock must not read 0, and must never go back: at
  // global scope it counts up a microsecond a reading; afterwards it is
  // the real clock (epoch-based, far ahead), never below the last reading.
  imp["runtime.nanotime1"] = (sp) => {
    sp >>>= 0;
    const mem = new DataView(go._inst.exports.mem.buffer);
    if (phase === "start") {
      clock += 1000;
      mem.setBigInt64(sp + 8, BigInt(clock), true);
      return;
    }
    nanotime(sp);
    const now = Number(new DataView(go._inst.exports.mem.buffer).getBigInt64(sp + 8, true));
    if (now <= clock) {
      clock += 1;
      new DataView(go._inst.exports.mem.buffer).setBigInt64(sp + 8, BigInt(clock), true);
    } else {
      clock = now;
    }
  };
  imp["runtime.getRandomData"] = (sp) => {
    if (phase !== "start") return random(sp);
    if (seeded) {
      refused = "random bytes read at global scope (crypto/rand in an initialiser or main)";
      throw new Error(refused);
    }
    seeded = true;
    sp >>>= 0;
    const mem = new DataView(go._inst.exports.mem.buffer);
    const ptr = Number(mem.getBigInt64(sp + 8, true)), len = Number(mem.getBigInt64(sp + 16, true));
    const b = new Uint8Array(go._inst.exports.mem.buffer, ptr, len);
    for (let i = 0; i < len; i++) b[i] = Math.floor(Math.random() * 256);
  };
  imp["runtime.scheduleTimeoutEvent"] = (sp) => {
    if (phase !== "start") return timeout(sp);
    sp >>>= 0;
    const mem = new DataView(go._inst.exports.mem.buffer);
    mem.setInt32(sp + 16, go._nextCallbackTimeoutID++, true);
  };
  const inst = new WebAssembly.Instance(wasm, go.importObject);
  globalThis.__mcpfnRegister = (api) => { s.api = api; };
  try {
    go.run(inst).then(() => { s.dead = true; }, () => { s.dead = true; });
  } finally {
    delete globalThis.__mcpfnRegister;
    phase = "served";
  }
  if (refused) throw new Error(refused);
  if (!s.api || go.exited) throw new Error("mcpfn: the Go program exited before it called workers.Serve");
  s.ready = Promise.resolve(s);
  return s;
}

if (startEnv && startEnv.MCPFN_EAGER_START === "1" && startEnv.MCPFN_GO_INSTANCE !== "request") {
  try {
    shared = startEager(startEnv);
  } catch (e) {
    console.error("mcpfn: eager start failed; starting in the first request:", e && e.stack ? e.stack : String(e));
    shared = null;
  }
}

function instance(env) {
  if (env.MCPFN_GO_INSTANCE === "request") return start(env).ready;
  if (!shared || shared.dead) shared = start(env);
  return shared.ready;
}

// enter calls into Go. A Go exit (os.Exit, an unrecovered panic) or a trap
// ends the instance: its pending requests fail and the next request starts
// a fresh one.
function enter(s, fn) {
  if (s.dead) return;
  s.entered = Date.now();
  try {
    fn();
  } catch (e) {
    console.error("mcpfn: the Go instance failed:", e && e.stack ? e.stack : String(e));
    s.dead = true;
  }
  if (s.go.exited) s.dead = true;
}

// run hands one request (kind "fetch" or "task") to the instance and
// settles with what Go posts for it.
function run(s, kind, init) {
  return new Promise((resolve, reject) => {
    const rq = { id: ++seq, kind, queue: [], resolve, reject, ctrl: null, settled: false, done: false, cancelled: false, timer: 0, sse: false, wrote: 0, ...init };
    rq.post = function () { rq.queue.push(Array.from(arguments)); };
    if (init.env.MCPFN_GLUE_UNSAFE_DIRECT === "1") {
      // For the adapter's own tests only: carry out each action at once,
      // in whatever context Go runs, and never tick: what the queue and
      // the tick prevent, shown failing.
      rq.post = function () { act(s, rq, Array.from(arguments)); };
    }
    s.live.add(rq);
    enter(s, () => s.api[kind](rq));
    pump(s, rq);
    if (!rq.done && init.env.MCPFN_GLUE_UNSAFE_DIRECT !== "1") tick(s, rq, TICK_MS);
  });
}

// tick keeps a pending request going from a timer of its own context: it
// re-enters Go (unless another request did within TICK_MS: one entry runs
// every goroutine that is ready), writes a keep-alive on a silent event
// stream, and carries out what Go posted. A request whose queue stays
// empty ticks less and less often, down to every MAX_TICK_MS, so that many
// idle streams cost little; anything posted brings it back to TICK_MS.
function tick(s, rq, period) {
  rq.timer = setTimeout(() => {
    if (rq.done) return;
    if (rq.sse && !rq.cancelled && Date.now() - rq.wrote >= KEEPALIVE_MS) write(rq, KEEPALIVE);
    if (Date.now() - s.entered >= TICK_MS) enter(s, () => s.api.tick());
    const busy = rq.queue.length > 0;
    pump(s, rq);
    if (!rq.done) tick(s, rq, busy ? TICK_MS : Math.min(period * 2, MAX_TICK_MS));
  }, period);
}

// write enqueues bytes on rq's stream.
function write(rq, b) {
  if (!rq.ctrl || rq.cancelled) return;
  rq.ctrl.enqueue(b);
  rq.wrote = Date.now();
}

function settle(rq, v) {
  if (rq.settled) return;
  rq.settled = true;
  rq.resolve(v);
}

function finish(s, rq) {
  rq.done = true;
  if (rq.timer) clearTimeout(rq.timer);
  rq.timer = 0;
  s.live.delete(rq);
}

// pump carries out the actions Go posted to rq, in rq's context.
function pump(s, rq) {
  while (rq.queue.length > 0) {
    const a = rq.queue.shift();
    try {
      act(s, rq, a);
    } catch (e) {
      console.error(`mcpfn: action ${a[0]} failed:`, e && e.stack ? e.stack : String(e));
    }
  }
  if (s.dead && !rq.done) fail(s, rq);
}

function fail(s, rq) {
  if (!rq.settled) {
    if (rq.kind === "fetch") {
      settle(rq, new Response("internal server error\n", { status: 500, headers: { "content-type": "text/plain; charset=utf-8" } }));
    } else {
      rq.settled = true;
      rq.reject(new Error("mcpfn: the Go instance ended during the run"));
    }
  } else if (rq.ctrl && !rq.cancelled) {
    rq.ctrl.error(new Error("mcpfn: the Go instance ended"));
  }
  finish(s, rq);
}

function act(s, rq, a) {
  switch (a[0]) {
    case "full": // status, headers, body
      settle(rq, new Response(a[3] ?? null, { status: a[1], headers: a[2] }));
      finish(s, rq);
      break;
    case "head": { // status, headers, first bytes: the stream starts
      const stream = new ReadableStream({
        start(c) { rq.ctrl = c; },
        cancel() {
          if (rq.done) return;
          rq.cancelled = true;
          enter(s, () => s.api.cancel(rq.id));
          finish(s, rq);
        },
      });
      const response = new Response(stream, { status: a[1], headers: a[2] });
      rq.sse = (response.headers.get("content-type") || "").startsWith("text/event-stream");
      rq.wrote = Date.now();
      if (a[3]) write(rq, a[3]);
      settle(rq, response);
      break;
    }
    case "chunk":
      write(rq, a[1]);
      break;
    case "end":
      if (rq.ctrl && !rq.cancelled) rq.ctrl.close();
      finish(s, rq);
      break;
    case "abort":
      if (rq.ctrl && !rq.cancelled) rq.ctrl.error(new Error("mcpfn: the handler panicked"));
      finish(s, rq);
      break;
    case "result":
      settle(rq, a[1]);
      finish(s, rq);
      break;
    case "error":
      if (!rq.settled) {
        rq.settled = true;
        rq.reject(new Error(a[1]));
      }
      finish(s, rq);
      break;
    case "call": { // binding, object, method, arg, callback
      const [, binding, object, method, arg, cb] = a;
      const back = (err, v) => {
        enter(s, () => cb(err, v));
        pump(s, rq);
      };
      Promise.resolve()
        .then(() => {
          const ns = rq.env[binding];
          if (!ns || typeof ns.idFromName !== "function") {
            throw new Error(`no Durable Object namespace is bound as ${binding}`);
          }
          return ns.get(ns.idFromName(object))[method](arg);
        })
        .then((v) => back(null, String(v)), (e) => back(String(e && e.message ? e.message : e), null));
      break;
    }
    case "fetch": { // method, url, headers, body, max response bytes, callback
      const [, method, url, headers, body, max, cb] = a;
      const back = (err, status, hs, b) => {
        enter(s, () => cb(err, status, hs, b));
        pump(s, rq);
      };
      fetch(url, { method, headers, body: body ?? undefined, redirect: "manual" })
        .then(async (resp) => {
          const b = await readBody(resp, max);
          if (b && b.length > max) throw new Error(`response body over ${max} bytes`);
          back(null, resp.status, Array.from(resp.headers), b ?? new Uint8Array(0));
        })
        .catch((e) => back(String(e && e.message ? e.message : e), 0, [], null));
      break;
    }
    default:
      throw new Error(`unknown action ${a[0]}`);
  }
}

// readBody reads at most max+1 bytes of a request's or response's body:
// past max, the reader answers 413 or fails without this isolate holding
// more.
async function readBody(message, max) {
  if (!message.body) return null;
  const reader = message.body.getReader();
  const chunks = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    n += value.length;
    if (n > max) {
      reader.cancel().catch(() => {});
      break;
    }
  }
  const size = Math.min(n, max + 1);
  const body = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    const part = c.subarray(0, size - off);
    body.set(part, off);
    off += part.length;
    if (off >= size) break;
  }
  return body;
}

function startFailed(e) {
  console.error("mcpfn:", e && e.stack ? e.stack : String(e));
  return new Response("internal server error: the Go instance did not start\n", { status: 500, headers: { "content-type": "text/plain; charset=utf-8" } });
}

export default {
  async fetch(request, env) {
    let s;
    try {
      s = await instance(env);
    } catch (e) {
      return startFailed(e);
    }
    const body = await readBody(request, s.api.maxBody);
    return run(s, "fetch", { env, method: request.method, url: request.url, headers: Array.from(request.headers), body });
  },
};

// McpfnTasks runs tasks: the task's Durable Object calls run(taskId)
// through a service binding to this entry point (MCPFN_TASKS) when its
// alarm fires. It is not reachable from the internet. A run that throws
// is retried by the alarm.
export class McpfnTasks extends WorkerEntrypoint {
  async run(taskId) {
    const s = await instance(this.env);
    return run(s, "task", { env: this.env, taskId: String(taskId) });
  }
}
