// worker.ts: the anchor of test/workersbench, a TypeScript MCP server on
// workerd written the way the official TypeScript SDK documents it: an
// McpServer with an `add` tool, served by the web-standard Streamable HTTP
// transport in stateless mode (a server and a transport per request, no
// session, JSON responses). The JSON Schema validator is the SDK's
// @cfworker/json-schema provider, the one meant for Workers (Ajv compiles
// schemas with `new Function`, which Workers forbid).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { z } from "zod";

function newServer(): McpServer {
  const server = new McpServer(
    { name: "ts-anchor", version: "1.0.0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  server.registerTool(
    "add",
    {
      description: "Add two numbers.",
      inputSchema: {
        left: z.number().int().describe("The first addend"),
        right: z.number().int().describe("The second addend"),
      },
      outputSchema: { result: z.number().int() },
    },
    async ({ left, right }) => {
      const result = left + right;
      return { content: [{ type: "text", text: JSON.stringify({ result }) }], structuredContent: { result } };
    },
  );
  return server;
}

export default {
  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== "/mcp") {
      return new Response("not found\n", { status: 404 });
    }
    const server = newServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined, // stateless
      enableJsonResponse: true,
    });
    await server.connect(transport);
    return transport.handleRequest(request);
  },
};
