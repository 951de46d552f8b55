import { homedir } from "node:os";
import { basename, isAbsolute, resolve as resolvePath } from "node:path";
import { CONFIG_PATH_FIELDS } from "../../editor-wire/contract-debug.ts";
import { CcbError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";

/**
 * Confinement of the debug block's paths (editor/contract-debug.ts), used by the debug tools and
 * again by the bridge server for every debug call: breakpoint files, the folder, and a launch
 * configuration ccb starts, inline or named (the copy of .vscode/launch.json ccb read from disk:
 * the model can write that file too). The platform's override (`linux`, `osx`, `windows`) is put
 * in first; `${command:…}` and `${input:…}` anywhere are refused (the workbench would run a command
 * or ask the person while it resolves them); then the file fields `program`, `cwd`, `envFile` and
 * `runtimeExecutable` (when it is a path, not a command name looked up on PATH), with
 * `${workspaceFolder}` (and `${workspaceFolder:name}`, `${workspaceRoot}`, `${userHome}`) put in,
 * must lie inside the workspace; any other `${...}` variable is refused there (it could point
 * anywhere). The refusal names the field. A name ccb did not find in a root's launch.json (the
 * editor also reads launch configurations from settings) is refused: the extension starts the
 * checked copy.
 * A configuration still runs a workspace program with the person's rights: the tools that start
 * one are annotated like the terminal tools and ask for permission where the protocol can.
 */
const PLATFORMS = ["linux", "osx", "windows"] as const;
const PLATFORM = process.platform === "win32" ? "windows" : process.platform === "darwin" ? "osx" : "linux";
/** Variables the workbench resolves by running a command or asking the person. */
export const ACTIVE_VARIABLE = /\$\{(?:command|input):/;

/** A command name (no separator, no variable): the debugger looks it up on PATH, as a terminal would. */
export const isCommandName = (field: string, value: string): boolean =>
  field === "runtimeExecutable" && !/[/\\]|\$\{/.test(value);

/** The configuration as the workbench reads it on this platform: its override merged in. */
export function forThisPlatform(config: Record<string, unknown>): Record<string, unknown> {
  const own = config[PLATFORM];
  const out: Record<string, unknown> = { ...config, ...(own && typeof own === "object" ? own : {}) };
  for (const p of PLATFORMS) delete out[p];
  return out;
}

function substitute(ws: Workspace, folder: string, value: string): string {
  return value
    .replace(/\$\{(?:workspaceFolder|workspaceRoot)\}/g, folder)
    .replace(/\$\{workspaceFolder:([^}]*)\}/g, (all, name: string) => ws.roots.find((r) => basename(r) === name) ?? all)
    .replace(/\$\{userHome\}/g, homedir());
}

async function confineConfigPath(ws: Workspace, folder: string, field: string, value: unknown): Promise<string> {
  if (typeof value !== "string" || value === "")
    throw new CcbError("INVALID_ARGUMENT", `The configuration's "${field}" must be a non-empty path.`);
  if (isCommandName(field, value)) return value;
  const substituted = substitute(ws, folder, value);
  if (substituted.includes("${"))
    throw new CcbError(
      "INVALID_ARGUMENT",
      `The configuration's "${field}" uses a variable ccb cannot check: ${value}`,
      {
        hint: "Give a workspace path (relative to the workspace or starting with ${workspaceFolder}).",
      },
    );
  try {
    return (
      await ws.resolve(isAbsolute(substituted) ? substituted : resolvePath(folder, substituted), { mustExist: true })
    ).abs;
  } catch (err) {
    if (!(err instanceof CcbError) || err.code !== "PATH_OUTSIDE_WORKSPACE") throw err;
    throw new CcbError(
      "PATH_OUTSIDE_WORKSPACE",
      `The configuration's "${field}" is outside the workspace: ccb does not start it.`,
      { hint: `Give a "${field}" inside the workspace, or ask the person to start this configuration themselves.` },
    );
  }
}

/** A launch configuration checked (see above) and returned with its file fields as absolute workspace paths. */
export async function confineLaunchConfig(
  ws: Workspace,
  folder: string,
  configuration: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const config = forThisPlatform(configuration);
  for (const [field, value] of Object.entries(config))
    if (ACTIVE_VARIABLE.test(JSON.stringify(value) ?? ""))
      throw new CcbError(
        "PERMISSION_DENIED",
        `The configuration's "${field}" uses \${command:…} or \${input:…}: resolving it would run a workbench command or ask the person, so ccb does not start it.`,
        { hint: "Give the value itself, or ask the person to start this configuration themselves." },
      );
  for (const field of CONFIG_PATH_FIELDS)
    if (config[field] !== undefined) config[field] = await confineConfigPath(ws, folder, field, config[field]);
  return config;
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
  if (method === "debug.start") {
    if (typeof params.name === "string" && !params.launch && !params.configuration)
      throw new CcbError(
        "NOT_FOUND",
        `No launch configuration named "${params.name}" in the workspace's .vscode/launch.json: ccb starts only configurations it can check there.`,
        { hint: "debug_configurations lists them; or give the configuration inline." },
      );
    const folder = typeof out.folder === "string" ? out.folder : ws.primary;
    for (const key of ["configuration", "launch"] as const)
      if (params[key] && typeof params[key] === "object")
        out[key] = await confineLaunchConfig(ws, folder, params[key] as Record<string, unknown>);
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
    if (isCommandName(field, value)) continue;
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
