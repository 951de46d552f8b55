import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** XDG base directories with the usual fallbacks; ccb's own folders live in `<base>/ccb`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "ccb");
}
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "ccb");
}
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.CCB_CACHE_DIR || join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "ccb");
}

/** The names in a folder, or none when it cannot be read (gone, not a folder, not ours). */
export function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
