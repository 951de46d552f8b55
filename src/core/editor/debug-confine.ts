import { CcbError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";

/**
 * Confinement of the debug block's paths (editor/contract-debug.ts), used by the debug tools and
 * again by the bridge server for every debug call: breakpoint files, the folder, and the file
 * fields of an inline launch configuration (`program`, `cwd`, `envFile`), with
 * `${workspaceFolder}` put in first and any other `${...}` variable refused there (it could point
 * anywhere). A configuration can still name any runtime to execute: the tools that start one are
 * annotated like the terminal tools and ask for permission where the protocol can.
 */
const CONFIG_PATH_FIELDS = ["program", "cwd", "envFile"] as const;
const FOLDER_VARIABLE = /\$\{(?:workspaceFolder|workspaceRoot)\}/g;

async function confineConfigPath(ws: Workspace, field: string, value: unknown): Promise<string> {
  if (typeof value !== "string" || value === "")
    throw new CcbError("INVALID_ARGUMENT", `The configuration's "${field}" must be a non-empty path.`);
  const substituted = value.replace(FOLDER_VARIABLE, ws.primary);
  if (substituted.includes("${"))
    throw new CcbError(
      "INVALID_ARGUMENT",
      `The configuration's "${field}" uses a variable ccb cannot check: ${value}`,
      {
        hint: "Give a workspace path (relative to the workspace or starting with ${workspaceFolder}).",
      },
    );
  return (await ws.resolve(substituted, { mustExist: true })).abs;
}

export async function confineDebugParams(
  ws: Workspace,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const out = { ...params };
  if (typeof params.folder === "string") out.folder = (await ws.resolve(params.folder, { mustExist: true })).abs;
  if (method === "debug.setBreakpoints" && Array.isArray(params.breakpoints)) {
    out.breakpoints = await Promise.all(
      params.breakpoints.map(async (b: Record<string, unknown>) => ({
        ...b,
        path: (await ws.resolve(String(b.path), { mustExist: true })).abs,
      })),
    );
  }
  if (method === "debug.start" && params.configuration && typeof params.configuration === "object") {
    const config = { ...(params.configuration as Record<string, unknown>) };
    for (const field of CONFIG_PATH_FIELDS)
      if (config[field] !== undefined) config[field] = await confineConfigPath(ws, field, config[field]);
    out.configuration = config;
  }
  return out;
}

/**
 * The join check for a session the person started (debug.describe's paths: its resolved program,
 * cwd and envFile): each must lie inside the workspace, as debug_start's inline ones must, so
 * joining reaches no program debug_start could not have been given. The refusal names the field,
 * not the outside path.
 */
export async function confineJoinedSession(ws: Workspace, paths: Record<string, string>): Promise<void> {
  for (const [field, value] of Object.entries(paths)) {
    try {
      await ws.resolve(value);
    } catch (err) {
      if (!(err instanceof CcbError) || err.code !== "PATH_OUTSIDE_WORKSPACE") throw err;
      throw new CcbError(
        "PATH_OUTSIDE_WORKSPACE",
        `This debug session's "${field}" is outside the workspace: ccb does not join it.`,
        { hint: "Ask the person to debug it themselves, or start a session of a workspace program with debug_start." },
      );
    }
  }
}
