import { randomBytes } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { CcbError } from "../../core/errors.ts";
import { ownedPrivateDir } from "../../core/files/safe/private.ts";
import { BRIDGE_CONFIG_FILE, type BridgeConfig, EXTENSION_ID } from "../../editor-wire/contract.ts";
import { claimDir, removeStale } from "../../platform/state-folders.ts";
import { embeddedAssetDir } from "../../util/assets.ts";
import { NO_TYPINGS_SETTINGS } from "../tuning.ts";
import type { LaunchDirs } from "./types.ts";

function inside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** ccb's own settings in the workbench's user settings (the person's other settings are kept). */
const CCB_SETTINGS: Record<string, unknown> = {
  "telemetry.telemetryLevel": "off",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.enableExperiments": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "workbench.tips.enabled": false,
  // A clean first screen: the workspace's files, no runtime-bundled AI chat panel (Claude is the agent here).
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  // A web workbench auto-saves after 1 s by default (desktop VS Code does not), and saving a proposal
  // under review accepts it: a person's (or the model's) first keystroke in a proposal accepted the
  // review a second later. Auto save keeps working for the workspace's files; a proposal
  // (`ccb-proposed:`, outside every workspace folder) is saved only when someone saves it.
  "files.autoSaveWorkspaceFilesOnly": true,
};

/**
 * Settings that make the workbench lighter without taking a feature away (issue 35, measured in
 * bench/workbench-cost.bench.ts): one TypeScript server per project instead of two (the syntax
 * server only answers sooner while a large project loads; every feature stays), and no lookups that
 * cannot succeed offline and that nobody asked for (extension recommendations, npm package info).
 */
export const LEAN_SETTINGS: Record<string, unknown> = {
  "typescript.tsserver.useSyntaxServer": "never",
  "extensions.ignoreRecommendations": true,
  "npm.fetchOnlinePackageInfo": false,
  "workbench.settings.enableNaturalLanguageSearch": false,
};

/** Write ccb's settings into `file`, over a settings file that is there (one with comments is left as it is). */
function writeSettings(file: string, lean: boolean, noTypings: boolean): void {
  let current: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      current = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    } catch {
      return; // the person's own (JSON with comments): ccb's flags still turn off telemetry and trust
    }
  }
  writeFileSync(
    file,
    `${JSON.stringify({ ...current, ...CCB_SETTINGS, ...(lean ? LEAN_SETTINGS : {}), ...(noTypings ? NO_TYPINGS_SETTINGS : {}) }, null, 2)}\n`,
    {
      mode: 0o600,
    },
  );
}

/**
 * A fresh per-instance state folder OUTSIDE every workspace root (so file tools cannot plant
 * extension code or read the bridge token through it): $XDG_STATE_HOME/ccb/workbench/<id>, else the
 * temp dir when that would fall inside the workspace (e.g. the workspace is $HOME). Removed on close,
 * by the supervisor however ccb ends, and (owner gone) at the next start.
 *
 * With `keepUserData` (a key per set of roots: the shared workbench's), the workbench's user data
 * (settings, window state and the backups of unsaved buffers that VS Code's hot exit restores) lives
 * in `<parent>-data/<key>/user-data` instead, kept across restarts of the runtime and across owners,
 * so a workbench started after its owner died restores what a person had typed and not saved. It
 * holds no ccb secret (the bridge token is in the per-instance extensions folder).
 */
export function createStateDirs(
  roots: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  keepUserData?: string,
  /** Add LEAN_SETTINGS (default true; off only for the same-run comparison of bench/workbench-cost). */
  lean = true,
  /** Add NO_TYPINGS_SETTINGS (the `no-typings` lever; default false). */
  noTypings = false,
): LaunchDirs {
  const base = env.XDG_STATE_HOME || join(homedir(), ".local/state");
  const candidates = [join(base, "ccb/workbench"), join(tmpdir(), `ccb-workbench-${process.getuid?.() ?? "u"}`)];
  for (const parent of candidates) {
    const realParent = real(parent);
    if (roots.some((r) => inside(realParent, r) || inside(r, realParent))) continue;
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    if (roots.some((r) => inside(real(parent), r))) continue;
    removeStale(parent); // folders of ccb processes that are gone
    const state = mkdtempSync(join(parent, `${randomBytes(4).toString("hex")}-`));
    claimDir(state);
    const kept = keepUserData ? join(`${parent}-data`, keepUserData) : undefined;
    const keep = kept !== undefined && ownedPrivateDir(`${parent}-data`) && ownedPrivateDir(kept);
    const dirs: LaunchDirs = {
      state,
      userData: keep ? join(kept, "user-data") : join(state, "user-data"),
      extensions: join(state, "extensions"),
      serverData: join(state, "server-data"),
    };
    for (const d of [dirs.userData, dirs.extensions, dirs.serverData, join(dirs.userData, "User")])
      mkdirSync(d, { recursive: true, mode: 0o700 });
    writeSettings(join(dirs.userData, "User/settings.json"), lean, noTypings);
    writeFileSync(join(state, "code-server.yaml"), "auth: none\ncert: false\n", { mode: 0o600 });
    return dirs;
  }
  throw new CcbError("CONFIG_INVALID", "Could not find a state folder outside the workspace for the workbench.", {
    hint: "Set XDG_STATE_HOME to a folder outside the workspace.",
  });
}

export function removeStateDirs(dirs: LaunchDirs): void {
  rmSync(dirs.state, { recursive: true, force: true });
}

/** The built extension folder (dist/bridge-extension/<publisher.name-version>), or CCB_BRIDGE_EXTENSION_DIR. */
export function findBuiltExtension(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CCB_BRIDGE_EXTENSION_DIR) return env.CCB_BRIDGE_EXTENSION_DIR;
  // The compiled binary's unpacked assets first, then from the module (dist/node/... from a
  // checkout or the source package, src/workbench/launcher under tsx).
  const embedded = embeddedAssetDir();
  const starts = embedded ? [embedded] : [dirname(fileURLToPath(import.meta.url))];
  for (const start of starts) {
    let dir = start;
    for (let i = 0; i < 6; i++) {
      for (const c of [join(dir, "dist/bridge-extension"), join(dir, "bridge-extension")]) {
        if (!existsSync(c)) continue;
        const pkg = readdirSync(c).find(
          (n) =>
            n.startsWith(`${EXTENSION_ID}-`) &&
            /^[\w.-]+-\d+\.\d+\.\d+$/.test(n) &&
            existsSync(join(c, n, "extension.js")),
        );
        if (pkg) return join(c, pkg);
      }
      dir = dirname(dir);
    }
  }
  throw new CcbError("RUNTIME_UNAVAILABLE", "The bridge extension is not built (dist/bridge-extension is missing).", {
    hint: "Run `node scripts/build.mjs` (npm run build), or set CCB_BRIDGE_EXTENSION_DIR to the built extension folder.",
  });
}

/** Copy the bridge extension into the runtime's extensions dir with its 0600 config (url + token). */
export function installBridgeExtension(
  dirs: LaunchDirs,
  config: BridgeConfig,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const src = findBuiltExtension(env);
  const dest = join(dirs.extensions, src.split(sep).pop() as string);
  rmSync(dest, { recursive: true, force: true });
  cpSync(src, dest, { recursive: true });
  writeFileSync(join(dest, BRIDGE_CONFIG_FILE), JSON.stringify(config), { mode: 0o600 });
  return dest;
}
