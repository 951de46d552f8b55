import { WebSocket } from "ws";
import { CcbError } from "../../core/errors.ts";
import { registerSecret } from "../../core/secret-vault.ts";
import { MAX_FRAME_BYTES } from "../../editor-wire/contract.ts";
import { ClientHandshake } from "./handshake.ts";
import { type ClientFrame, parse, ServerFrame, type ShareStatus } from "./protocol.ts";
import { ATTACH_PATH, listRecords, ownerAlive, readRecord, realRoots, type ShareRecord, shareKey } from "./record.ts";

/** Ask the owner of `record` who is attached (undefined when it does not answer). */
export function fetchStatus(record: ShareRecord, timeoutMs = 3000): Promise<ShareStatus | undefined> {
  return query<ShareStatus>(record, { type: "status", id: 1 }, timeoutMs);
}

/**
 * `ccb workbench link`: a fresh one-time browser link to the shared workbench of `roots` (after a
 * takeover the workbench moved to another front end's gateway, and links printed before are dead).
 */
export async function shareLink(roots: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const record = await readRecord(shareKey(roots), env);
  const where = realRoots(roots).join(", ");
  if (!record || !ownerAlive(record))
    throw new CcbError("NOT_FOUND", `No shared ccb workbench runs for ${where}.`, {
      hint: "Start one with `ccb ide` or `ccb serve` in that folder (`ccb workbench status` lists those that run).",
    });
  const r = await query<{ url: string | null }>(record, { type: "link", id: 1 }, 5000);
  if (!r) throw new CcbError("BRIDGE_UNAVAILABLE", `The workbench of ${where} (pid ${record.pid}) did not answer.`);
  if (!r.url)
    throw new CcbError("RUNTIME_UNAVAILABLE", `The workbench of ${where} is not running yet.`, {
      hint: "Retry in a moment.",
    });
  return r.url;
}

/**
 * One question to the owner of `record` over the attach channel, as a query connection: the same
 * mutual proof as an attach (handshake.ts), so the secret never travels and a listener that cannot
 * prove it knows it gets nothing but a nonce. Undefined when it does not answer, or is not the owner.
 */
function query<T>(
  record: ShareRecord,
  ask: Extract<ClientFrame, { type: "status" | "link" }>,
  timeoutMs: number,
): Promise<T | undefined> {
  registerSecret(record.secret);
  return new Promise((resolve) => {
    const ws = new WebSocket(`${record.gatewayUrl.replace(/^http/, "ws")}${ATTACH_PATH}`, {
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: timeoutMs,
    });
    // frontEnd: the hello's required field; a query is not an attached front end, the host lists none for it
    const handshake = new ClientHandshake(record.secret, record.gatewayUrl, {
      frontEnd: "serve",
      pid: process.pid,
      purpose: "query",
    });
    let answer: T | undefined;
    const timer = setTimeout(() => ws.terminate(), timeoutMs);
    const send = (frame: ClientFrame) => ws.send(JSON.stringify(frame));
    ws.on("error", () => undefined);
    ws.on("open", () => send(handshake.hello()));
    ws.on("message", (data, isBinary) => {
      const frame = isBinary ? undefined : parse(ServerFrame, data.toString());
      if (!frame) return ws.terminate();
      if (!handshake.done) {
        const step = handshake.step(frame);
        if (step === "refused") return ws.terminate();
        if (step === "welcomed") return send(ask);
        return send(step.send);
      }
      if (frame.type === "response" && frame.id === ask.id && !frame.error) answer = frame.result as T;
      ws.close(1000, "asked");
    });
    ws.on("close", () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}

/** `ccb workbench status` / `ccb ide --status`: the shared workbenches and who is attached (never a secret). */
export async function shareStatusLines(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const lines: string[] = [];
  for (const { record } of await listRecords(env)) {
    const s = ownerAlive(record) ? await fetchStatus(record) : undefined;
    if (!s) {
      lines.push(
        `workbench ${record.roots.join(", ")}: stale record (owner pid ${record.pid} is gone); the next front end replaces it`,
      );
      continue;
    }
    const h = s.health;
    const bridge = !s.bridge.connected
      ? "editor not answering"
      : h
        ? `editor answers (${h.responsive} of ${h.hosts} windows${h.lastProbeMs !== null ? `, round trip ${h.lastProbeMs} ms` : ""})`
        : "editor bridge connected";
    lines.push(
      `workbench ${record.roots.join(", ")}  ${s.runtime ?? "no runtime"} ${s.state}${s.runtimePid ? ` (pid ${s.runtimePid})` : ""}  ${bridge}  ${record.gatewayUrl}`,
    );
    if (!s.bridge.connected && s.bridge.reason) lines.push(`  why       ${s.bridge.reason}`);
    if (h)
      lines.push(
        `  health    headless client ${h.headlessClient}; restarts: runtime ${h.runtimeRestarts}, headless client ${h.headlessRestarts}`,
      );
    const o = s.owner;
    const host =
      o.frontEnd === "host"
        ? `  (started by ${o.startedBy ?? "a front end"}; stops ${(o.graceMs ?? 0) / 1000} s after the last front end leaves)`
        : "";
    lines.push(`  owner     ${o.frontEnd}  pid ${o.pid}${host}`);
    for (const a of s.attached) lines.push(`  attached  ${a.frontEnd}  pid ${a.pid}`);
  }
  return lines.length > 0 ? lines : ["No shared ccb workbench is running."];
}
