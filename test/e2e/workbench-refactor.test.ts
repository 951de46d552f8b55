import assert from "node:assert/strict";
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { e2e } from "../helpers/fixture.ts";
import { eventually, text } from "../helpers/workbench.ts";

/**
 * The editor's refactor and navigation powers end to end: `ccb serve --http` with a real code-server,
 * its built-in TypeScript language features and the real bridge extension; an MCP client calls the
 * tools. Booted once for the file.
 */
const files: Record<string, string> = {
  "tsconfig.json": JSON.stringify({
    compilerOptions: {
      strict: true,
      noUnusedLocals: true,
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "Bundler",
      noEmit: true,
    },
    include: ["src"],
  }),
  ".vscode/settings.json": JSON.stringify({
    "editor.tabSize": 2,
    "editor.insertSpaces": true,
    "editor.detectIndentation": false,
    // The web workbench saves after a delay by default; a person with unsaved changes has it off.
    "files.autoSave": "off",
  }),
  "src/shapes.ts":
    "export interface Shape {\n  area(): number;\n}\n" +
    "export class Square implements Shape {\n  constructor(private side: number) {}\n  area(): number {\n    return this.side * this.side;\n  }\n}\n" +
    "export class Circle implements Shape {\n  constructor(private r: number) {}\n  area(): number {\n    return 3 * this.r * this.r;\n  }\n}\n" +
    "export function totalArea(shapes: Shape[]): number {\n  return shapes.reduce((sum, s) => sum + s.area(), 0);\n}\n",
  "src/report.ts":
    'import { Square, totalArea } from "./shapes";\n\nexport function report(): string {\n  return `total ${totalArea([new Square(2)])}`;\n}\n',
  "src/main.ts":
    'import { report } from "./report";\nimport { totalArea } from "./shapes";\n\nexport function main(): void {\n  console.log(report(), totalArea([]));\n}\n',
  "src/calls.ts":
    "export function leaf(): number {\n  return 1;\n}\nexport function mid(): number {\n  return leaf();\n}\nexport function top(): number {\n  return mid();\n}\n",
  "src/needs-import.ts": "export const c = new Circle(1);\n",
  "src/unused.ts":
    'import { Square } from "./shapes";\n\nexport function f(): number {\n  const unusedLocal = 5;\n  return new Square(1).area();\n}\n',
  "src/util.ts": "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n",
  "src/organize.ts": 'import { c, a } from "./util";\nimport { b } from "./util";\n\nexport const sum = a + c;\n',
  "src/ugly.ts": "export   function   ugly( x:number,y:number ){\nreturn x+y\n}\n",
};
const f = e2e({ prefix: "ccb-rf-", workbench: "serve", setupTimeout: 300_000, files });
const disk = f.read;
/** The 1-based line and column of the first `needle` in a file on disk. */
function find(p: string, needle: string): { line: number; column: number } {
  const lines = disk(p).split("\n");
  const line = lines.findIndex((l) => l.includes(needle));
  assert.ok(line >= 0, `${needle} in ${p}`);
  return { line: line + 1, column: (lines[line] as string).indexOf(needle) + 1 };
}

type Structured<T> = { structuredContent?: T };
const structured = <T>(r: Structured<unknown>) => r.structuredContent as T;
const at = (line: number, column: number) => ({ line, column });
const RENAME = { path: "src/shapes.ts", position: at(16, 17), newName: "sumOfAreas" };

async function preview(): Promise<{ previewId: string; files: Array<{ path: string }>; text: string }> {
  return eventually("rename preview over three files", async () => {
    const r = await f.wb.ok("refactor_rename", RENAME);
    const s = structured<{ previewId: string; files: Array<{ path: string }> }>(r);
    return s.files.length === 3 ? { ...s, text: text(r) } : undefined;
  });
}

/** The unsaved buffer of src/main.ts (it must still have unsaved changes). */
async function mainBuffer(): Promise<string> {
  const st = await f.wb.ok("editor_state", { path: "src/main.ts" });
  const o = structured<{ overlays: Array<{ path: string; text: string; isDirty: boolean }> }>(st).overlays.find(
    (x) => x.path === "src/main.ts",
  );
  assert.ok(o, text(st));
  assert.equal(o.isDirty, true, "src/main.ts keeps its unsaved changes");
  return o.text;
}

describe("refactor and navigation tools on a real workbench", { timeout: 900_000 }, () => {
  it("rename across three files with an import and a dirty buffer: preview, stale refused, read-only refused whole, apply", async () => {
    await f.wb.ok("editor_open", { path: "src/main.ts" });
    await f.wb.ok("editor_apply_edits", {
      path: "src/main.ts",
      edits: [{ range: { start: at(1, 1), end: at(1, 1) }, newText: "// draft\n" }],
    });
    assert.match(await mainBuffer(), /^\/\/ draft\n/);

    const p1 = await preview();
    assert.deepEqual(p1.files.map((f) => f.path).sort(), ["src/main.ts", "src/report.ts", "src/shapes.ts"]);
    assert.match(p1.text, /^--- a\/src\/main\.ts$/m);
    assert.match(p1.text, /^-import \{ totalArea \} from "\.\/shapes";$/m);
    assert.match(p1.text, /^\+import \{ sumOfAreas \} from "\.\/shapes";$/m);
    assert.match(p1.text, /^\+export function sumOfAreas\(shapes: Shape\[\]\): number \{$/m);
    assert.match(p1.text, /^ \/\/ draft$/m, "the preview is computed on the unsaved buffer");
    assert.match(disk("src/shapes.ts"), /function totalArea/, "a preview changes nothing");
    await mainBuffer();

    // stale: a file changes after the preview
    await f.wb.ok("editor_apply_edits", {
      path: "src/shapes.ts",
      edits: [{ range: { start: at(1, 1), end: at(1, 1) }, newText: "// v2\n" }],
      save: true,
    });
    const stale = await f.wb.call("refactor_rename", {
      ...RENAME,
      position: at(17, 17),
      apply: true,
      previewId: p1.previewId,
    });
    assert.equal(stale.isError, true, text(stale));
    assert.match(text(stale), /VERSION_CONFLICT/);
    assert.match(disk("src/shapes.ts"), /function totalArea/);
    assert.match(disk("src/report.ts"), /totalArea/);
    await mainBuffer();

    // one read-only file: nothing is applied anywhere
    chmodSync(join(f.ws, "src/report.ts"), 0o444);
    try {
      const refused = await f.wb.call("refactor_rename", { ...RENAME, position: at(17, 17), apply: true });
      assert.equal(refused.isError, true, text(refused));
      assert.match(text(refused), /PERMISSION_DENIED/);
      assert.match(text(refused), /src\/report\.ts|report\.ts/);
    } finally {
      chmodSync(join(f.ws, "src/report.ts"), 0o644);
    }
    assert.match(disk("src/shapes.ts"), /function totalArea/);
    assert.match(disk("src/report.ts"), /totalArea/);
    assert.doesNotMatch(await mainBuffer(), /sumOfAreas/);

    // a fresh preview, applied with its id
    const p2 = await eventually("fresh preview", async () => {
      const r = await f.wb.ok("refactor_rename", { ...RENAME, position: at(17, 17) });
      const s = structured<{ previewId: string; files: unknown[] }>(r);
      return s.files.length === 3 ? s : undefined;
    });
    assert.notEqual(p2.previewId, p1.previewId);
    await mainBuffer();
    const done = await f.wb.ok("refactor_rename", {
      ...RENAME,
      position: at(17, 17),
      apply: true,
      previewId: p2.previewId,
    });
    const s = structured<{ applied: boolean; files: Array<{ path: string; saved: boolean; leftUnsaved: boolean }> }>(
      done,
    );
    assert.equal(s.applied, true);
    assert.deepEqual(s.files.map((f) => [f.path, f.saved, f.leftUnsaved]).sort(), [
      ["src/main.ts", false, true],
      ["src/report.ts", true, false],
      ["src/shapes.ts", true, false],
    ]);
    assert.match(disk("src/shapes.ts"), /export function sumOfAreas\(/);
    assert.equal(
      disk("src/report.ts"),
      'import { Square, sumOfAreas } from "./shapes";\n\nexport function report(): string {\n  return `total ${sumOfAreas([new Square(2)])}`;\n}\n',
    );
    assert.equal(disk("src/main.ts"), files["src/main.ts"], "the dirty buffer is not saved");
    const buf = await mainBuffer();
    assert.match(
      buf,
      /^\/\/ draft\nimport \{ report \} from "\.\/report";\nimport \{ sumOfAreas \} from "\.\/shapes";/,
    );
    assert.match(buf, /console\.log\(report\(\), sumOfAreas\(\[\]\)\);/);
  });

  it('the "add missing import" quick fix, listed then applied by id', async () => {
    await f.wb.ok("editor_open", { path: "src/needs-import.ts" });
    const fix = await eventually("add-import quick fix", async () => {
      const r = await f.wb.ok("refactor_code_actions", { path: "src/needs-import.ts", kind: "quickfix" });
      const list = structured<{ actions: Array<{ id: string; title: string; kind?: string }> }>(r).actions;
      return list.find((a) => /Add import from "\.\/shapes"/.test(a.title));
    });
    assert.equal(fix.kind, "quickfix");
    const r = await f.wb.ok("refactor_apply_code_action", { id: fix.id });
    assert.match(text(r), /^\+import \{ Circle \} from "\.\/shapes";$/m);
    assert.equal(
      disk("src/needs-import.ts"),
      'import { Circle } from "./shapes";\n\nexport const c = new Circle(1);\n',
    );
    const again = await f.wb.call("refactor_apply_code_action", { id: fix.id });
    assert.equal(again.isError, true, "an id listed before the change is stale");
    assert.match(text(again), /VERSION_CONFLICT/);
  });

  it('the "remove unused" quick fix', async () => {
    await f.wb.ok("editor_open", { path: "src/unused.ts" });
    const fix = await eventually("remove-unused quick fix", async () => {
      const r = await f.wb.ok("refactor_code_actions", {
        path: "src/unused.ts",
        range: { start: at(4, 9), end: at(4, 20) },
      });
      const list = structured<{ actions: Array<{ id: string; title: string }> }>(r).actions;
      return list.find((a) => /Remove unused declaration for: 'unusedLocal'/.test(a.title));
    });
    await f.wb.ok("refactor_apply_code_action", { id: fix.id });
    assert.doesNotMatch(disk("src/unused.ts"), /unusedLocal/);
    assert.match(disk("src/unused.ts"), /return new Square\(1\)\.area\(\);/);
  });

  it("organize imports drops the unused import and sorts the rest", async () => {
    const r = await eventually("organize imports", async () => {
      const res = await f.wb.ok("refactor_source_action", { path: "src/organize.ts" });
      return disk("src/organize.ts") !== files["src/organize.ts"] ? res : undefined;
    });
    assert.match(text(r), /Organize Imports|organizeImports/i);
    assert.equal(disk("src/organize.ts"), 'import { a, c } from "./util";\n\nexport const sum = a + c;\n');
  });

  it("format uses the workspace's settings (2-space indent)", async () => {
    const r = await eventually("format", async () => {
      const res = await f.wb.ok("refactor_format", { path: "src/ugly.ts" });
      return disk("src/ugly.ts") !== files["src/ugly.ts"] ? res : undefined;
    });
    assert.match(text(r), /^--- a\/src\/ugly\.ts$/m);
    assert.equal(disk("src/ugly.ts"), "export function ugly(x: number, y: number) {\n  return x + y\n}\n");
    assert.equal(structured<{ options: { tabSize: number } }>(r).options.tabSize, 2);
  });

  it("call hierarchy, two levels of callers", async () => {
    const r = await eventually("call hierarchy", async () => {
      const res = await f.wb.ok("language_call_hierarchy", { path: "src/calls.ts", position: at(1, 17), depth: 2 });
      return structured<{ roots: unknown[] }>(res).roots.length ? res : undefined;
    });
    type N = { name: string; path: string; children: N[] };
    const roots = structured<{ roots: N[] }>(r).roots;
    assert.equal(roots[0]?.name, "leaf");
    assert.equal(roots[0]?.children[0]?.name, "mid");
    assert.equal(roots[0]?.children[0]?.children[0]?.name, "top");
    assert.equal(roots[0]?.children[0]?.path, "src/calls.ts");
    assert.match(text(r), /^leaf \(Function.*\n {2}mid \(Function.* src\/calls\.ts:4:\d+ — calls at 5:\d+\n {4}top /m);
    const one = await f.wb.ok("language_call_hierarchy", { path: "src/calls.ts", position: at(1, 17), depth: 1 });
    assert.deepEqual(structured<{ roots: N[] }>(one).roots[0]?.children[0]?.children, [], "depth bounds the tree");
  });

  it("implementations of an interface", async () => {
    const shape = find("src/shapes.ts", "Shape {");
    const r = await eventually("implementations", async () => {
      const res = await f.wb.ok("language_implementations", { path: "src/shapes.ts", position: shape });
      return structured<{ locations: unknown[] }>(res).locations.length >= 2 ? res : undefined;
    });
    const square = find("src/shapes.ts", "Square implements");
    const circle = find("src/shapes.ts", "Circle implements");
    assert.match(text(r), new RegExp(`src/shapes\\.ts:${square.line}:${square.column}\\b`));
    assert.match(text(r), new RegExp(`src/shapes\\.ts:${circle.line}:${circle.column}\\b`));
  });

  it("vscode_execute_command: a provider command with a path argument answers with workspace paths, applies nothing", async () => {
    const r = await f.wb.ok("vscode_execute_command", {
      command: "vscode.executeDocumentRenameProvider",
      args: [{ $type: "uri", path: "src/calls.ts" }, { $type: "position", line: 0, character: 16 }, "leaf2"],
      waitSeconds: 30,
    });
    const result = structured<{ result: { $type: string; files: Array<{ path: string; edits: unknown[] }> } }>(
      r,
    ).result;
    assert.equal(result.$type, "workspaceEdit");
    assert.deepEqual(
      result.files.map((f) => f.path),
      ["src/calls.ts"],
    );
    assert.equal(result.files[0]?.edits.length, 2);
    assert.doesNotMatch(text(r), new RegExp(f.ws), "no absolute paths");
    assert.equal(disk("src/calls.ts"), files["src/calls.ts"]);
  });

  it("vscode_execute_command: a command that opens a picker ends with TIMEOUT and the picker closed", async () => {
    await f.wb.ok("editor_open", { path: "src/calls.ts" });
    const r = await f.wb.call("vscode_execute_command", { command: "workbench.action.debug.start", waitSeconds: 3 });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /TIMEOUT/);
    assert.match(text(r), /waiting for input/);
    // the same command, asked for at once, times out again instead of stacking pickers: the first
    // command's late close (inside its quiet window) does not close the second one's picker
    const again = await f.wb.call("vscode_execute_command", {
      command: "workbench.action.debug.start",
      waitSeconds: 3,
    });
    assert.match(text(again), /TIMEOUT/);
    // and the workbench still answers
    await f.wb.ok("editor_state");
  });
});
