#!/usr/bin/env node
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
// Builds dist/node/ (the Node entry used by bin/ccb.mjs) with esbuild. Dependencies stay external:
// they are installed next to it by npm. Extra build steps (the bridge extension) register below.
import { build } from "esbuild";
import { appViewPlugin, buildAppView } from "./app-view.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

// The MCP App view (browser code on the ext-apps SDK), inlined into the bundle as a string.
const appView = await buildAppView();

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
  plugins: [appViewPlugin(appView)],
});

// The VS Code bridge extension (issue: workbench) builds itself when present.
const ext = new URL("./build-extension.mjs", import.meta.url);
if (existsSync(fileURLToPath(ext))) await import(ext.href);
