#!/usr/bin/env node
// Compiles ccb into one executable with Bun (bun from the npm registry): dist/ccb.
//   1. bundles cli/main.ts for the Bun runtime, split into lazily loaded chunks (scripts/bun-bundle.mjs);
//   2. packs those chunks and the files ccb reads at run time (dist/bridge-extension) into
//      dist/compiled/ccb.pack (src/util/assets.ts: SHA-256 per file, brotli);
//   3. compiles the small entry cli/compiled-entry.ts with the pack embedded. At run time the
//      entry unpacks the pack once into <cache>/assets/<sha-256>/ (verified) and runs the CLI from there.
// The pack is compressed (about 4x): the Bun runtime alone is ~109 MB, so the code must be small.
// Usage: node scripts/compile.mjs [outfile] [--target=bun-linux-x64|...] (other flags go to bun build)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = resolve(root, process.argv[2] ?? "dist/ccb");
const extra = process.argv.slice(3);
const bun = join(root, "node_modules/.bin/bun");
const work = join(root, "dist/compiled", `build-${process.pid}`);

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    rmSync(work, { recursive: true, force: true });
    process.exit(r.status ?? 1);
  }
}

// The bridge extension is part of the pack: build it when missing.
if (!existsSync(join(root, "dist/bridge-extension")))
  await import(new URL("./build-extension.mjs", import.meta.url).href);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
run(bun, [join(root, "scripts/bun-bundle.mjs"), work]);
mkdirSync(dirname(out), { recursive: true });
run(bun, [
  // --splitting keeps the asset unpacker (and node:crypto / node:zlib, slow to set up under Bun) in a
  // chunk of its own, loaded after `--version` has been answered.
  "build",
  "--compile",
  "--splitting",
  "--minify",
  "--format=esm",
  "--asset-naming=[name].[ext]",
  ...extra,
  "cli/compiled-entry.ts",
  join(work, "ccb.pack"),
  "--outfile",
  out,
]);
rmSync(work, { recursive: true, force: true });
