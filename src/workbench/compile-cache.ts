import { lstatSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ownedPrivateDir } from "../core/files/safe/private.ts";
import { cacheDir } from "../util/paths.ts";

/**
 * The folder of the `compile-cache` lever (tuning.ts): Node's on-disk compile cache for the runtime's
 * Node processes (the VS Code server, its extension host, tsserver), kept across starts in ccb's cache
 * ($XDG_CACHE_HOME/ccb/node-compile-cache, CCB_COMPILE_CACHE_DIR to move it).
 *
 * Node (src/compile_cache.cc) takes an entry when its header matches a CRC32 of the module's source
 * and of the entry's own bytes, then hands the bytes to V8 as code: whoever can write the folder runs
 * code in the runtime. So the folder must be a directory of the user's own with mode 0700 (not a
 * symlink), in a parent nobody else can rename it out of; otherwise it is refused, and the runtime
 * gets NODE_DISABLE_COMPILE_CACHE=1 (tsserver enables the cache itself, by default in the shared
 * /tmp/node-compile-cache). Node creates `<folder>/<node version>-<arch>-<V8 tag>-<uid>/` below it.
 */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.CCB_COMPILE_CACHE_DIR || join(cacheDir(env), "node-compile-cache"));
}

/** Above this the folder is emptied before a start: Node never removes an entry, and the person's own `node` in a workbench terminal (it inherits the runtime's environment) adds theirs. */
const COMPILE_CACHE_MAX_BYTES = 256 * 1024 * 1024;

export interface CompileCache {
  /** What the runtime's environment gets. */
  env: Record<string, string>;
  /** Why the folder was not used (it is then not touched). */
  refused?: string;
}

/** Why `dir` must not hold a compile cache, or undefined when it is the user's own 0700 folder in a parent only the user (or a sticky bit) guards. */
function unsafeCacheDir(dir: string): string | undefined {
  const uid = process.getuid?.();
  try {
    if (!ownedPrivateDir(dir)) return "not a directory owned by you with mode 0700";
    const parent = statSync(dirname(dir));
    const ownerOk = uid === undefined || parent.uid === uid || parent.uid === 0;
    const othersWrite = (parent.mode & 0o022) !== 0 && (parent.mode & 0o1000) === 0;
    if (!ownerOk || othersWrite) return `its parent ${dirname(dir)} can be written by another user`;
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

/** Total bytes of the files in `dir` and its subfolders (Node's layout: one level of version folders). */
function sizeOf(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isDirectory()) total += sizeOf(p);
    else total += st.size;
  }
  return total;
}

/** The runtime's environment entries for the lever (`on`), with the folder made and checked. */
export function compileCache(env: NodeJS.ProcessEnv, on: boolean, maxBytes = COMPILE_CACHE_MAX_BYTES): CompileCache {
  // Off: no cache at all, not tsserver's own default in the shared /tmp/node-compile-cache.
  if (!on) return { env: { NODE_DISABLE_COMPILE_CACHE: "1" } };
  const dir = compileCacheDir(env);
  const why = unsafeCacheDir(dir);
  if (why) return { env: { NODE_DISABLE_COMPILE_CACHE: "1" }, refused: `${dir}: ${why}` };
  try {
    if (sizeOf(dir) > maxBytes)
      for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
  } catch {
    // a runtime of another ccb writing it: its entries are renamed in whole, the next start sizes it again
  }
  return { env: { NODE_COMPILE_CACHE: dir } };
}
