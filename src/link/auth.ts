import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { configDir } from "../util/paths.ts";
import { registerSecret } from "../platform/secrets.ts";
import { newToken, tokensEqual, writeSecretFile } from "../util/secrets.ts";

export const SUBPROTOCOL_PREFIX = "rcs.auth.";

export function tokenFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), "link-token");
}

/** ACP_AUTH_TOKEN, else a new 256-bit token written to a 0600 file. */
export function resolveToken(env: NodeJS.ProcessEnv = process.env): { token: string; generated: boolean; file?: string } {
  const fromEnv = env.ACP_AUTH_TOKEN;
  if (fromEnv) return { token: fromEnv, generated: false };
  const token = newToken(32);
  registerSecret(token);
  const file = tokenFilePath(env);
  writeSecretFile(file, `${token}\n`);
  return { token, generated: true, file };
}

export function encodeSubprotocolToken(token: string): string {
  return SUBPROTOCOL_PREFIX + Buffer.from(token, "utf8").toString("base64url");
}

function offeredProtocols(req: IncomingMessage): string[] {
  const h = req.headers["sec-websocket-protocol"];
  if (!h) return [];
  return h.split(",").map((p) => p.trim()).filter(Boolean);
}

export type AuthOutcome =
  | { ok: true; protocol: string | undefined }
  | { ok: false; status: 400 | 401 | 403; message: string };

const QUERY_TOKEN_KEYS = ["token", "access_token", "auth", "authorization", "key"];

/**
 * Decide, BEFORE the upgrade, whether a request may become a WebSocket: token (bearer header or
 * `rcs.auth.<base64url>` subprotocol, never the query string) and Origin (refused unless allowed).
 */
export function authorizeUpgrade(
  req: IncomingMessage,
  url: URL,
  opts: { token: string | undefined; allowOrigins: readonly string[] },
): AuthOutcome {
  for (const k of QUERY_TOKEN_KEYS) {
    if (url.searchParams.has(k)) {
      return { ok: false, status: 400, message: "Tokens in the query string are refused (they end up in logs and history). Use `Authorization: Bearer <token>` or the `rcs.auth.<base64url(token)>` subprotocol." };
    }
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !opts.allowOrigins.includes(origin)) {
    return { ok: false, status: 403, message: `Origin ${origin} is not allowed. Start ccb link with --allow-origin ${origin} to let this browser client in.` };
  }
  const protocols = offeredProtocols(req);
  const authProto = protocols.find((p) => p.startsWith(SUBPROTOCOL_PREFIX));
  const chosen = authProto ?? protocols[0];
  if (opts.token === undefined) return { ok: true, protocol: chosen };
  let given: string | undefined;
  const header = req.headers.authorization;
  if (typeof header === "string" && /^bearer\s+/i.test(header)) given = header.replace(/^bearer\s+/i, "").trim();
  else if (authProto) {
    try {
      given = Buffer.from(authProto.slice(SUBPROTOCOL_PREFIX.length), "base64url").toString("utf8");
    } catch {
      given = undefined;
    }
  }
  if (!tokensEqual(given, opts.token)) {
    return { ok: false, status: 401, message: given === undefined ? "Missing token." : "Wrong token." };
  }
  return { ok: true, protocol: chosen };
}
