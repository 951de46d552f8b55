import { readFileSync } from "node:fs";
import { CcbError } from "../core/errors.ts";

/**
 * The scripts ccb serves to browsers, each a TypeScript module bundled for the browser at build time
 * (scripts/page-scripts.mjs, which names their entry modules):
 * - `stream-client`: defines `ccbStream(options)` (src/stream/viewer/client.ts) for the MCP App document;
 * - `stream-viewer`: the `ccb stream` viewer page's script (src/stream/viewer/page.ts);
 * - `workbench-alive`: the liveness script every workbench page gets (src/workbench/alive-page.ts).
 */
export type PageScript = "stream-client" | "stream-viewer" | "workbench-alive";

const read = new Map<PageScript, string>();

/**
 * A page script's bundled text. The builds (scripts/build.mjs for dist/node, scripts/bun-bundle.mjs
 * for the compiled binary) replace this module with one that returns the bundles as strings, so ccb
 * reads no file for them at run time; running from source (tsx) reads what scripts/build.mjs wrote to
 * dist/page-scripts/.
 */
export function pageScript(name: PageScript): string {
  let code = read.get(name);
  if (code === undefined) {
    const file = new URL(`../../dist/page-scripts/${name}.js`, import.meta.url);
    try {
      code = readFileSync(file, "utf8");
    } catch {
      throw new CcbError(
        "INTERNAL",
        `The page script ${name} is not built (dist/page-scripts/${name}.js is missing).`,
        {
          hint: "Run `npm run build` (scripts/build.mjs bundles it).",
        },
      );
    }
    read.set(name, code);
  }
  return code;
}
