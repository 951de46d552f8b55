import { request } from "node:http";
import { CcbError } from "../../core/errors.ts";
import type { ShareStatus } from "./protocol.ts";
import {
  LINK_PATH,
  listRecords,
  ownerAlive,
  readRecord,
  realRoots,
  type ShareRecord,
  STATUS_PATH,
  shareKey,
} from "./record.ts";

/** Ask the owner of `record` who is attached (undefined when it does not answer). */
export function fetchStatus(record: ShareRecord, timeoutMs = 3000): Promise<ShareStatus | undefined> {
  return getJson<ShareStatus>(record, STATUS_PATH, timeoutMs);
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
  const r = await getJson<{ url: string | null }>(record, LINK_PATH, 5000);
  if (!r) throw new CcbError("BRIDGE_UNAVAILABLE", `The workbench of ${where} (pid ${record.pid}) did not answer.`);
  if (!r.url)
    throw new CcbError("RUNTIME_UNAVAILABLE", `The workbench of ${where} is not running yet.`, {
      hint: "Retry in a moment.",
    });
  return r.url;
}

function getJson<T>(record: ShareRecord, path: string, timeoutMs: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const u = new URL(path, record.gatewayUrl);
    const req = request(
      u,
      { method: "GET", headers: { authorization: `Bearer ${record.secret}` }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          if (res.statusCode !== 200) return resolve(undefined);
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as T);
          } catch {
            resolve(undefined);
          }
        });
        res.on("error", () => resolve(undefined));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end();
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
