#!/usr/bin/env node
// Imports point downwards: cli → src/protocols/* → src/agent → src/{workbench,stream,link} → src/tools →
// src/{net,platform,runtime-fetch} → src/core → src/util → src/editor-wire. A module may import its own
// folder and any lower layer; never a higher one, and never a sibling of its own layer
// (src/protocols/mcp ↛ src/protocols/acp, src/workbench ↛ src/link). The bottom floor, src/editor-wire
// (the bridge contract, its frames and close codes, the pending-call correlator), imports only zod and
// itself. The bridge extension (extension/: a separate program, bundled into the editor's extension
// host, with the review code only it uses) imports only the wire and itself, and nothing in ccb imports
// it. No import circle either (type-only and lazy imports count). Exit 1 lists offenders.
// `node scripts/check-layers.mjs [root]` checks another tree (the tests plant imports in a copy).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = process.argv[2] ? resolve(process.argv[2]) : fileURLToPath(new URL("..", import.meta.url));

/** [unit, rank]: a unit is a folder prefix; the longest matching prefix names a file's unit. */
const UNITS = [
  ["src/editor-wire", -1],
  ["src/util", 0],
  ["src/core", 1],
  ["src/net", 2],
  ["src/platform", 2],
  ["src/runtime-fetch", 2],
  ["src/tools", 3],
  ["src/workbench", 4],
  ["src/stream", 4],
  ["src/link", 4],
  ["src/agent", 5],
  ["src/protocols/mcp", 6],
  ["src/protocols/ide", 6],
  ["src/protocols/acp", 6],
  ["cli", 7],
  // the bridge extension's program: above everything (nothing imports it), allowed only the wire (ONLY)
  ["extension", 8],
];
/** Units that may import only these units besides their own. */
const ONLY = new Map([["extension", new Set(["src/editor-wire"])]]);
/** Units that may import only these packages (bare specifiers); the others take any. */
const PACKAGES = new Map([["src/editor-wire", new Set(["zod"])]]);

function unitOf(file) {
  let best;
  for (const [u, rank] of UNITS)
    if ((file === u || file.startsWith(`${u}/`)) && (!best || u.length > best[0].length)) best = [u, rank];
  return best && { unit: best[0], rank: best[1] };
}

function walk(dir) {
  const out = [];
  for (const name of readdirSync(join(root, dir))) {
    if (name === "node_modules") continue;
    const p = join(dir, name);
    if (statSync(join(root, p)).isDirectory()) out.push(...walk(p));
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

const SPEC =
  /(?:^|\s)(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^import\s*["']([^"']+)["']/gm;
const problems = [];
/** file → the files it imports (relative specifiers, type-only and lazy ones too), for the cycle check. */
const edges = new Map();
for (const file of ["src", "cli", "extension"].flatMap((d) => walk(d))) {
  const from = unitOf(file);
  if (!from) continue;
  const text = readFileSync(join(root, file), "utf8");
  for (const m of text.matchAll(SPEC)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec) continue;
    if (!spec.startsWith(".")) {
      const allowed = PACKAGES.get(from.unit);
      const pkg = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0];
      if (allowed && !allowed.has(pkg))
        problems.push(`${file} imports the package ${spec} (${from.unit} takes only ${[...allowed].join(", ")})`);
      continue;
    }
    const target = relative(root, resolve(join(root, dirname(file)), spec));
    if (!edges.has(file)) edges.set(file, new Set());
    edges.get(file).add(target);
    const to = unitOf(target);
    const only = ONLY.get(from.unit);
    if (only && to?.unit !== from.unit && !only.has(to?.unit)) {
      problems.push(`${file} imports ${target} (${from.unit} may import only ${[...only].join(", ")})`);
      continue;
    }
    if (!to || to.unit === from.unit) continue;
    if (to.rank >= from.rank) problems.push(`${file} imports ${target} (${from.unit} → ${to.unit})`);
  }
}
problems.push(...cycles(edges).map((c) => `import circle among: ${c.join(", ")}`));
if (problems.length > 0) {
  console.error(
    `check-layers: ${problems.length} import(s) point upwards or sideways, or go round in a circle:\n  ${problems.join("\n  ")}`,
  );
  process.exit(1);
}
console.error("check-layers: every import points downwards, and none goes round in a circle");

/** The import circles: groups of files that import each other, directly or round about (Tarjan's strongly connected components). */
function cycles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
