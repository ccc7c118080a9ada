// state.mjs: the Durable Object class that holds an mcpfn Worker's state.
import { DurableObject } from "cloudflare:workers";

export class McpfnState extends DurableObject {}
