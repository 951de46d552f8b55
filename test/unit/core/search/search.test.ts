import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { isCcbError } from "../../../../src/core/errors.ts";
import { findRgOnPath } from "../../../../src/core/search/rg.ts";
import { type SearchOptions, type SearchResult, SearchService } from "../../../../src/core/search/search.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

const base = tmpdirFixture({ prefix: "ccb-search-" });
const root = join(base.path, "root");
const outside = join(base.path, "outside");

function w(rel: string, content: string | Buffer): void {
  mkdirSync(join(root, rel, ".."), { recursive: true });
  writeFileSync(join(root, rel), content);
}

before(() => {
  mkdirSync(root);
  mkdirSync(outside);
  w(".gitignore", "build/\n*.tmp\n");
  w("src/.gitignore", "gen/\n!keep.tmp\n/local.txt\n");
  w(
    "src/a.ts",
    "import x from 'y';\n// a needle here\nconst Needle = 1;\nconst NEEDLE = 2;\nfunction f() {\n  return needle_needle;\n}\n",
  );
  w("src/b.js", "no match\nstill none\nneedle at line 3\n");
  w("src/gen/x.ts", "needle in generated\n");
  w("src/keep.tmp", "needle kept by negation\n");
  w("src/other.tmp", "needle ignored tmp\n");
  w("src/local.txt", "needle anchored ignore\n");
  w("src/sub/local.txt", "needle not anchored here\n");
  w("src/sub/deeper/z.py", "x = 'needle'\n");
  w("src/sub/keep.tmp", "needle kept by the parent's negation\n");
  w("src/sub/x.tmp", "needle ignored by the root's *.tmp\n");
  w("src/sub/gen/y.ts", "needle ignored by the parent's gen/\n");
  w("build/out.js", "needle in build\n");
  w(".hidden/h.txt", "needle hidden\n");
  w(".dotfile", "needle dotfile\n");
  w(".git/config", "needle in git dir\n");
  w("docs/readme.md", "# Docs\nünïcödé needle\n\ttab needle\n");
  w("bin.dat", Buffer.concat([Buffer.from("needle\n"), Buffer.from([0, 1, 2]), Buffer.from("needle\n")]));
  w("deep/a/b/c/d/e/f/needle.txt", "the deep needle\n");
  w("crlf.txt", "needle\r\nnext line\r\n");
  w("context.txt", ["l1", "l2", "needle 3", "l4", "l5", "l6", "needle 7", "needle 8", "l9"].join("\n"));
  writeFileSync(join(outside, "secret.txt"), "needle outside\n");
  symlinkSync(outside, join(root, "outlink"));
  symlinkSync(join(outside, "secret.txt"), join(root, "secret-link.txt"));
  linkSync(join(outside, "secret.txt"), join(root, "hardlinked.txt"));
  execFileSync("mkfifo", [join(root, "a-fifo")]);
});
after(() => base.cleanup());

const strip = (r: SearchResult) => ({ matches: r.matches, truncated: r.truncated });

describe("SearchService: ripgrep and JS engines agree", async () => {
  const rg = await findRgOnPath();
  it("has ripgrep on PATH for this suite (Debian ripgrep, installed by .ci/run)", () => {
    assert.ok(rg, "rg not found on PATH");
  });

  const cases: Array<[string, Omit<SearchOptions, "engine">]> = [
    ["literal default", { query: "needle" }],
    ["hidden files", { query: "needle", includeHidden: true }],
    ["no gitignore", { query: "needle", respectGitignore: false }],
    ["no gitignore + hidden", { query: "needle", respectGitignore: false, includeHidden: true }],
    ["include *.ts", { query: "needle", include: ["*.ts"] }],
    ["include src/** overrides gitignore (as ripgrep)", { query: "needle", include: ["src/**"] }],
    ["exclude dir and ext", { query: "needle", exclude: ["deep/", "*.md"] }],
    ["include with !negation", { query: "needle", include: ["*.ts", "*.js", "!src/b.js"] }],
    ["context lines", { query: "needle", contextLines: 2 }],
    ["regex", { query: "ne+dle(_\\w+)?\\b", regex: true }],
    ["regex anchors", { query: "^needle", regex: true }],
    ["case sensitive", { query: "Needle", caseSensitive: true }],
    ["case insensitive", { query: "NEEDLE", caseSensitive: false }],
    ["smart case upper", { query: "NEEDLE" }],
    ["subdir inherits ancestor .gitignore", { query: "needle", path: "src" }],
    ["nested subdir, anchored rule of parent", { query: "needle", path: "src/sub" }],
    ["explicitly named ignored dir", { query: "needle", path: "src/gen" }],
    ["single file", { query: "needle", path: "src/a.ts", contextLines: 1 }],
    ["unicode column", { query: "needle", path: "docs" }],
  ];
  for (const [name, opts] of cases) {
    it(`same results: ${name}`, async () => {
      const service = new SearchService(new Workspace([root]));
      const a = await service.search({ ...opts, engine: "ripgrep" });
      const b = await service.search({ ...opts, engine: "js" });
      assert.equal(a.engine, "ripgrep");
      assert.equal(b.engine, "js");
      assert.deepEqual(strip(b), strip(a));
      assert.ok(a.matches.length > 0, "the case must find something");
    });
  }
});

describe("SearchService semantics", () => {
  const service = new SearchService(new Workspace([root]));
  for (const engine of ["ripgrep", "js"] as const) {
    it(`${engine}: honours .gitignore (nested, negation, anchored), hidden, binary, symlinks and hard links`, async () => {
      const r = await service.search({ query: "needle", engine });
      const files = [...new Set(r.matches.map((m) => m.path))];
      assert.deepEqual(files, [
        "context.txt",
        "crlf.txt",
        "deep/a/b/c/d/e/f/needle.txt",
        "docs/readme.md",
        "src/a.ts",
        "src/b.js",
        "src/keep.tmp",
        "src/sub/deeper/z.py",
        "src/sub/keep.tmp",
        "src/sub/local.txt",
      ]);
      const sub = await service.search({ query: "needle", engine, path: "src/sub" });
      assert.deepEqual(
        [...new Set(sub.matches.map((m) => m.path))],
        ["src/sub/deeper/z.py", "src/sub/keep.tmp", "src/sub/local.txt"],
        "ancestors' rules (negation, dir-only, anchored) apply below a named subdirectory",
      );
      const hidden = await service.search({ query: "needle", engine, includeHidden: true });
      const hp = new Set(hidden.matches.map((m) => m.path));
      assert.ok(hp.has(".hidden/h.txt") && hp.has(".dotfile"));
      assert.ok(!hp.has(".git/config"), ".git is never searched while .gitignore is honoured");
    });

    it(`${engine}: reports line, column, text and context`, async () => {
      const r = await service.search({ query: "needle", engine, path: "docs" });
      assert.deepEqual(
        r.matches.map((m) => [m.line, m.column, m.text]),
        [
          [2, 9, "ünïcödé needle"],
          [3, 6, "\ttab needle"],
        ],
      );
      const c = await service.search({ query: "needle", engine, path: "context.txt", contextLines: 2 });
      assert.deepEqual(
        c.matches.map((m) => [m.line, m.before, m.after]),
        [
          [3, ["l1", "l2"], ["l4", "l5"]],
          [7, ["l5", "l6"], ["needle 8", "l9"]],
          [8, ["l6", "needle 7"], ["l9"]],
        ],
      );
      const crlf = await service.search({ query: "needle$", regex: true, engine, path: "crlf.txt" });
      assert.equal(crlf.matches.length, 0, "a line ending in \\r does not end at 'needle' (as ripgrep)");
    });

    it(`${engine}: cuts at maxResults and says truncated`, async () => {
      const r = await service.search({ query: "needle", engine, maxResults: 3 });
      assert.equal(r.matches.length, 3);
      assert.equal(r.truncated, true);
      const all = await service.search({ query: "needle", engine, maxResults: 1000 });
      assert.equal(all.truncated, false);
      const exact = await service.search({ query: "needle", engine, maxResults: all.matches.length });
      assert.equal(exact.truncated, false, "exactly maxResults matches is not truncated");
    });

    it(`${engine}: refuses bad input and escapes`, async () => {
      await assert.rejects(
        service.search({ query: "(unclosed", regex: true, engine }),
        (e) => isCcbError(e, "INVALID_ARGUMENT") && /regular expression/i.test(e.message),
      );
      await assert.rejects(service.search({ query: "", engine }), (e) => isCcbError(e, "INVALID_ARGUMENT"));
      await assert.rejects(service.search({ query: "needle", path: "outlink", engine }), (e) =>
        isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
      );
      await assert.rejects(service.search({ query: "needle", path: "../outside", engine }), (e) =>
        isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
      );
      await assert.rejects(service.search({ query: "needle", path: "secret-link.txt", engine }), (e) =>
        isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
      );
      await assert.rejects(service.search({ query: "needle", path: "a-fifo", engine }), (e) =>
        isCcbError(e, "INVALID_ARGUMENT"),
      );
      const hard = await service.search({ query: "needle", path: "hardlinked.txt", engine });
      assert.equal(hard.matches.length, 0, "a hard-linked file is never searched");
    });

    it(`${engine}: honours an aborted signal`, async () => {
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(service.search({ query: "needle", engine, signal: ac.signal }), (e) =>
        isCcbError(e, "ABORTED"),
      );
    });
  }

  it("prefixes paths with the root name when there are several roots", async () => {
    const second = join(base.path, "second");
    mkdirSync(second, { recursive: true });
    writeFileSync(join(second, "s.txt"), "needle in second\n");
    const multi = new SearchService(new Workspace([root, second]));
    for (const engine of ["ripgrep", "js"] as const) {
      const r = await multi.search({ query: "needle in", engine });
      const paths = r.matches.map((m) => m.path);
      assert.ok(paths.includes("second/s.txt"), paths.join(","));
      assert.ok(paths.includes("root/src/gen/x.ts") === false);
      assert.ok(paths.includes("root/src/a.ts") === false);
      const scoped = await multi.search({ query: "needle", engine, path: "second" });
      assert.deepEqual(
        scoped.matches.map((m) => m.path),
        ["second/s.txt"],
      );
    }
  });

  it("searches a root nested in another root once", async () => {
    const nested = new SearchService(new Workspace([root, join(root, "src")]));
    for (const engine of ["ripgrep", "js"] as const) {
      const r = await nested.search({ query: "needle at line 3", engine });
      assert.equal(r.matches.length, 1, JSON.stringify(r.matches));
    }
  });

  it("picks the engine: rgPath null or a missing rg fall back to JS and say why", async () => {
    const none = new SearchService(new Workspace([root]), { rgPath: null });
    assert.deepEqual(await none.engineInfo(), { engine: "js", reason: "ripgrep disabled by configuration" });
    assert.equal((await none.search({ query: "needle" })).engine, "js");
    await assert.rejects(none.search({ query: "needle", engine: "ripgrep" }), (e) => isCcbError(e, "UNSUPPORTED"));
    const bad = new SearchService(new Workspace([root]), { rgPath: join(base.path, "no-such-rg") });
    const info = await bad.engineInfo();
    assert.equal(info.engine, "js");
    assert.match(info.reason ?? "", /does not run/);
    const auto = new SearchService(new Workspace([root]));
    const ai = await auto.engineInfo();
    assert.equal(ai.engine, "ripgrep");
    assert.match(ai.rgVersion ?? "", /ripgrep/);
  });
});

describe("SearchService: the ripgrep process", () => {
  it("reports ripgrep's own regex errors as INVALID_ARGUMENT", async () => {
    const service = new SearchService(new Workspace([root]));
    await assert.rejects(
      service.search({ query: "needle(?=x)", regex: true, engine: "ripgrep" }),
      (e) => isCcbError(e, "INVALID_ARGUMENT") && /look-around|regular expression/i.test(e.message) && !!e.hint,
    );
  });

  it("kills ripgrep when the search is cancelled", { timeout: 60_000 }, async () => {
    const fake = join(base.path, "fake-rg.sh");
    const marker = join(base.path, "fake-rg.pid");
    writeFileSync(
      fake,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo "ripgrep 0.0.0-fake"; exit 0; fi\necho $$ > "${marker}.tmp" && mv "${marker}.tmp" "${marker}"\nexec sleep 1000\n`,
      { mode: 0o755 },
    );
    const service = new SearchService(new Workspace([root]), { rgPath: fake });
    const ac = new AbortController();
    const pending = service.search({ query: "needle", engine: "ripgrep", signal: ac.signal });
    while (!existsSync(marker)) await new Promise((r) => setTimeout(r, 20));
    const pid = Number(readFileSync(marker, "utf8"));
    ac.abort();
    await assert.rejects(pending, (e) => isCcbError(e, "ABORTED"));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    while (alive()) await new Promise((r) => setTimeout(r, 20));
  });
});
