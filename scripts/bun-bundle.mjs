// Run by scripts/compile.mjs with bun: bundles the CLI for the Bun runtime and writes <work>/ccb.pack
// (the code chunks under code/, the bridge extension under bridge-extension/).
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { createPack } from "../src/util/assets.ts";
import { pageScriptsCode, pageScriptsPlugin } from "./page-scripts.mjs";

const root = new URL("..", import.meta.url).pathname;
const work = process.argv[2];
if (!work) throw new Error("usage: bun scripts/bun-bundle.mjs <work dir>");

const r = await Bun.build({
  entrypoints: [join(root, "cli/main.ts")],
  target: "bun",
  format: "esm",
  splitting: true,
  minify: true,
  // node-pty is the Node backend; under Bun the terminal backend is Bun's own.
  external: ["node-pty"],
  naming: { entry: "[name].js", chunk: "chunk-[hash].js" },
  plugins: [pageScriptsPlugin(await pageScriptsCode())],
});
if (!r.success) {
  for (const l of r.logs) console.error(l);
  process.exit(1);
}
const files = [];
for (const o of r.outputs)
  files.push({
    path: join("code", relative(".", o.path).replace(/^\.\//, "")),
    data: new Uint8Array(await o.arrayBuffer()),
  });

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.includes(".tmp-") || name.includes(".old-")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}
const ext = join(root, "dist/bridge-extension");
for (const p of walk(ext)) files.push({ path: join("bridge-extension", relative(ext, p)), data: readFileSync(p) });
const pack = createPack(files);
writeFileSync(join(work, "ccb.pack"), pack);
const raw = files.reduce((n, f) => n + f.data.byteLength, 0);
console.error(`ccb.pack: ${files.length} files, ${raw} bytes -> ${pack.length} bytes`);
