import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { configDir } from "../util/paths.ts";

export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "auto"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
const modeSchema = z.enum(PERMISSION_MODES);

export function parsePermissionMode(value: string, source: string): PermissionMode {
  const r = modeSchema.safeParse(value);
  if (!r.success) {
    throw new CcbError("CONFIG_INVALID", `Unknown permission mode "${value}" (from ${source}).`, {
      hint: `Use one of: ${PERMISSION_MODES.join(", ")}.`,
    });
  }
  return r.data;
}

/** `$XDG_CONFIG_HOME/ccb/link.json`: `{ "permissionMode": "acceptEdits" }`. */
export function linkConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), "link.json");
}

/**
 * The local default: --permission-mode flag > config file > ACP_PERMISSION_MODE > "default".
 */
export function localPermissionMode(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): PermissionMode {
  if (flag) return parsePermissionMode(flag, "--permission-mode");
  const file = linkConfigPath(env);
  let raw: string | undefined;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
    raw = undefined;
  }
  if (raw !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new CcbError("CONFIG_INVALID", `${file} is not valid JSON.`, {
        hint: 'Expected e.g. {"permissionMode": "default"}.',
      });
    }
    const mode = (parsed as { permissionMode?: unknown })?.permissionMode;
    if (typeof mode === "string") return parsePermissionMode(mode, file);
  }
  if (env.ACP_PERMISSION_MODE) return parsePermissionMode(env.ACP_PERMISSION_MODE, "ACP_PERMISSION_MODE");
  return "default";
}

/**
 * The mode a session gets: the client's `_meta.permissionMode` wins over the local default,
 * except that `bypassPermissions` is only granted when the local default already allows it.
 */
export function effectivePermissionMode(
  clientValue: unknown,
  local: PermissionMode,
): { mode: PermissionMode; note?: string } {
  if (typeof clientValue !== "string") return { mode: local };
  const r = modeSchema.safeParse(clientValue);
  if (!r.success) return { mode: local, note: `ignored unknown client permission mode "${clientValue}"` };
  if (r.data === "bypassPermissions" && local !== "bypassPermissions") {
    return { mode: local, note: "client asked for bypassPermissions, which the local default does not allow" };
  }
  return { mode: r.data };
}
