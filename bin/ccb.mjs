#!/usr/bin/env node
// Thin launcher for running ccb with Node from an npm install or a checkout.
// `npm install` runs the build (the "prepare" script); a checkout without it gets a clear message.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/node/main.mjs", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("ccb: dist/ is missing. Run `npm install` (or `npm run build`) in the ccb checkout first.\n");
  process.exit(1);
}
await import(entry.href);
