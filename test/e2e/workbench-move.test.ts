import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { e2e } from "../helpers/fixture.ts";
import { eventually, text } from "../helpers/workbench.ts";

/**
 * refactor_move end to end: `ccb serve --http` with a real code-server, its built-in TypeScript
 * extension (with the bridge's server plugin loaded) and the real bridge extension; an MCP client
 * calls the tools, and the project's own type check (`tsc --noEmit`) judges the result. Booted once.
 */
const files: Record<string, string> = {
  "tsconfig.json": JSON.stringify({
    compilerOptions: { strict: true, target: "ES2022", module: "ESNext", moduleResolution: "Bundler", noEmit: true },
    include: ["src"],
  }),
  ".vscode/settings.json": JSON.stringify({ "files.autoSave": "off" }),
  "src/config.ts": 'export const PREFIX = ">";\n',
  "src/util/strings.ts":
    'import { PREFIX } from "../config";\n\nexport function shout(s: string): string {\n  return `${PREFIX} ${s.toUpperCase()}`;\n}\n',
  "src/a.ts": 'import { shout } from "./util/strings";\n\nexport const a = shout("a");\n',
  "src/b.ts":
    'import { shout } from "./util/strings";\nimport { PREFIX } from "./config";\n\nexport const b = shout(PREFIX);\n',
  "src/feature/c.ts": 'import { shout } from "../util/strings";\n\nexport const c = shout("c");\n',
  "src/feature/d.ts": 'import { PREFIX } from "../config";\n\nexport const d = PREFIX;\n',
  "src/lib/math.ts": "export function add(x: number, y: number): number {\n  return x + y;\n}\n",
  "src/lib/index.ts": 'export { add } from "./math";\n',
  "src/app.ts":
    'import { add } from "./lib/math";\nimport * as lib from "./lib";\n\nexport const n = add(1, lib.add(2, 3));\n',
  "src/feature/e.ts": 'import { add } from "../lib";\n\nexport const e = add(4, 5);\n',
  "src/plain/p.ts": "export const p = 1;\n",
  "src/plain-user.ts": 'import { p } from "./plain/p";\n\nexport const q = p + 1;\n',
};
const f = e2e({
  prefix: "ccb-mv-",
  dirs: ["outside"],
  workbench: "serve",
  setupTimeout: 300_000,
  files,
});
const disk = f.read;
const tscJs = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "lib/tsc.js");

/**
 * The project's own type check: `tsc --noEmit -p` over the workspace, on disk. Asynchronous: a
 * blocked event loop would let the MCP client reuse a keep-alive socket the server has closed.
 */
function typeCheck(): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tscJs, "--noEmit", "-p", f.ws],
      { encoding: "utf8", timeout: 120_000 },
      (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${stderr}` }),
    );
  });
}

interface Preview {
  previewId: string;
  files: Array<{ path: string; edits: number }>;
  moved: { from: string; to: string; kind: string };
  languageService: boolean;
}
const structured = <T>(r: { structuredContent?: unknown }) => r.structuredContent as T;

/** A preview once the TypeScript server has loaded the project and answers with `count` files. */
async function preview(from: string, to: string, count: number): Promise<Preview & { text: string }> {
  return eventually(`move preview ${from} -> ${to} over ${count} files`, async () => {
    const r = await f.wb.ok("refactor_move", { from, to });
    const s = structured<Preview>(r);
    return s.files.length === count ? { ...s, text: text(r) } : undefined;
  });
}

describe("refactor_move on a real workbench", { timeout: 900_000 }, () => {
  it("control: the project type-checks as written", async () => {
    const r = await typeCheck();
    assert.ok(r.ok, r.out);
  });

  it("moves a file imported by three others into another folder: the preview lists exactly the files, apply updates every importer, tsc passes", async () => {
    const before = Object.fromEntries(
      ["src/a.ts", "src/b.ts", "src/feature/c.ts", "src/util/strings.ts"].map((p) => [p, disk(p)]),
    );
    const p = await preview("src/util/strings.ts", "src/text/core/strings.ts", 4);
    assert.equal(p.languageService, true);
    assert.deepEqual(p.moved, { from: "src/util/strings.ts", to: "src/text/core/strings.ts", kind: "file" });
    assert.deepEqual(
      p.files.map((f) => f.path).sort(),
      ["src/a.ts", "src/b.ts", "src/feature/c.ts", "src/util/strings.ts"],
      "the importers and the moved file (its own relative import), nothing else",
    );
    assert.match(p.text, /^ {2}R src\/util\/strings\.ts -> src\/text\/core\/strings\.ts \(moved\)$/m);
    assert.match(p.text, /^-import \{ shout \} from "\.\/util\/strings";$/m);
    assert.match(p.text, /^\+import \{ shout \} from "\.\/text\/core\/strings";$/m);
    assert.match(p.text, /^\+import \{ shout \} from "\.\.\/text\/core\/strings";$/m);
    assert.match(p.text, /^\+import \{ PREFIX \} from "\.\.\/\.\.\/config";$/m, "the moved file's own import");
    // a preview writes nothing
    for (const [f, t] of Object.entries(before)) assert.equal(disk(f), t, `${f} unchanged by the preview`);
    assert.equal(existsSync(join(f.ws, "src/text")), false);

    // a stale previewId is refused whole
    const stale = await f.wb.call("refactor_move", {
      from: "src/util/strings.ts",
      to: "src/text/core/strings.ts",
      apply: true,
      previewId: "0000000000000000",
    });
    assert.equal(stale.isError, true, text(stale));
    assert.match(text(stale), /VERSION_CONFLICT/);
    assert.ok(existsSync(join(f.ws, "src/util/strings.ts")));

    const r = await f.wb.ok("refactor_move", {
      from: "src/util/strings.ts",
      to: "src/text/core/strings.ts",
      apply: true,
      previewId: p.previewId,
    });
    assert.match(text(r), /Moved src\/util\/strings\.ts to src\/text\/core\/strings\.ts/, text(r));
    assert.equal(existsSync(join(f.ws, "src/util/strings.ts")), false);
    assert.ok(existsSync(join(f.ws, "src/text/core/strings.ts")));
    assert.match(disk("src/a.ts"), /from "\.\/text\/core\/strings"/);
    assert.match(disk("src/b.ts"), /from "\.\/text\/core\/strings"/);
    assert.match(disk("src/feature/c.ts"), /from "\.\.\/text\/core\/strings"/);
    assert.match(disk("src/text/core/strings.ts"), /from "\.\.\/\.\.\/config"/);
    assert.equal(disk("src/feature/d.ts"), files["src/feature/d.ts"], "a file that does not import it is untouched");
    // the TypeScript extension's own handler of the move finds nothing left to do: no second edit lands
    await sleep(3_000);
    assert.equal((disk("src/a.ts").match(/text\/core\/strings/g) ?? []).length, 1, disk("src/a.ts"));
    const tc = await typeCheck();
    assert.ok(tc.ok, tc.out);
  });

  it("renames a folder: importers of files inside it are updated, tsc passes", async () => {
    const p = await preview("src/lib", "src/numbers", 2);
    assert.equal(p.moved.kind, "folder");
    assert.deepEqual(p.files.map((f) => f.path).sort(), ["src/app.ts", "src/feature/e.ts"]);
    assert.match(p.text, /^ {2}R src\/lib\/ -> src\/numbers\/ \(moved\)$/m);
    assert.ok(existsSync(join(f.ws, "src/lib/math.ts")), "a preview moves nothing");
    await f.wb.ok("refactor_move", { from: "src/lib", to: "src/numbers", apply: true, previewId: p.previewId });
    assert.equal(existsSync(join(f.ws, "src/lib")), false);
    assert.equal(disk("src/numbers/index.ts"), files["src/lib/index.ts"]);
    assert.match(disk("src/app.ts"), /from "\.\/numbers\/math"/);
    assert.match(disk("src/app.ts"), /from "\.\/numbers"/);
    assert.match(disk("src/feature/e.ts"), /from "\.\.\/numbers"/);
    const tc = await typeCheck();
    assert.ok(tc.ok, tc.out);
  });

  it("refuses a path outside the workspace at either end, and an existing destination; nothing moves", async () => {
    writeFileSync(join(f.dir("outside"), "x.ts"), "export const x = 1;\n");
    const out = await f.wb.call("refactor_move", { from: "src/a.ts", to: join(f.dir("outside"), "a.ts"), apply: true });
    assert.equal(out.isError, true, text(out));
    assert.match(text(out), /PATH_OUTSIDE_WORKSPACE/);
    const up = await f.wb.call("refactor_move", { from: "src/a.ts", to: "../escaped.ts" });
    assert.match(text(up), /PATH_OUTSIDE_WORKSPACE/);
    const inward = await f.wb.call("refactor_move", {
      from: join(f.dir("outside"), "x.ts"),
      to: "src/x.ts",
      apply: true,
    });
    assert.match(text(inward), /PATH_OUTSIDE_WORKSPACE/);
    const taken = await f.wb.call("refactor_move", { from: "src/a.ts", to: "src/b.ts", apply: true });
    assert.match(text(taken), /ALREADY_EXISTS/);
    assert.ok(existsSync(join(f.ws, "src/a.ts")));
    assert.equal(existsSync(join(f.dir("outside"), "a.ts")), false);
    assert.ok(existsSync(join(f.dir("outside"), "x.ts")));
    assert.equal(existsSync(join(f.ws, "src/x.ts")), false);
  });

  it("control: the plain move (fs_move) leaves the importers broken, and tsc says so", async () => {
    assert.ok((await typeCheck()).ok, "passes before");
    await f.wb.ok("fs_move", { from: "src/plain/p.ts", to: "src/other/p.ts", createParents: true });
    assert.match(disk("src/plain-user.ts"), /from "\.\/plain\/p"/, "fs_move updates no import");
    const tc = await typeCheck();
    assert.equal(tc.ok, false);
    assert.match(tc.out, /src\/plain-user\.ts.*Cannot find module '\.\/plain\/p'/);
  });
});
