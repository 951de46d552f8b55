import * as acp from "@agentclientprotocol/sdk";

/** The ACP SDK client's connection context, as `connectWith` hands it to its callback. */
export type AcpCtx = Parameters<Parameters<ReturnType<typeof acp.client>["connectWith"]>[1]>[0];

/**
 * One ACP turn with the SDK's own client over `stream`: initialize, session/new in `cwd` (with
 * `meta` as its `_meta`), a prompt of `text` whose permission requests are allowed, then `work` on
 * the open connection. Answers what initialize, session/new and the prompt answered, and the text
 * of the agent's message chunks.
 */
export async function acpTurn(
  stream: acp.Stream,
  o: {
    name: string;
    cwd: string;
    text?: string;
    meta?: Record<string, unknown>;
    work?: (ctx: AcpCtx, sessionId: string) => Promise<void>;
  },
) {
  const updates: string[] = [];
  return acp
    .client({ name: o.name })
    .onRequest(acp.methods.client.session.requestPermission, () => ({
      outcome: { outcome: "selected", optionId: "allow" },
    }))
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text")
        updates.push(params.update.content.text);
    })
    .connectWith(stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const session = await ctx.request(acp.methods.agent.session.new, {
        cwd: o.cwd,
        mcpServers: [],
        ...(o.meta ? { _meta: o.meta } : {}),
      });
      const result = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: o.text ?? "hello" }],
      });
      await o.work?.(ctx, session.sessionId);
      return { init, session, result, updates };
    });
}
