// Bundles the MCP App view (src/protocols/mcp/app/view/main.ts, on @modelcontextprotocol/ext-apps)
// for the browser and provides the esbuild/Bun plugin that inlines it into ccb's own bundle in place
// of src/protocols/mcp/app/view-script.ts. Used by scripts/build.mjs and scripts/bun-bundle.mjs.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
export const APP_VIEW_FILE = join(root, "dist/app-view/view.js");

/** Build dist/app-view/view.js (one minified IIFE, no external loads) and return its text. */
export async function buildAppView() {
  const r = await build({
    absWorkingDir: root,
    entryPoints: [join(root, "src/protocols/mcp/app/view/main.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: ["chrome110", "firefox115", "safari16"],
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const code = r.outputFiles[0].text;
  mkdirSync(join(root, "dist/app-view"), { recursive: true });
  const tmp = `${APP_VIEW_FILE}.tmp-${process.pid}`;
  writeFileSync(tmp, code);
  renameSync(tmp, APP_VIEW_FILE);
  return code;
}

/** The App view as built, building it when missing. */
export async function appViewCode() {
  try {
    return readFileSync(APP_VIEW_FILE, "utf8");
  } catch {
    return buildAppView();
  }
}

/** esbuild/Bun plugin: view-script.ts becomes a module that returns the bundled view as a string. */
export function appViewPlugin(code) {
  return {
    name: "ccb-app-view",
    setup(b) {
      b.onLoad({ filter: /[\\/]protocols[\\/]mcp[\\/]app[\\/]view-script\.ts$/ }, () => ({
        contents: `export function appViewScript() { return ${JSON.stringify(code)}; }\n`,
        loader: "js",
      }));
    },
  };
}
