import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { z } from "zod";
import { type Core, createCore } from "../../../src/core/core.ts";
import { isCcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { CCB_VERSION } from "../../../src/core/version.ts";
import { workspaceTools } from "../../../src/tools/catalog.ts";
import type { AnyToolDef, ToolResult } from "../../../src/tools/kernel.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const sha = (data: string) => createHash("sha256").update(data).digest("hex");
/** The file tools, as the catalog has them (a new one is checked without being named here). */
const FS_TOOLS = workspaceTools
  .filter((t) => t.name === "workspace_status" || t.name.startsWith("fs_"))
  .map((t) => t.name);

function tool(name: string): AnyToolDef {
  const def = workspaceTools.find((t) => t.name === name);
  assert.ok(def, `tool ${name} is registered`);
  return def;
}

const base = tmpdirFixture({ prefix: "ccb-tools-fs-" });
const root = join(base.path, "root");
const outside = join(base.path, "outside");
let core: Core;

/** Call a tool as a front end does: parse the arguments with its schema, then execute. */
async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const def = tool(name);
  const parsed = def.input.parse(args);
  return def.execute(parsed, { core, signal: new AbortController().signal, log: silentLogger });
}

async function callFails(name: string, args: Record<string, unknown>, code: string): Promise<void> {
  await assert.rejects(
    call(name, args),
    (err) => {
      assert.ok(isCcbError(err), `${name} ${JSON.stringify(args)}: expected CcbError, got ${String(err)}`);
      assert.equal(err.code, code, `${name} ${JSON.stringify(args)}: ${err.message}`);
      assert.ok(err.toUserText().length > err.code.length + 2);
      return true;
    },
    `${name} ${JSON.stringify(args)} must fail with ${code}`,
  );
}

before(() => {
  mkdirSync(join(root, "src"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "needle outside secret\n");
  writeFileSync(join(root, "src", "a.ts"), "const a = 1;\n// needle one\nconst b = 2;\n// needle two\n");
  writeFileSync(join(root, "README.md"), "# project\n");
  symlinkSync(join(outside, "secret.txt"), join(root, "link-file"));
  symlinkSync(outside, join(root, "link-dir"));
  symlinkSync(join(outside, "planted.txt"), join(root, "dangling"));
  linkSync(join(outside, "secret.txt"), join(root, "hard.txt"));
  core = createCore({ roots: [root] });
});
after(async () => {
  await core.dispose();
  base.cleanup();
});

describe("fs tool definitions", () => {
  it("are registered with described schemas and the right annotations", () => {
    assert.ok(FS_TOOLS.length >= 7, `the catalog's file tools: ${FS_TOOLS.join(", ")}`);
    for (const name of FS_TOOLS) {
      const def = tool(name);
      assert.ok(def.description.length > 80, `${name} has a real description`);
      assert.equal(def.annotations.openWorldHint, false);
      const schema = z.toJSONSchema(def.input, { io: "input", unrepresentable: "any" }) as {
        properties?: Record<string, { description?: string }>;
      };
      for (const [field, prop] of Object.entries(schema.properties ?? {})) {
        assert.ok(prop.description && prop.description.length > 10, `${name}.${field} is described`);
      }
    }
    for (const name of ["workspace_status", "fs_list", "fs_read", "fs_search"]) {
      assert.deepEqual(
        tool(name).annotations,
        { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        name,
      );
    }
    assert.deepEqual(tool("fs_write").annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
    assert.deepEqual(tool("fs_move").annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
    assert.deepEqual(tool("fs_delete").annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
  });

  it("reject malformed arguments at the schema", () => {
    assert.equal(tool("fs_write").input.safeParse({ path: "x", content: "y", expectedVersion: "abc" }).success, false);
    assert.equal(tool("fs_read").input.safeParse({ path: "x", startLine: 0 }).success, false);
    assert.equal(tool("fs_search").input.safeParse({ query: "" }).success, false);
    assert.equal(tool("fs_list").input.safeParse({ limit: 0 }).success, false);
  });
});

describe("fs tools", () => {
  it("workspace_status reports roots, engine, bridge, terminals, version and platform", async () => {
    const r = await call("workspace_status", {});
    assert.match(r.text, new RegExp(`ccb ${CCB_VERSION.replace(/\./g, "\\.")} on ${process.platform}`));
    assert.match(r.text, /search: ripgrep \(ripgrep \d+/);
    assert.match(r.text, /editor bridge: not connected/);
    assert.match(r.text, /terminals: 0 \(0 running\)/);
    const s = r.structured as {
      roots: Array<{ path: string; primary: boolean }>;
      search: { engine: string };
      bridge: { connected: boolean };
      terminals: { count: number };
      version: string;
    };
    assert.deepEqual(
      s.roots.map((x) => [x.path, x.primary]),
      [[root, true]],
    );
    assert.equal(s.search.engine, "ripgrep");
    assert.equal(s.bridge.connected, false);
    assert.equal(s.terminals.count, 0);
    assert.equal(s.version, CCB_VERSION);
  });

  it("fs_write, fs_read and versions round-trip; a stale version is a conflict that names the current one", async () => {
    const w = await call("fs_write", {
      path: "notes/todo.md",
      content: "- one\n- two\n",
      createParents: true,
      expectedVersion: null,
    });
    assert.match(w.text, /^Created notes\/todo\.md \(12 bytes, version [0-9a-f]{64}\)\.$/);
    assert.equal(w.structured?.version, sha("- one\n- two\n"));
    assert.equal(w.structured?.abs, undefined, "no absolute server paths in the result");
    const r = await call("fs_read", { path: "notes/todo.md" });
    assert.equal(r.text, `notes/todo.md (version ${sha("- one\n- two\n")}, 12 bytes, 2 lines)\n- one\n- two\n`);
    const part = await call("fs_read", { path: "notes/todo.md", startLine: 2 });
    assert.match(part.text.split("\n")[0] ?? "", /lines 2-2 of 2/);
    const w2 = await call("fs_write", {
      path: "notes/todo.md",
      content: "- three\n",
      expectedVersion: sha("- one\n- two\n"),
    });
    assert.match(w2.text, /^Overwrote notes\/todo\.md .*previous version/);
    await assert.rejects(
      call("fs_write", { path: "notes/todo.md", content: "lost\n", expectedVersion: sha("- one\n- two\n") }),
      (err) => {
        assert.ok(isCcbError(err, "VERSION_CONFLICT"));
        assert.ok(err.toUserText().includes(sha("- three\n")), "the model-visible text carries the current version");
        return true;
      },
    );
    assert.equal(readFileSync(join(root, "notes/todo.md"), "utf8"), "- three\n");
  });

  it("fs_read says where to continue when cut", async () => {
    writeFileSync(join(root, "long.txt"), "0123456789\n".repeat(10));
    const r = await call("fs_read", { path: "long.txt", maxBytes: 25 });
    assert.match(r.text, /\[truncated at maxBytes: continue with startLine=3 or byteOffset=22\]$/);
    assert.equal(r.structured?.truncated, true);
  });

  it("fs_list shows entries and says when truncated", async () => {
    const r = await call("fs_list", { recursive: true });
    assert.match(r.text, /^\.: \d+ entries\n/);
    assert.ok(r.text.includes("\nsrc/\n"));
    assert.ok(r.text.includes("\nsrc/a.ts  "));
    assert.ok(r.text.includes("link-dir -> (symlink, not followed)"));
    assert.ok(r.text.includes("hard.txt  22 B  (hard-linked: not readable)"));
    const cut = await call("fs_list", { recursive: true, limit: 2 });
    assert.match(cut.text, /truncated at limit 2/);
    assert.equal(cut.structured?.truncated, true);
  });

  it("fs_search lists path:line:text, context blocks, and says when truncated", async () => {
    const r = await call("fs_search", { query: "needle", path: "src" });
    assert.equal(
      r.text,
      '2 matches in 1 file for "needle" in src (ripgrep)\nsrc/a.ts:2:// needle one\nsrc/a.ts:4:// needle two',
    );
    const c = await call("fs_search", { query: "needle", path: "src", contextLines: 1 });
    assert.equal(
      c.text.split("\n").slice(1).join("\n"),
      "src/a.ts-1-const a = 1;\nsrc/a.ts:2:// needle one\nsrc/a.ts-3-const b = 2;\nsrc/a.ts:4:// needle two",
    );
    const t = await call("fs_search", { query: "needle", maxResults: 1 });
    assert.match(
      t.text,
      /^1 match in 1 file .*; truncated: 1 shown, there are more\. Narrow the query, path or include globs, or raise maxResults\./,
    );
    assert.equal(t.structured?.truncated, true);
    const none = await call("fs_search", { query: "no-such-text-anywhere" });
    assert.match(none.text, /^No matches/);
    const secret = await call("fs_search", { query: "secret" });
    assert.match(secret.text, /^No matches/, "neither symlinks nor hard links leak outside content");
  });

  it("fs_move and fs_delete report what they did", async () => {
    writeFileSync(join(root, "mv.txt"), "mv\n");
    const m = await call("fs_move", { from: "mv.txt", to: "moved.txt" });
    assert.equal(m.text, `Moved mv.txt to moved.txt (version ${sha("mv\n")}).`);
    const d = await call("fs_delete", { path: "moved.txt" });
    assert.equal(d.text, "Deleted file moved.txt.");
  });
});

describe("fs tools security matrix", () => {
  const escapes: Array<[string, string, string]> = [
    ["dot-dot", "../outside/secret.txt", "PATH_OUTSIDE_WORKSPACE"],
    ["absolute", "", "PATH_OUTSIDE_WORKSPACE"], // filled in below (needs the temp path)
    ["symlinked file", "link-file", "PATH_OUTSIDE_WORKSPACE"],
    ["symlinked parent dir", "link-dir/secret.txt", "PATH_OUTSIDE_WORKSPACE"],
    ["new file under symlinked dir", "link-dir/new.txt", "PATH_OUTSIDE_WORKSPACE"],
    ["dangling symlink", "dangling", "PATH_OUTSIDE_WORKSPACE"],
    ["NUL byte", "src/a.ts\u0000x", "INVALID_PATH"],
  ];
  const paths = () =>
    escapes.map(([label, p, code]) => [label, label === "absolute" ? join(outside, "secret.txt") : p, code] as const);

  it("fs_read refuses every escape, including a hard link", async () => {
    for (const [, p, code] of paths()) {
      // A dangling symlink is outside in any case; "new file" does not exist but resolves outside first.
      await callFails("fs_read", { path: p }, code);
    }
    await callFails("fs_read", { path: "hard.txt" }, "PATH_OUTSIDE_WORKSPACE");
  });

  it("fs_write refuses every escape; writing a hard-linked name leaves the outside inode untouched", async () => {
    for (const [, p, code] of paths())
      await callFails("fs_write", { path: p, content: "pwned", createParents: true }, code);
    await call("fs_write", { path: "hard.txt", content: "replaced inside\n" });
    assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "needle outside secret\n");
    linkSync(join(outside, "secret.txt"), join(root, "hard.txt.2"));
  });

  it("fs_list, fs_search and fs_delete refuse every escape", async () => {
    for (const [label, p, code] of paths()) {
      if (label !== "new file under symlinked dir") {
        await callFails("fs_list", { path: p }, code);
        await callFails("fs_search", { query: "needle", path: p }, code);
      }
      if (label === "symlinked file" || label === "dangling symlink") continue; // deleting the link itself is allowed (below)
      await callFails("fs_delete", { path: p, recursive: true }, code);
    }
    await callFails("fs_delete", { path: ".", recursive: true }, "INVALID_ARGUMENT");
    await callFails("fs_delete", { path: root, recursive: true }, "INVALID_ARGUMENT");
    const hard = await call("fs_search", { query: "needle", path: "hard.txt.2" });
    assert.match(hard.text, /^No matches/);
  });

  it("fs_move refuses escapes at either end; replacing a symlink replaces the link, not its target", async () => {
    writeFileSync(join(root, "movable.txt"), "m\n");
    for (const [label, p, code] of paths()) {
      const linkItself = label === "symlinked file" || label === "dangling symlink";
      if (!linkItself)
        await callFails("fs_move", { from: "movable.txt", to: p, overwrite: true, createParents: true }, code);
      if (!linkItself) await callFails("fs_move", { from: p, to: "stolen.txt" }, code);
    }
    await callFails("fs_move", { from: ".", to: "elsewhere" }, "INVALID_ARGUMENT");
    assert.equal(readFileSync(join(root, "movable.txt"), "utf8"), "m\n");
    symlinkSync(join(outside, "secret.txt"), join(root, "link-file-2"));
    await callFails("fs_move", { from: "movable.txt", to: "link-file-2" }, "ALREADY_EXISTS");
    await call("fs_move", { from: "movable.txt", to: "link-file-2", overwrite: true });
    assert.equal(readFileSync(join(root, "link-file-2"), "utf8"), "m\n");
    assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "needle outside secret\n");
  });

  it("deleting links removes the links only, and nothing outside ever changed", async () => {
    await call("fs_delete", { path: "link-file" });
    await call("fs_delete", { path: "dangling" });
    await call("fs_delete", { path: "link-dir" });
    assert.deepEqual(readdirSync(outside).sort(), ["secret.txt"]);
    assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "needle outside secret\n");
  });
});
