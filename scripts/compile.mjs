#!/usr/bin/env node
// Compiles ccb into one executable with Bun (bun from the npm registry): dist/ccb.
// node-pty stays external: under Bun the terminal backend is Bun's own (Bun.spawn with `terminal`).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = process.argv[2] ?? "dist/ccb";
const extra = process.argv.slice(3);
const bun = fileURLToPath(new URL("../node_modules/.bin/bun", import.meta.url));
const r = spawnSync(
  bun,
  ["build", "--compile", "--minify", "--bytecode", "--format=esm", "--external", "node-pty", ...extra, "cli/main.ts", "--outfile", out],
  { cwd: root, stdio: "inherit" },
);
process.exit(r.status ?? 1);
