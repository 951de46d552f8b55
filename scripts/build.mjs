#!/usr/bin/env node
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
// Builds dist/node/ (the Node entry used by bin/ccb.mjs) with esbuild. Dependencies stay external:
// they are installed next to it by npm. Extra build steps (the bridge extension) register below.
import { build } from "esbuild";
import { buildPageScripts, pageScriptsPlugin } from "./page-scripts.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

// The scripts served to browsers (the MCP App view, the stream viewer, the workbench's liveness
// script): TypeScript modules bundled for the browser, inlined into the bundle as strings.
const pageScripts = await buildPageScripts();

await build({
  absWorkingDir: root,
  entryPoints: { main: "cli/main.ts" },
  outdir: "dist/node",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  logLevel: "warning",
  chunkNames: "chunks/[name]-[hash]",
  plugins: [pageScriptsPlugin(pageScripts)],
});

// The VS Code bridge extension (issue: workbench) builds itself when present.
const ext = new URL("./build-extension.mjs", import.meta.url);
if (existsSync(fileURLToPath(ext))) await import(ext.href);
