using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "test.mjs", esModule = embed "test.mjs"),
    (name = "state.mjs", esModule = embed "../../../../adapters/workers/glue/state.mjs"),
  ],
  compatibilityDate = "2026-11-01",
  bindings = [
    # extra bindings
    (name = "MCPFN_STATE", durableObjectNamespace = "McpfnState"),
    (name = "MCPFN_TASKS", service = (name = "main", entrypoint = "McpfnTasks")),
  ],
  durableObjectNamespaces = [ (className = "McpfnState", uniqueKey = "mcpfn-state-test") ],
  durableObjectStorage = (inMemory = void),
);
