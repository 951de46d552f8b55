// Bundles the scripts ccb serves to browsers, each a TypeScript module type-checked with the DOM lib and
// linted like the rest of src/, and provides the esbuild/Bun plugin that inlines them into ccb's own
// bundle (so neither dist/node nor the compiled binary reads a file for them at run time). Used by
// scripts/build.mjs and scripts/bun-bundle.mjs. Running from source (tsx), the loaders read what
// scripts/build.mjs wrote to dist/.
//   - the MCP App view (src/protocols/mcp/app/view/main.ts, on @modelcontextprotocol/ext-apps), minified,
//     in place of src/protocols/mcp/app/view-script.ts;
//   - the page scripts of src/platform/page-scripts.ts (PAGE_SCRIPTS below), in place of that module:
//     unminified, as readable in a browser's devtools as the text they replaced.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const TARGET = ["chrome110", "firefox115", "safari16"];

/** name → [entry module, built file, minified]; the names are src/platform/page-scripts.ts's PageScript. */
const BUNDLES = {
  "app-view": ["src/protocols/mcp/app/view/main.ts", "dist/app-view/view.js", true],
  "stream-client": ["src/stream/viewer/global.ts", "dist/page-scripts/stream-client.js", false],
  "stream-viewer": ["src/stream/viewer/page.ts", "dist/page-scripts/stream-viewer.js", false],
  "workbench-alive": ["src/workbench/alive-page.ts", "dist/page-scripts/workbench-alive.js", false],
};

async function bundle(name) {
  const [entry, file, minify] = BUNDLES[name];
  const r = await build({
    absWorkingDir: root,
    entryPoints: [join(root, entry)],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: TARGET,
    minify,
    legalComments: "none",
    logLevel: "warning",
  });
  const code = r.outputFiles[0].text;
  const out = join(root, file);
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.tmp-${process.pid}`;
  writeFileSync(tmp, code);
  renameSync(tmp, out);
  return code;
}

/** Build every browser bundle into dist/ (one IIFE each, no external loads); returns name → text. */
export async function buildPageScripts() {
  const names = Object.keys(BUNDLES);
  const codes = await Promise.all(names.map(bundle));
  return Object.fromEntries(names.map((n, i) => [n, codes[i]]));
}

/** The bundles as built, building them when one is missing. */
export async function pageScriptsCode() {
  try {
    return Object.fromEntries(
      Object.entries(BUNDLES).map(([n, [, file]]) => [n, readFileSync(join(root, file), "utf8")]),
    );
  } catch {
    return buildPageScripts();
  }
}

/** esbuild/Bun plugin: the loader modules become modules that return the bundles as strings. */
export function pageScriptsPlugin(codes) {
  const { "app-view": appView, ...pages } = codes;
  return {
    name: "ccb-page-scripts",
    setup(b) {
      b.onLoad({ filter: /[\\/]protocols[\\/]mcp[\\/]app[\\/]view-script\.ts$/ }, () => ({
        contents: `export function appViewScript() { return ${JSON.stringify(appView)}; }\n`,
        loader: "js",
      }));
      b.onLoad({ filter: /[\\/]platform[\\/]page-scripts\.ts$/ }, () => ({
        contents: `const SCRIPTS = ${JSON.stringify(pages)};\nexport function pageScript(name) { return SCRIPTS[name]; }\n`,
        loader: "js",
      }));
    },
  };
}
