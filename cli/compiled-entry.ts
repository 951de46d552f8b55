// Entry of the compiled binary (scripts/compile.mjs): unpacks the embedded asset pack (ccb's code
// and the files it reads at run time) into ccb's cache, verified by SHA-256, then runs the CLI
// from there. `Bun.embeddedFiles` holds the pack, added to the executable by `bun build --compile`.
import { CCB_VERSION } from "../src/core/version.ts";

const PACK_NAME = "ccb.pack";

async function main(): Promise<void> {
  // `ccb --version` is answered here, before the pack is opened: it needs nothing of ccb's code.
  // console.log, not process.stdout: under Bun the first use of process.stdout sets up Node's
  // stream classes, which doubles the start-up time of this one-line answer.
  const args = process.argv.slice(2);
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
    console.log(CCB_VERSION);
    return;
  }
  const [{ join }, { pathToFileURL }, { materializeInCache, setEmbeddedAssetDir }, { cacheDir }] = await Promise.all([
    import("node:path"),
    import("node:url"),
    import("../src/util/assets.ts"),
    import("../src/util/paths.ts"),
  ]);
  const files = (globalThis as { Bun?: { embeddedFiles?: Array<Blob & { name?: string }> } }).Bun?.embeddedFiles ?? [];
  const blob = files.find((f) => f.name === PACK_NAME || f.name?.endsWith(`/${PACK_NAME}`));
  if (!blob) throw new Error(`this binary has no embedded ${PACK_NAME} (it was not built by scripts/compile.mjs)`);
  const dir = materializeInCache(new Uint8Array(await blob.arrayBuffer()), cacheDir());
  setEmbeddedAssetDir(dir);
  await import(pathToFileURL(join(dir, "code", "main.js")).href);
}

main().catch((err: unknown) => {
  process.stderr.write(`ccb: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
