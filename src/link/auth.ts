import { join } from "node:path";
import { registerSecret } from "../core/secret-vault.ts";
import { type EdgePolicy, TOKEN_QUERY_KEYS } from "../net/policy.ts";
import { configDir } from "../util/paths.ts";
import { newToken, writeSecretFile } from "../util/secrets.ts";

export const SUBPROTOCOL_PREFIX = "rcs.auth.";

export function tokenFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), "link-token");
}

/** ACP_AUTH_TOKEN, else a new 256-bit token written to a 0600 file. */
export function resolveToken(env: NodeJS.ProcessEnv = process.env): {
  token: string;
  generated: boolean;
  file?: string;
} {
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

/**
 * The edge policy of `/acp` (and `/ws`), checked by the gateway BEFORE the upgrade: Host allow-list,
 * tokens in the query refused, Origin refused unless listed with --allow-origin, then the token as
 * `Authorization: Bearer` or the `rcs.auth.<base64url>` subprotocol (constant-time), frames capped.
 */
export function linkPolicy(opts: {
  token: string | undefined;
  allowOrigins: readonly string[];
  maxMessageBytes: number;
}): EdgePolicy {
  return {
    name: "link",
    origin: { kind: "same", allow: () => opts.allowOrigins },
    auth: [
      { places: [{ in: "bearer" }, { in: "subprotocol", prefix: SUBPROTOCOL_PREFIX }], expected: () => opts.token },
    ],
    refuseQueryKeys: TOKEN_QUERY_KEYS,
    maxFrameBytes: opts.maxMessageBytes,
    style: "text",
    realm: "ccb link",
    messages: {
      TOKEN_IN_QUERY:
        "Tokens in the query string are refused (they end up in logs and history). Use `Authorization: Bearer <token>` or the `rcs.auth.<base64url(token)>` subprotocol.",
      ORIGIN_REFUSED:
        "This browser Origin is not allowed. Start ccb link with --allow-origin <origin> to let that client in.",
      TOKEN_MISSING: "Missing token.",
      TOKEN_WRONG: "Wrong token.",
    },
  };
}
