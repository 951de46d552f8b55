import { AgentProtocolRouter } from "@agentclientprotocol/sdk/experimental/v2";
import { type AgentOptions, CcbAgent } from "../../agent/agent.ts";
import { createV1Front } from "./v1.ts";
import { createV2Front } from "./v2.ts";

export interface AcpRouterOptions extends AgentOptions {
  /** Told, when the client leaves, of the closing of every session (their workbenches released). */
  onClosing?: ((done: Promise<void>) => void) | undefined;
}

/**
 * One connection's ACP front: the SDK's `AgentProtocolRouter` reads the client's `initialize` and
 * hands the connection to the v1 front end or the v2 one (the highest at or below the client's
 * version), both over the same agent. It never re-routes a connection.
 */
export function createAcpRouter(options: AcpRouterOptions): AgentProtocolRouter {
  const agent = new CcbAgent(options);
  const fronts = { onClosing: options.onClosing };
  return new AgentProtocolRouter().withV1(createV1Front(agent, fronts)).withV2(createV2Front(agent, fronts));
}
