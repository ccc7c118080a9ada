// test.mjs: the Worker of test/workers/durable_test.go. POST /call
// {binding, object, method, arg} calls a Durable Object's RPC method and
// answers {v} or {err}; GET /runs lists the task runs McpfnTasks saw.
import { WorkerEntrypoint } from "cloudflare:workers";
export { McpfnState } from "./state.mjs";

const runs = [];

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/runs") return Response.json(runs);
    const { binding, object, method, arg } = await request.json();
    try {
      const ns = env[binding];
      const v = await ns.get(ns.idFromName(object))[method](arg);
      return Response.json({ v: String(v) });
    } catch (e) {
      return Response.json({ err: String(e && e.message ? e.message : e) });
    }
  },
};

// McpfnTasks records each run; a task whose id starts with "fail" throws.
export class McpfnTasks extends WorkerEntrypoint {
  async run(taskId) {
    runs.push(taskId);
    if (taskId.startsWith("fail")) throw new Error("this run fails");
    return "ok";
  }
}
