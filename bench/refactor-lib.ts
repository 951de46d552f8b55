// What the refactor benchmarks (rename, move-imports) share: a TypeScript project of N importers, the
// tally of what the model sees of each tool call, and the (unmeasured) wait for the language service.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AnyToolDef, ToolContext } from "../src/tools/kernel.ts";

/**
 * A strict TypeScript project in `ws` (ESNext, bundler resolution): `modules` (path -> text) and
 * `count` importers src/use<i>.ts, the i-th with the text `importer(i)`.
 */
export function writeImportersProject(
  ws: string,
  modules: Record<string, string>,
  count: number,
  importer: (i: number) => string,
): void {
  mkdirSync(join(ws, "src"), { recursive: true });
  writeFileSync(
    join(ws, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, module: "ESNext", moduleResolution: "Bundler", noEmit: true } }),
  );
  for (const [path, text] of Object.entries(modules)) writeFileSync(join(ws, path), text);
  for (let i = 0; i < count; i++) writeFileSync(join(ws, `src/use${i}.ts`), importer(i));
}

/** The importers' texts as they are now. */
export function readImporters(ws: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => readFileSync(join(ws, `src/use${i}.ts`), "utf8"));
}

/** Tool calls and bytes of model-visible text (the arguments it writes, the text and structuredContent it reads). */
export interface Tally {
  calls: number;
  bytes: number;
}

/** A result row: what was measured (padded to `width`), its tally and its wall time. */
export const tallyLine = (name: string, t: Tally, ms: number, width: number) =>
  `${name.padEnd(width)} ${String(t.calls).padStart(5)} calls ${String(t.bytes).padStart(8)} bytes ${ms.toFixed(0).padStart(7)} ms`;

/** A tool call through `ctx`, counted in the tally it is given. */
export function talliedCall(ctx: ToolContext) {
  return async (t: AnyToolDef, raw: Record<string, unknown>, tally: Tally) => {
    const r = await t.execute(t.input.parse(raw), ctx);
    tally.calls++;
    tally.bytes +=
      Buffer.byteLength(JSON.stringify(raw)) +
      Buffer.byteLength(r.text) +
      Buffer.byteLength(JSON.stringify(r.structured ?? {}));
    return r;
  };
}

/** Wait (not measured) until `preview` plans edits over `files` files, retrying each second for about 2 minutes. */
export async function untilPlanned(
  preview: () => Promise<{ structured?: unknown }>,
  files: number,
  what: string,
): Promise<void> {
  for (let i = 0; ; i++) {
    const r = await preview();
    if ((r.structured as { files: unknown[] }).files.length === files) return;
    if (i > 120) throw new Error(`the language service never saw ${what}`);
    await new Promise((res) => setTimeout(res, 1000));
  }
}
