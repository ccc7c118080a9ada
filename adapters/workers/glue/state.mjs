// state.mjs: McpfnState, the Durable Object class that holds an mcpfn
// Worker's state (package github.com/mcpfn/mcpfn/adapters/workers/durable
// is its Go client). Objects are named by what they hold:
//
//   s:<session id>     one legacy session: its record, version and expiry
//   sp:<pool>          one owner's session pool (a principal, or "" for the
//                      anonymous pool): ids by last use, for the limits
//   t:<task id>        one task: its record, version, expiry and run
//   tp:<principal>     one principal's tasks: ids, expiries and charges,
//                      for the count and byte limits
//   c:<log>            a change log (core.ChangeBus): the position of the
//                      newest change and the newest changes
//
// Go calls the one RPC method op(arg) with a JSON string and gets a JSON
// string back; outcomes such as not_found or conflict are results, not
// exceptions. A Durable Object runs one event at a time and holds its
// input gate across storage calls, so each object's read-check-write is
// atomic; calls to other objects happen only after this object's own
// write is done.
import { DurableObject } from "cloudflare:workers";

// The largest record (session data or task record) an object keeps, in
// bytes of its JSON: under the 2 MB a SQLite-backed object's value holds.
export const MAX_RECORD_BYTES = 1 << 20;
// A run is tried at most this many times, again after 1, 2, 4, ... s (the
// string binding MCPFN_TASK_RETRY_MS sets the first pause).
const RUN_ATTEMPTS = 6;
const MAX_ID = 128;
const MAX_PRINCIPAL = 512;
// A change log keeps at most MAX_CHANGES changes, each URI of at most
// MAX_CHANGE_URI characters (core.MaxChangeURIBytes).
const MAX_CHANGES = 1000;
const MAX_CHANGE_URI = 2048;
// The log's JSON stays under 128 KiB, the value limit of a key-value
// backed object and of workerd's in-memory storage (a SQLite-backed one
// holds 2 MB): 1000 short URIs fit, about 58 of the longest.
const MAX_CHANGE_LOG_BYTES = 120 * 1024;

// prefix is the object-name prefix of the store that sent a (see
// durable's Prefix): every object it names for that store carries it.
const prefix = (a) => str(a.px ?? "", 64, "prefix");

const ok = (v = {}) => JSON.stringify({ ok: true, ...v });
const no = (error, v = {}) => JSON.stringify({ ok: false, error, ...v });

function str(v, max, what) {
  if (typeof v !== "string" || v.length > max) throw new Error(`bad ${what}`);
  return v;
}
function num(v, what) {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`bad ${what}`);
  return v;
}

export class McpfnState extends DurableObject {
  async op(arg) {
    const a = JSON.parse(str(arg, 4 * MAX_RECORD_BYTES, "argument"));
    switch (a.op) {
      case "sessionCreate": return this.sessionCreate(a);
      case "sessionPut": return this.sessionPut(a);
      case "sessionGet": return this.sessionGet(a);
      case "sessionUpdate": return this.sessionUpdate(a);
      case "sessionDelete": return this.sessionDelete(a);
      case "poolTouch": return this.poolTouch(a);
      case "taskCreate": return this.taskCreate(a);
      case "taskPut": return this.taskPut(a);
      case "taskGet": return this.taskGet(a);
      case "taskUpdate": return this.taskUpdate(a);
      case "taskSchedule": return this.taskSchedule(a);
      case "principalForget": return this.principalForget(a);
      case "changePublish": return this.changePublish(a);
      case "changeRead": return this.changeRead(a);
      default: throw new Error(`unknown op ${a.op}`);
    }
  }

  // --- change log ---------------------------------------------------------

  // changePublish appends a change to this log object and keeps the newest
  // a.size; the object's one-event-at-a-time order makes positions unique
  // and consecutive.
  async changePublish(a) {
    const size = num(a.size, "size");
    if (size < 1 || size > MAX_CHANGES) throw new Error("bad size");
    const c = { k: str(a.k, 32, "kind"), u: str(a.u ?? "", MAX_CHANGE_URI, "uri"), o: str(a.o ?? "", 64, "origin") };
    const { pos = 0, log = [] } = await this.ctx.storage.get(["pos", "log"]).then(Object.fromEntries);
    c.p = pos + 1;
    log.push(c);
    // The newest a.size changes, fewer when they would pass
    // MAX_CHANGE_LOG_BYTES: a reader behind is told it missed some.
    const kept = log.slice(-size);
    let bytes = kept.reduce((n, x) => n + JSON.stringify(x).length + 1, 2);
    while (bytes > MAX_CHANGE_LOG_BYTES) bytes -= JSON.stringify(kept.shift()).length + 1;
    await this.ctx.storage.put({ pos: c.p, log: kept });
    return ok({ pos: c.p });
  }

  // changeRead returns the log's position and changes; core decides what
  // a reader missed.
  async changeRead() {
    const { pos = 0, log = [] } = await this.ctx.storage.get(["pos", "log"]).then(Object.fromEntries);
    return ok({ pos, log });
  }

  stub(name) {
    const ns = this.env.MCPFN_STATE;
    return ns.get(ns.idFromName(name));
  }

  // --- sessions -----------------------------------------------------------

  // sessionCreate runs in the pool object: it records the new session,
  // evicts the least recently used beyond the limit, then writes the
  // session's own object and deletes the evicted ones.
  async sessionCreate(a) {
    const id = str(a.id, MAX_ID, "id");
    const pool = str(a.pool, MAX_PRINCIPAL, "pool");
    const px = prefix(a);
    const rec = a.rec;
    if (JSON.stringify(rec).length > MAX_RECORD_BYTES) return no("too_large");
    const now = num(a.now, "now"), limit = num(a.limit, "limit");
    const put = JSON.parse(await this.stub(px + "s:" + id).op(JSON.stringify({ op: "sessionPut", px, pool, rec })));
    if (!put.ok) return JSON.stringify(put);
    // Read the pool after the session's object is written: other creates
    // may have run while this one waited, and each decides on what is
    // stored when it resumes (no await between this read and the write).
    const lru = (await this.ctx.storage.get("lru")) ?? {};
    for (const [k, v] of Object.entries(lru)) if (v.ex <= now) delete lru[k];
    lru[id] = { lu: num(rec.lu, "lastUsed"), ex: num(rec.ex, "expires") };
    const evicted = [];
    if (limit > 0) {
      const ids = Object.keys(lru).filter((k) => k !== id).sort((x, y) => lru[x].lu - lru[y].lu);
      while (ids.length + 1 > limit) {
        const k = ids.shift();
        delete lru[k];
        evicted.push(k);
      }
    }
    await this.ctx.storage.put("lru", lru);
    await Promise.all(evicted.map((k) => this.stub(px + "s:" + k).op(JSON.stringify({ op: "sessionDelete", px, id: k, quiet: true }))));
    return ok({ evicted });
  }

  async poolTouch(a) {
    const lru = (await this.ctx.storage.get("lru")) ?? {};
    if (a.delete) {
      delete lru[a.id];
    } else if (lru[a.id]) {
      lru[a.id] = { lu: num(a.lu, "lastUsed"), ex: num(a.ex, "expires") };
    }
    await this.ctx.storage.put("lru", lru);
    return ok();
  }

  async sessionPut(a) {
    if (await this.live()) return no("conflict");
    const rec = { ...a.rec, ver: 1 };
    await this.ctx.storage.put({ rec, pool: a.pool, px: prefix(a) });
    await this.arm(rec.ex, null);
    return ok();
  }

  async live() {
    const rec = await this.ctx.storage.get("rec");
    if (!rec || rec.ex <= Date.now()) return null;
    return rec;
  }

  async sessionGet() {
    const rec = await this.live();
    return rec ? ok({ rec }) : no("not_found");
  }

  async sessionUpdate(a) {
    const rec = await this.live();
    if (!rec) return no("not_found");
    if (rec.ver !== num(a.ver, "version")) return no("conflict");
    if (typeof a.data !== "string" || a.data.length > MAX_RECORD_BYTES) return no("too_large");
    Object.assign(rec, { data: a.data, lu: num(a.lu, "lastUsed"), luNs: str(a.luNs, 32, "lastUsed"), ex: num(a.ex, "expires"), exNs: str(a.exNs, 32, "expires"), ver: rec.ver + 1 });
    await this.ctx.storage.put("rec", rec);
    await this.arm(rec.ex, null);
    const { pool, px } = await this.ctx.storage.get(["pool", "px"]).then(Object.fromEntries);
    await this.stub(px + "sp:" + pool).op(JSON.stringify({ op: "poolTouch", id: rec.id, lu: rec.lu, ex: rec.ex }));
    return ok({ ver: rec.ver });
  }

  async sessionDelete(a) {
    const rec = await this.live();
    const { pool, px } = await this.ctx.storage.get(["pool", "px"]).then(Object.fromEntries);
    await this.ctx.storage.deleteAll();
    await this.ctx.storage.deleteAlarm();
    if (!a.quiet && pool !== undefined) {
      await this.stub(px + "sp:" + pool).op(JSON.stringify({ op: "poolTouch", id: str(a.id, MAX_ID, "id"), delete: true }));
    }
    return rec ? ok() : no("not_found");
  }

  // --- tasks ---------------------------------------------------------------

  // taskCreate runs in the principal's object: it counts the principal's
  // unexpired tasks and their charges, refuses past the limits, records the
  // task, then writes the task's own object (a conflict undoes the record).
  async taskCreate(a) {
    const id = str(a.id, MAX_ID, "id");
    const now = num(a.now, "now"), ex = num(a.ex, "expires"), charge = num(a.charge, "charge");
    const lim = a.limits ?? {};
    const rec = str(a.rec, MAX_RECORD_BYTES, "record");
    const tasks = (await this.ctx.storage.get("tasks")) ?? {};
    for (const [k, v] of Object.entries(tasks)) if (v.ex <= now) delete tasks[k];
    const ids = Object.keys(tasks);
    const first = ids.length ? Math.min(...ids.map((k) => tasks[k].ex)) : 0;
    const bytes = ids.reduce((n, k) => n + tasks[k].ch, 0);
    if (lim.tasks > 0 && ids.length >= lim.tasks) return no("limit", { reason: "too_many_tasks", limit: lim.tasks, retryAt: first });
    if (lim.bytes > 0 && (charge > lim.bytes || bytes + charge > lim.bytes)) {
      return no("limit", { reason: "too_many_task_bytes", limit: lim.bytes, retryAt: charge > lim.bytes ? 0 : first });
    }
    if (tasks[id]) return no("conflict");
    // Reserve before calling out: while this object awaits the task's
    // object, its input gate lets another create of the principal run, and
    // that one must count this task.
    tasks[id] = { ex, ch: charge };
    await this.ctx.storage.put("tasks", tasks);
    let put;
    try {
      put = JSON.parse(await this.stub(prefix(a) + "t:" + id).op(JSON.stringify({ op: "taskPut", rec, ex, ver: 1 })));
    } catch (e) {
      put = null;
      var failure = e;
    }
    if (!put || !put.ok) {
      const cur = (await this.ctx.storage.get("tasks")) ?? {};
      delete cur[id];
      await this.ctx.storage.put("tasks", cur);
      if (!put) throw failure;
      return JSON.stringify(put);
    }
    return ok();
  }

  async taskPut(a) {
    const cur = await this.ctx.storage.get("task");
    if (cur && cur.ex > Date.now()) return no("conflict");
    const task = { rec: a.rec, ex: num(a.ex, "expires"), ver: 1 };
    await this.ctx.storage.put({ task, run: null });
    await this.arm(task.ex, null);
    return ok();
  }

  async liveTask() {
    const t = await this.ctx.storage.get("task");
    if (!t || t.ex <= Date.now()) return null;
    return t;
  }

  async taskGet() {
    const t = await this.liveTask();
    return t ? ok({ rec: t.rec, ver: t.ver }) : no("not_found");
  }

  async taskUpdate(a) {
    const t = await this.liveTask();
    if (!t) return no("not_found");
    if (t.ver !== num(a.ver, "version")) return no("conflict");
    t.rec = str(a.rec, MAX_RECORD_BYTES, "record");
    t.ex = num(a.ex, "expires");
    t.ver++;
    await this.ctx.storage.put("task", t);
    await this.arm(t.ex, await this.ctx.storage.get("run"));
    return ok({ ver: t.ver });
  }

  // taskSchedule asks for a run of the task: the object's alarm calls the
  // Worker's McpfnTasks entry point (MCPFN_TASKS) in a request of its own.
  async taskSchedule(a) {
    const t = await this.liveTask();
    if (!t) return no("not_found");
    const run = { id: str(a.id, MAX_ID, "id"), at: Date.now(), attempts: 0 };
    await this.ctx.storage.put("run", run);
    await this.arm(t.ex, run);
    return ok();
  }

  async principalForget() {
    await this.ctx.storage.deleteAll();
    return ok();
  }

  // arm sets the object's one alarm to the earlier of its expiry and a
  // pending run.
  async arm(expires, run) {
    const at = run ? Math.min(run.at, expires) : expires;
    await this.ctx.storage.setAlarm(at);
  }

  async alarm() {
    const now = Date.now();
    const task = await this.ctx.storage.get("task");
    const rec = await this.ctx.storage.get("rec");
    const ex = task ? task.ex : rec ? rec.ex : 0;
    if (ex <= now) {
      // Expired: the record goes (a session also leaves its pool).
      const { pool, px } = await this.ctx.storage.get(["pool", "px"]).then(Object.fromEntries);
      await this.ctx.storage.deleteAll();
      if (rec && pool !== undefined) {
        await this.stub(px + "sp:" + pool).op(JSON.stringify({ op: "poolTouch", id: rec.id, delete: true }));
      }
      return;
    }
    const run = await this.ctx.storage.get("run");
    if (run && run.at <= now) {
      try {
        await this.env.MCPFN_TASKS.run(run.id);
        await this.ctx.storage.put("run", null);
        await this.arm(ex, null);
      } catch (e) {
        run.attempts++;
        if (run.attempts >= RUN_ATTEMPTS) {
          console.error(`mcpfn: task ${run.id}: run failed ${run.attempts} times, giving up: ${e && e.message ? e.message : e}`);
          await this.ctx.storage.put("run", null);
          await this.arm(ex, null);
        } else {
          const base = Number(this.env.MCPFN_TASK_RETRY_MS) > 0 ? Number(this.env.MCPFN_TASK_RETRY_MS) : 1000;
          run.at = Date.now() + base * 2 ** (run.attempts - 1);
          await this.ctx.storage.put("run", run);
          await this.arm(ex, run);
        }
      }
      return;
    }
    await this.arm(ex, run);
  }
}
