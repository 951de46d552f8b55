#!/usr/bin/env node
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
// Builds the VS Code bridge extension (extension/) with the shared bridge
// contract bundled in, as an unpacked extension folder the launcher copies into the runtime's
// extensions dir: dist/bridge-extension/<publisher>.<name>-<version>/{package.json,extension.js}.
// Imported by scripts/build.mjs; also runnable alone.
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "extension");
const manifest = JSON.parse(readFileSync(join(src, "package.json"), "utf8"));
const TSSERVER_PLUGIN = "ccb-tsserver-plugin";
const folder = `${manifest.publisher}.${manifest.name}-${manifest.version}`;
const finalDir = join(root, "dist/bridge-extension", folder);
// Built beside, then swapped in: a workbench launching meanwhile (tests run in parallel) never sees half a folder.
const outDir = `${finalDir}.tmp-${process.pid}`;
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: [join(src, "src/extension.ts")],
  outfile: join(outDir, "extension.js"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  external: ["vscode"],
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: false,
  logLevel: "warning",
});
// The TypeScript server plugin (package.json `typescriptServerPlugins`): the TypeScript extension
// loads it by name from this extension's node_modules.
const plugin = join(outDir, "node_modules", TSSERVER_PLUGIN);
mkdirSync(plugin, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: [join(src, "src/tsserver-plugin.ts")],
  outfile: join(plugin, "index.js"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
});
writeFileSync(
  join(plugin, "package.json"),
  `${JSON.stringify({ name: TSSERVER_PLUGIN, version: manifest.version, main: "index.js" })}\n`,
);
writeFileSync(join(outDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
const old = `${finalDir}.old-${process.pid}`;
try {
  renameSync(finalDir, old);
} catch {
  // first build
}
renameSync(outDir, finalDir);
rmSync(old, { recursive: true, force: true });
