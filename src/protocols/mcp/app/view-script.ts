import { readFileSync } from "node:fs";
import { CcbError } from "../../../core/errors.ts";

/**
 * The bundled App view (view/main.ts with the ext-apps SDK). The builds (scripts/build.mjs for
 * dist/node, scripts/bun-bundle.mjs for the compiled binary) replace this module with one that
 * returns the bundle as a string, so ccb reads no file for it at run time; running from source
 * (tsx) reads the bundle that scripts/build.mjs wrote to dist/app-view/view.js.
 */
export function appViewScript(): string {
  const file = new URL("../../../../dist/app-view/view.js", import.meta.url);
  try {
    return readFileSync(file, "utf8");
  } catch {
    throw new CcbError("INTERNAL", "The MCP App view is not built (dist/app-view/view.js is missing).", {
      hint: "Run `npm run build` (scripts/build.mjs bundles it).",
    });
  }
}
