import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The scripts that start ccb under Node, Deno or `bun run`: the launcher, the bundle, the source CLI. */
const ENTRIES = new Set(["ccb", "ccb.mjs", "ccb.js", "main.mjs", "main.ts"]);

/**
 * How to start this same ccb again as a child process (e.g. `ccb acp` behind `ccb link`, the
 * detached workbench host): the compiled binary is its own entry; under Node (or `bun run`) the
 * script path is argv[1]. A process whose script is not ccb's (a test, or a program that embeds
 * ccb's modules) starts the package's launcher, `bin/ccb.mjs`: two folders above this module both
 * in the source tree (src/util/) and in the bundle (dist/node/).
 */
export function selfCommand(args: string[]): { command: string; args: string[] } {
  const script = process.argv[1];
  const compiled =
    typeof (globalThis as { Bun?: unknown }).Bun !== "undefined" &&
    (!script || script.startsWith("/$bunfs/") || script.startsWith("B:/~BUN/"));
  if (compiled) return { command: process.execPath, args };
  if (!script || !ENTRIES.has(basename(script))) {
    const launcher = packageLauncher();
    if (launcher) return { command: process.execPath, args: [launcher, ...args] };
  }
  if (!script) return { command: process.execPath, args };
  return {
    command: process.execPath,
    args: [...process.execArgv.filter((a) => !a.startsWith("--inspect")), script, ...args],
  };
}

function packageLauncher(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++) {
    const candidate = join(dir, "bin", "ccb.mjs");
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}
