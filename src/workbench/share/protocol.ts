import { createHmac } from "node:crypto";
import { z } from "zod";

/**
 * Frames of the attach channel (`/workbench/attach` on the owner's loopback gateway, a WebSocket
 * authenticated at the edge with the record's secret as a bearer token). The attached front end
 * relays EditorBridge calls through it and receives the owner's editor events and bridge state.
 */

export const FRONT_ENDS = ["ide", "serve", "acp"] as const;
export type FrontEnd = (typeof FRONT_ENDS)[number];
/** Who runs a published workbench: a front end in its own process, or the detached host (host-process.ts). */
export type OwnerKind = FrontEnd | "host";

const ErrorBody = z.object({ code: z.string(), message: z.string(), hint: z.string().optional() });

export const ClientFrame = z.discriminatedUnion("type", [
  /** `nonce`: the owner proves it knows the secret too (welcome.proof), so a port squatter learns nothing. */
  z.object({
    type: z.literal("hello"),
    frontEnd: z.enum(FRONT_ENDS),
    pid: z.number().int().positive(),
    nonce: z.string().min(16).max(128),
  }),
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
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

export const ServerFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("welcome"), proof: z.string() }),
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
}

/** What `GET /workbench/status` answers (bearer secret required). */
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

/** The owner's answer to a hello's nonce: HMAC-SHA256(secret, nonce), base64url. */
export function proofOf(secret: string, nonce: string): string {
  return createHmac("sha256", secret).update(`ccb-share-welcome:${nonce}`).digest("base64url");
}
