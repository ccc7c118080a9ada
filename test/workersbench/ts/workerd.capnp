# The TypeScript anchor of test/workersbench in workerd. nodejs_compat is on by
# default at this compatibility date. The harness overrides the socket
# address (--socket-addr http=127.0.0.1:0).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [ (name = "worker.mjs", esModule = embed "worker.mjs") ],
  compatibilityDate = "2026-11-01",
);
