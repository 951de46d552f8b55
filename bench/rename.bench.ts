// Rename of a symbol used in 50 files, on a real code-server workbench, two ways in the same run:
// (A) one refactor_rename call (apply) — the editor's language service finds every use, imports included;
// (B) what an agent does without it: one fs_search, then one editor_apply_edits (save) per file, with
//     every occurrence of that file (as a replace-all Edit would).
// Measured for each: tool calls, bytes of model-visible text (the arguments the model writes + the
// text and structuredContent it reads back) and wall time. Both end with every file renamed (checked).
// Run: node --import tsx bench/rename.bench.ts   (needs scripts/setup-peers.sh and the built extension)
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import editorApplyEdits from "../src/tools/editor_apply_edits.ts";
import fsSearch from "../src/tools/fs_search.ts";
import type { AnyToolDef } from "../src/tools/kernel.ts";
import refactorRename from "../src/tools/refactor_rename.ts";
import { benchWorkspace, bootBenchWorkbench } from "./workbench-lib.ts";

const FILES = 50;

const { dir, ws, env } = benchWorkspace("ccb-rename-bench-");
mkdirSync(join(ws, "src"), { recursive: true });
writeFileSync(
  join(ws, "tsconfig.json"),
  JSON.stringify({ compilerOptions: { strict: true, module: "ESNext", moduleResolution: "Bundler", noEmit: true } }),
);
writeFileSync(join(ws, "src/shapes.ts"), "export function totalArea(xs: number[]): number {\n  return xs.length;\n}\n");
for (let i = 0; i < FILES; i++)
  writeFileSync(
    join(ws, `src/use${i}.ts`),
    `import { totalArea } from "./shapes";\n\n// module ${i}\nexport function f${i}(): number {\n  return totalArea([${i}]) + totalArea([]);\n}\n`,
  );

const { core, gw, wb, ctx } = await bootBenchWorkbench(ws, env);

interface Tally {
  calls: number;
  bytes: number;
}
async function call(t: AnyToolDef, raw: Record<string, unknown>, tally: Tally) {
  const r = await t.execute(t.input.parse(raw), ctx);
  tally.calls++;
  tally.bytes +=
    Buffer.byteLength(JSON.stringify(raw)) +
    Buffer.byteLength(r.text) +
    Buffer.byteLength(JSON.stringify(r.structured ?? {}));
  return r;
}
const uses = (name: string) =>
  Array.from({ length: FILES }, (_, i) => readFileSync(join(ws, `src/use${i}.ts`), "utf8")).filter((t) =>
    t.includes(`${name}(`),
  ).length;

// Warm the language service up (not measured): a preview of the rename.
const DECL = { path: "src/shapes.ts", position: { line: 1, column: 17 } };
for (let i = 0; ; i++) {
  const r = await refactorRename.execute(refactorRename.input.parse({ ...DECL, newName: "sumOfAreas" }), ctx);
  if ((r.structured as { files: unknown[] }).files.length === FILES + 1) break;
  if (i > 120) throw new Error("the language service never saw every file");
  await new Promise((res) => setTimeout(res, 1000));
}

// (A) one rename call
const a: Tally = { calls: 0, bytes: 0 };
let t0 = performance.now();
await call(refactorRename, { ...DECL, newName: "sumOfAreas", apply: true }, a);
const aMs = performance.now() - t0;
if (uses("sumOfAreas") !== FILES) throw new Error("(A) did not rename every file");

// (B) search + one edit per file, renaming back
const b: Tally = { calls: 0, bytes: 0 };
t0 = performance.now();
const found = await call(fsSearch, { query: "sumOfAreas", maxResults: 1000 }, b);
const byFile = new Map<string, { line: number; text: string }[]>();
for (const l of found.text.split("\n")) {
  const m = /^(.+?):(\d+):(.*)$/.exec(l);
  if (!m) continue;
  const list = byFile.get(m[1] as string) ?? [];
  list.push({ line: Number(m[2]), text: m[3] as string });
  byFile.set(m[1] as string, list);
}
for (const [path, lines] of byFile) {
  const edits = lines.flatMap(({ line, text }) => {
    const out = [];
    for (let c = text.indexOf("sumOfAreas"); c >= 0; c = text.indexOf("sumOfAreas", c + 1))
      out.push({
        range: { start: { line, column: c + 1 }, end: { line, column: c + 1 + "sumOfAreas".length } },
        newText: "totalArea",
      });
    return out;
  });
  await call(editorApplyEdits, { path, edits, save: true }, b);
}
const bMs = performance.now() - t0;
if (uses("totalArea") !== FILES) throw new Error("(B) did not rename every file");

await wb.close();
await gw.close();
await core.dispose();
rmSync(dir, { recursive: true, force: true });

const line = (name: string, t: Tally, ms: number) =>
  `${name.padEnd(34)} ${String(t.calls).padStart(5)} calls ${String(t.bytes).padStart(8)} bytes ${ms.toFixed(0).padStart(7)} ms`;
console.log(
  `rename of a symbol used in ${FILES} files (+ its declaration), load ${(await import("node:os")).loadavg()[0]?.toFixed(1)}`,
);
console.log(line("refactor_rename (one call)", a, aMs));
console.log(line("fs_search + editor_apply_edits/file", b, bMs));
console.log(
  `ratio: ${(b.calls / a.calls).toFixed(0)}x calls, ${(b.bytes / a.bytes).toFixed(2)}x bytes, ${(bMs / aMs).toFixed(2)}x time`,
);
console.log(
  JSON.stringify({
    bench: "rename",
    files: FILES,
    rename: { calls: a.calls, bytes: a.bytes, ms: Math.round(aMs) },
    baseline: { calls: b.calls, bytes: b.bytes, ms: Math.round(bMs) },
  }),
);
process.exit(0);
