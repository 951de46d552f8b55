import { z } from "zod";

/**
 * Frames of the attach channel (`/workbench/attach` on the owner's loopback gateway, a WebSocket).
 * It opens with a mutual proof of the record's secret (handshake.ts: hello, challenge, prove,
 * welcome) in which the secret itself never travels and the host proves itself first. Then an
 * attached front end relays EditorBridge calls through it and receives the owner's editor events
 * and bridge state; a query connection (`ccb workbench status`, `ccb workbench link`) asks one thing.
 */

export const FRONT_ENDS = ["ide", "serve", "acp"] as const;
export type FrontEnd = (typeof FRONT_ENDS)[number];
/** Who runs a published workbench: a front end in its own process, or the detached host (host-process.ts). */
export type OwnerKind = FrontEnd | "host";

/** A client connected to an attached front end (core/live-clients.ts), as the person's view names it. */
const PeerClient = z.object({
  frontEnd: z.string().max(16),
  client: z.string().max(120),
  session: z.string().max(120).optional(),
  since: z.number(),
});
type PeerClient = z.infer<typeof PeerClient>;

const ErrorBody = z.object({ code: z.string(), message: z.string(), hint: z.string().optional() });

export const ClientFrame = z.discriminatedUnion("type", [
  /** Nothing secret: `nonce` is the front end's half of the handshake (handshake.ts); `query`: not an attached front end. */
  z.object({
    type: z.literal("hello"),
    frontEnd: z.enum(FRONT_ENDS),
    pid: z.number().int().positive(),
    nonce: z.string().min(16).max(128),
    purpose: z.literal("query").optional(),
  }),
  /** The front end's proof, sent only after the host's challenge proved the host knows the secret. */
  z.object({ type: z.literal("prove"), proof: z.string().max(128) }),
  z.object({
    type: z.literal("call"),
    id: z.number().int(),
    method: z.string().max(200),
    params: z.unknown(),
    timeoutMs: z.number().int().nonnegative().optional(),
  }),
  z.object({ type: z.literal("cancel"), id: z.number().int() }),
  /** A fresh one-time browser link to the workbench, or to its `/app` page (answered with a response whose result is `{ url }`). */
  z.object({ type: z.literal("link"), id: z.number().int(), page: z.enum(["workbench", "app"]).optional() }),
  /** Who is attached (answered with a response whose result is a ShareStatus). */
  z.object({ type: z.literal("status"), id: z.number().int() }),
  /** The attached front end's connected clients now (each MCP session, IDE client, ACP session), sent on every change. */
  z.object({ type: z.literal("clients"), clients: z.array(PeerClient).max(200) }),
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

export const ServerFrame = z.discriminatedUnion("type", [
  /** The host's half: its nonce and its proof over both nonces (handshake.ts). */
  z.object({ type: z.literal("challenge"), nonce: z.string().min(16).max(128), proof: z.string().max(128) }),
  /**
   * The front end proved itself too: the channel is open. `clients`: this owner takes the `clients`
   * frame (an owner of an older ccb closes the channel on a frame it does not know, so none is sent to it).
   */
  z.object({ type: z.literal("welcome"), clients: z.boolean().optional() }),
  z.object({
    type: z.literal("state"),
    connected: z.boolean(),
    reason: z.string(),
    /** The runtime kind once the workbench runs. */
    runtime: z.string().optional(),
    /** Resolved once the owner's runtime answered or failed to start. */
    ready: z.boolean(),
  }),
  z.object({ type: z.literal("event"), event: z.looseObject({ type: z.string() }) }),
  z.object({
    type: z.literal("response"),
    id: z.number().int(),
    result: z.unknown().optional(),
    error: ErrorBody.optional(),
  }),
]);
export type ServerFrame = z.infer<typeof ServerFrame>;

export function parse<T>(schema: z.ZodType<T>, text: string): T | undefined {
  try {
    const r = schema.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

export interface AttachedPeer {
  frontEnd: FrontEnd;
  pid: number;
  since: number;
  /** Its connected clients, as it last said (none before it said). */
  clients: PeerClient[];
}

/** What a `status` query on the attach channel answers (after the handshake). */
export interface ShareStatus {
  /** startedBy and graceMs: a detached host's (the front end that started it; how long it stays after the last one left). */
  owner: { frontEnd: string; pid: number; since: number; startedBy?: string; graceMs?: number };
  attached: AttachedPeer[];
  runtime: string | null;
  runtimePid: number | null;
  state: string;
  bridge: { connected: boolean; reason: string };
  /** What answers (src/workbench/health.ts): hosts whose window answered the last probe, and the headless client. */
  health?: {
    responsive: number;
    hosts: number;
    lastProbeMs: number | null;
    sinceAnswerMs: number | null;
    runtimeRestarts: number;
    headlessRestarts: number;
    headlessClient: string;
  };
}
