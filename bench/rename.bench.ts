// Rename of a symbol used in 50 files, on a real code-server workbench, two ways in the same run:
// (A) one refactor_rename call (apply) — the editor's language service finds every use, imports included;
// (B) what an agent does without it: one fs_search, then one editor_apply_edits (save) per file, with
//     every occurrence of that file (as a replace-all Edit would).
// Measured for each: tool calls, bytes of model-visible text (the arguments the model writes + the
// text and structuredContent it reads back) and wall time. Both end with every file renamed (checked).
// Run: node --import tsx bench/rename.bench.ts   (needs scripts/setup-peers.sh and the built extension)
import { rmSync } from "node:fs";
import editorApplyEdits from "../src/tools/editor_apply_edits.ts";
import fsSearch from "../src/tools/fs_search.ts";
import refactorRename from "../src/tools/refactor_rename.ts";
import {
  readImporters,
  type Tally,
  talliedCall,
  tallyLine,
  untilPlanned,
  writeImportersProject,
} from "./refactor-lib.ts";
import { benchWorkspace, bootBenchWorkbench } from "./workbench-lib.ts";

const FILES = 50;

const { dir, ws, env } = benchWorkspace("ccb-rename-bench-");
writeImportersProject(
  ws,
  { "src/shapes.ts": "export function totalArea(xs: number[]): number {\n  return xs.length;\n}\n" },
  FILES,
  (i) =>
    `import { totalArea } from "./shapes";\n\n// module ${i}\nexport function f${i}(): number {\n  return totalArea([${i}]) + totalArea([]);\n}\n`,
);

const { ctx, close } = await bootBenchWorkbench(ws, env);

const call = talliedCall(ctx);
const uses = (name: string) => readImporters(ws, FILES).filter((t) => t.includes(`${name}(`)).length;

// Warm the language service up (not measured): a preview of the rename.
const DECL = { path: "src/shapes.ts", position: { line: 1, column: 17 } };
await untilPlanned(
  () => refactorRename.execute(refactorRename.input.parse({ ...DECL, newName: "sumOfAreas" }), ctx),
  FILES + 1,
  "every file",
);

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

await close();
rmSync(dir, { recursive: true, force: true });

const line = (name: string, t: Tally, ms: number) => tallyLine(name, t, ms, 34);
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
