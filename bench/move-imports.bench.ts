// Moving a file imported by 50 files, on a real code-server workbench, two ways in the same run:
// (A) refactor_move: a preview, then the apply (2 calls), and the apply alone (1 call, no preview)
//     — the editor's TypeScript server computes every import edit, the moved file's own included;
// (B) what an agent does without it: a plain fs_move, one fs_search for the importers, then an
//     fs_read + fs_write per importer (and for the moved file, whose own relative import changes).
// Measured for each: tool calls, bytes of model-visible text (the arguments the model writes + the
// text and structuredContent it reads back) and wall time. Each ends with every import right (checked).
// Run: node --import tsx bench/move-imports.bench.ts   (needs scripts/setup-peers.sh and the built extension)
import { existsSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import fsMove from "../src/tools/fs_move.ts";
import fsRead from "../src/tools/fs_read.ts";
import fsSearch from "../src/tools/fs_search.ts";
import fsWrite from "../src/tools/fs_write.ts";
import refactorMove from "../src/tools/refactor_move.ts";
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
const HERE = "src/util.ts";
const THERE = "src/lib/util.ts";

const { dir, ws, env } = benchWorkspace("ccb-move-bench-");
writeImportersProject(
  ws,
  {
    "src/config.ts": "export const SCALE = 2;\n",
    [HERE]:
      'import { SCALE } from "./config";\n\nexport function scaled(x: number): number {\n  return x * SCALE;\n}\n',
  },
  FILES,
  (i) =>
    `import { scaled } from "./util";\n\n// module ${i}\nexport function f${i}(): number {\n  return scaled(${i});\n}\n`,
);

const { ctx, close } = await bootBenchWorkbench(ws, env);

const call = talliedCall(ctx);
/** Every importer imports `spec`, and the module sits at `where` with its own import right. */
function check(what: string, spec: string, where: string, own: string) {
  const ok = readImporters(ws, FILES).filter((t) => t.includes(`from "${spec}"`)).length;
  if (ok !== FILES || !existsSync(join(ws, where)) || !readFileSync(join(ws, where), "utf8").includes(`from "${own}"`))
    throw new Error(`${what}: ${ok}/${FILES} importers right, or the module is not at ${where} with its import right`);
}
/** Wait (not measured) until the language service plans the move over every importer and the moved file. */
const warm = (from: string, to: string) =>
  untilPlanned(() => refactorMove.execute(refactorMove.input.parse({ from, to }), ctx), FILES + 1, "every importer");

// (A) preview + apply
await warm(HERE, THERE);
const a: Tally = { calls: 0, bytes: 0 };
let t0 = performance.now();
const p = await call(refactorMove, { from: HERE, to: THERE }, a);
await call(
  refactorMove,
  { from: HERE, to: THERE, apply: true, previewId: (p.structured as { previewId: string }).previewId },
  a,
);
const aMs = performance.now() - t0;
check("(A)", "./lib/util", THERE, "../config");

// (B) plain move back + search + read/write per file
const b: Tally = { calls: 0, bytes: 0 };
t0 = performance.now();
await call(fsMove, { from: THERE, to: HERE }, b);
await call(fsSearch, { query: 'from "./lib/util"', maxResults: 1000 }, b);
const fix = async (path: string, from: string, to: string) => {
  const r = await call(fsRead, { path }, b);
  const s = r.structured as { content: string; version: string };
  await call(fsWrite, { path, content: s.content.replace(from, to), expectedVersion: s.version }, b);
};
for (let i = 0; i < FILES; i++) await fix(`src/use${i}.ts`, 'from "./lib/util"', 'from "./util"');
await fix(HERE, 'from "../config"', 'from "./config"');
const bMs = performance.now() - t0;
check("(B)", "./util", HERE, "./config");

// (A) the apply alone, no preview
await warm(HERE, THERE);
const c: Tally = { calls: 0, bytes: 0 };
t0 = performance.now();
await call(refactorMove, { from: HERE, to: THERE, apply: true }, c);
const cMs = performance.now() - t0;
check("(A, apply only)", "./lib/util", THERE, "../config");

await close();
rmSync(dir, { recursive: true, force: true });

const line = (name: string, t: Tally, ms: number) => tallyLine(name, t, ms, 44);
const ratio = (x: Tally, xMs: number) =>
  `${(b.calls / x.calls).toFixed(0)}x calls, ${(b.bytes / x.bytes).toFixed(2)}x bytes, ${(bMs / xMs).toFixed(2)}x time`;
console.log(`move of a file imported by ${FILES} files (its own import changes too), load ${loadavg()[0]?.toFixed(1)}`);
console.log(line("refactor_move preview + apply", a, aMs));
console.log(line("refactor_move apply (one call)", c, cMs));
console.log(line("fs_move + fs_search + fs_read/fs_write/file", b, bMs));
console.log(`ratio vs preview + apply: ${ratio(a, aMs)}`);
console.log(`ratio vs one call:        ${ratio(c, cMs)}`);
console.log(
  JSON.stringify({
    bench: "move-imports",
    files: FILES,
    previewApply: { calls: a.calls, bytes: a.bytes, ms: Math.round(aMs) },
    apply: { calls: c.calls, bytes: c.bytes, ms: Math.round(cMs) },
    baseline: { calls: b.calls, bytes: b.bytes, ms: Math.round(bMs) },
  }),
);
process.exit(0);
