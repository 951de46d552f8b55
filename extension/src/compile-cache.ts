import * as nodeModule from "node:module";

/** When after its start a process writes what it compiled so far (ms): the start, then the language extensions and projects a first file brings. */
const FLUSH_AFTER_MS = [3_000, 30_000];

let scheduled = false;

/**
 * The `compile-cache` lever (src/workbench/compile-cache.ts) in the processes ccb cannot wait for:
 * Node writes its compile cache when a process exits normally, but ccb stops the runtime's process
 * group with SIGTERM, on which the extension host and tsserver end without writing it. So this
 * process writes the V8 code cache of the modules it loaded so far (module.flushCompileCache, Node
 * 22.10 and later) a few seconds after its start and once more later. Only when the runtime has
 * NODE_COMPILE_CACHE (ccb sets it with the lever on); nothing otherwise.
 */
export function flushCompileCacheSoon(env: NodeJS.ProcessEnv = process.env): void {
  const flush = (nodeModule as { flushCompileCache?: () => void }).flushCompileCache;
  if (scheduled || !env.NODE_COMPILE_CACHE || typeof flush !== "function") return;
  scheduled = true;
  for (const ms of FLUSH_AFTER_MS)
    setTimeout(() => {
      try {
        flush();
      } catch {
        // a cache that cannot be written is only a slower next start
      }
    }, ms).unref();
}
