import type { McpServer } from "@agentclientprotocol/sdk/unstable";
import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { z } from "zod";
import type { Logger } from "../core/log.ts";
import { CCB_VERSION } from "../core/version.ts";
import { trustedFailure } from "../tools/kernel.ts";
import { shortTitle, textContent } from "./converters.ts";
import { type AcpTool, type AgentToolContext, defineAcpTool, truncateForModel } from "./tools/types.ts";

type Elicit = NonNullable<AgentToolContext["elicit"]>;
/** An MCP `elicitation/create` answer (form mode). */
type ElicitAnswer = {
  [key: string]: unknown;
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
};

/**
 * Where an MCP server's `elicitation/create` goes: to the person, through the ACP client, in the
 * tool call that is running on that server (the server asks while answering it). Only while a call
 * runs: a server asking out of the blue is declined.
 */
class ElicitRoute {
  readonly #calls: Elicit[] = [];

  /** While `elicit`'s call runs, questions go to it (the newest call, when several run at once). */
  during(elicit: Elicit | undefined): () => void {
    if (!elicit) return () => {};
    this.#calls.push(elicit);
    return () => {
      const i = this.#calls.lastIndexOf(elicit);
      if (i >= 0) this.#calls.splice(i, 1);
    };
  }

  async ask(message: string, schema: unknown): Promise<ElicitAnswer> {
    const elicit = this.#calls.at(-1);
    if (!elicit) return { action: "decline" };
    const r = await elicit(message, schema as Parameters<Elicit>[1]);
    const content = (r as { content?: ElicitAnswer["content"] | null }).content;
    if (r.action === "accept") return { action: "accept", ...(content ? { content } : {}) };
    return { action: r.action === "decline" ? "decline" : "cancel" };
  }
}

/**
 * MCP servers passed in session/new, connected with the MCP SDK client; their tools are offered to
 * the model as mcp__<server>__<tool>. Both protocol eras: the client probes with `server/discover`
 * and speaks 2026-07-28 (stateless) to a server that answers it, else the 2025 handshake.
 */
export class McpConnections {
  private constructor(
    private readonly clients: { name: string; client: Client }[],
    readonly tools: AcpTool[],
    readonly failures: string[],
  ) {}

  /**
   * `elicitation`: the ACP client renders forms, so the MCP servers may ask the person (form mode,
   * in either era: a 2025 server's `elicitation/create`, a 2026-07-28 server's `input_required`).
   */
  static async connect(
    servers: McpServer[],
    cwd: string,
    log: Logger,
    options: { signal?: AbortSignal; elicitation?: boolean } = {},
  ): Promise<McpConnections> {
    const signal = options.signal;
    const clients: { name: string; client: Client }[] = [];
    const tools: AcpTool[] = [];
    const failures: string[] = [];
    await Promise.all(
      servers.map(async (server) => {
        const client = new Client(
          { name: "ccb-acp", version: CCB_VERSION },
          {
            versionNegotiation: { mode: "auto" },
            ...(options.elicitation ? { capabilities: { elicitation: { form: {} } } } : {}),
          },
        );
        const route = new ElicitRoute();
        if (options.elicitation) {
          client.setRequestHandler("elicitation/create", async (request) => {
            const params = request.params as { mode?: string; message: string; requestedSchema?: unknown };
            if (params.mode === "url") return { action: "decline" as const };
            log.info(`MCP server ${server.name} asks the person: ${params.message.slice(0, 200)}`);
            return route.ask(params.message, params.requestedSchema ?? { type: "object", properties: {} });
          });
        }
        try {
          await client.connect(transportFor(server, cwd, log), { timeout: 30_000, ...(signal ? { signal } : {}) });
          const listed = await client.listTools(undefined, { timeout: 30_000 });
          clients.push({ name: server.name, client });
          for (const t of listed.tools) tools.push(mcpTool(server.name, t, client, route));
          log.info(`MCP server ${server.name}: ${listed.tools.length} tools`);
        } catch (err) {
          failures.push(`${server.name}: ${(err as Error).message}`);
          log.warn(`MCP server ${server.name} failed to connect: ${(err as Error).message}`);
          await client.close().catch(() => undefined);
        }
      }),
    );
    return new McpConnections(clients, tools, failures);
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.client.close().catch(() => undefined)));
  }
}

function transportFor(server: McpServer, cwd: string, log: Logger): Transport {
  if ("type" in server && server.type === "http") {
    return new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) },
    });
  }
  if ("type" in server && server.type === "sse") {
    return new SSEClientTransport(new URL(server.url), {
      requestInit: { headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) },
    });
  }
  if (!("command" in server))
    throw new Error(`unsupported MCP server transport ${"type" in server ? String(server.type) : "?"}`);
  const s = server;
  const transport = new StdioClientTransport({
    command: s.command,
    args: s.args,
    env: { ...getDefaultEnvironment(), ...Object.fromEntries(s.env.map((e) => [e.name, e.value])) },
    cwd,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => log.debug(`[mcp ${s.name}] ${d.toString("utf8").trimEnd()}`));
  return transport;
}

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

function mcpTool(
  server: string,
  t: {
    name: string;
    description?: string | undefined;
    inputSchema: Record<string, unknown>;
    annotations?: { readOnlyHint?: boolean | undefined } | undefined;
  },
  client: Client,
  route: ElicitRoute,
): AcpTool {
  const name = mcpToolName(server, t.name);
  const readOnly = t.annotations?.readOnlyHint === true;
  return defineAcpTool({
    name,
    title: t.name,
    description: t.description ?? `Tool ${t.name} of MCP server ${server}.`,
    input: z.looseObject({}),
    annotations: { readOnlyHint: readOnly, destructiveHint: !readOnly, idempotentHint: false, openWorldHint: true },
    acp: {
      // the server's own schema is what the model is offered; any object is passed on for it to check
      jsonSchema: t.inputSchema,
      kind: readOnly ? "read" : "other",
      title: (i) => shortTitle(`${server}: ${t.name} ${JSON.stringify(i)}`),
      locations: () => [],
      access: () => ({ category: readOnly ? "read" : "other", ruleKey: name }),
    },
    async execute(input, ctx) {
      const asking = route.during(ctx.elicit);
      const r = await client
        .callTool({ name: t.name, arguments: input }, { signal: ctx.signal, timeout: 600_000 })
        .catch((err: unknown) => {
          // the server's own failure, as it said it (not one of ccb's to sanitize)
          throw trustedFailure(err);
        })
        .finally(asking);
      const parts = (r.content as { type: string; text?: string }[] | undefined) ?? [];
      const text =
        parts.map((p) => (p.type === "text" ? (p.text ?? "") : `[${p.type} content]`)).join("\n") ||
        JSON.stringify(r.structuredContent ?? {});
      return {
        text: truncateForModel(text),
        isError: r.isError === true,
        content: [textContent(truncateForModel(text))],
      };
    },
  });
}
