import type { SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../core/log.ts";
import type { AgentPeer } from "./peer.ts";

/**
 * One prompt turn's outlet to the client. Once the turn is closed (its response is about to be
 * sent) nothing more goes out for it: "no update after cancelled" holds by construction.
 */
export class TurnOutlet {
  private closed = false;

  constructor(
    private readonly peer: AgentPeer,
    readonly sessionId: string,
    private readonly log: Logger,
  ) {}

  emit(update: SessionUpdate): void {
    if (this.closed) return;
    this.peer.update(this.sessionId, update).catch((err: Error) => this.log.debug(`update not sent: ${err.message}`));
  }

  close(): void {
    this.closed = true;
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
