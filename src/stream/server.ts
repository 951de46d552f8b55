import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../core/log.ts";
import type { OriginPolicy } from "../net/origin.ts";
import type { EdgePolicy } from "../net/policy.ts";
import { refuseUpgrade } from "../net/respond.ts";
import { LIMITS } from "./limits.ts";
import { type StreamEvent, viewerMessageSchema } from "./protocol.ts";
import type { Screencast } from "./screencast.ts";

export interface StreamEndpoint {
  /** Handle an HTTP upgrade for the stream path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  viewerConnected(): boolean;
  close(): void;
}

/**
 * The edge policy of a `/stream` upgrade: its own 256-bit token in the query (a browser WebSocket
 * cannot set headers) or as a bearer header, frames capped. `ccb stream` serves its viewer itself
 * (same origin); the MCP App connects from its host's origin (`any`, the token being the credential).
 */
export function streamPolicy(token: string, origin: OriginPolicy = { kind: "any" }): EdgePolicy {
  return {
    name: "stream",
    origin,
    auth: [{ places: [{ in: "query", name: "token" }, { in: "bearer" }], expected: () => token }],
    maxFrameBytes: LIMITS.maxFrameBytes,
  };
}

/**
 * The `/stream` WebSocket behind a gateway route with streamPolicy(): one viewer at a time, JPEG
 * frames out, schema-checked input in.
 */
export function createStreamEndpoint(o: {
  screencast: Screencast;
  token: string;
  maxFps: number;
  log: Logger;
}): StreamEndpoint {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxFrameBytes, perMessageDeflate: false });
  let viewer: WebSocket | undefined;

  const accept = (ws: WebSocket) => {
    viewer = ws;
    const hello: StreamEvent = {
      type: "hello",
      width: o.screencast.width,
      height: o.screencast.height,
      maxFps: o.maxFps,
    };
    ws.send(JSON.stringify(hello));
    void o.screencast
      .start((jpeg) => {
        // Drop frames for a slow viewer instead of queueing them.
        if (ws.readyState === ws.OPEN && ws.bufferedAmount < 2 * 1024 * 1024) ws.send(jpeg, { binary: true });
      })
      .catch((err: Error) => {
        o.log.error(`screencast failed: ${err.message}`);
        ws.close(1011, "screencast failed");
      });
    let chain = Promise.resolve();
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      let raw: unknown;
      try {
        raw = JSON.parse(data.toString());
      } catch {
        ws.send(JSON.stringify({ type: "error", message: "invalid JSON" } satisfies StreamEvent));
        return;
      }
      const parsed = viewerMessageSchema.safeParse(raw);
      if (!parsed.success) {
        ws.send(
          JSON.stringify({
            type: "error",
            message: `invalid input: ${parsed.error.issues[0]?.message ?? "rejected"}`,
          } satisfies StreamEvent),
        );
        return;
      }
      const m = parsed.data;
      // Input is applied in order.
      chain = chain
        .then(() => o.screencast.input(m))
        .then(() => {
          if (m.type === "resize")
            ws.send(JSON.stringify({ type: "resized", width: m.width, height: m.height } satisfies StreamEvent));
        })
        .catch((err: Error) => o.log.warn(`stream input failed: ${err.message}`));
    });
    ws.on("close", () => {
      if (viewer === ws) viewer = undefined;
      void o.screencast.stop();
    });
    ws.on("error", () => {});
  };

  return {
    handleUpgrade(req, socket, head) {
      socket.on("error", () => socket.destroy());
      if (viewer) return refuseUpgrade(socket, 409, "Conflict: another viewer is connected (one viewer at a time)");
      wss.handleUpgrade(req, socket, head, accept);
    },
    viewerConnected: () => viewer !== undefined,
    close() {
      viewer?.close(1001, "stream closed");
      wss.close();
    },
  };
}
