import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { FIXTURE_FILE, fixtureSet } from "../fixtures/runtime/archives.ts";
import { repoRoot } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

interface Generated {
  out: string;
  version: string;
  packages: Array<{ name: string; dir: string; target: string | null; binary: boolean; runtime?: boolean }>;
}
type GenerateFn = (o: {
  out: string;
  bins?: Record<string, string>;
  runtimes?: Record<string, string>;
  only?: string[];
  requireBinaries?: boolean;
}) => Promise<Generated>;
const { generate } = (await import(join(repoRoot, "platforms/generate.mjs"))) as { generate: GenerateFn };
const { TARGETS } = (await import(join(repoRoot, "platforms/targets.mjs"))) as {
  TARGETS: Array<{ key: string; os: string; cpu: string; libc?: string; exe: string }>;
};
const rootPkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  name: string;
  version: string;
  mcpName: string;
};

function hostKey(): string {
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  const musl = process.platform === "linux" && !report.header?.glibcVersionRuntime;
  return `${process.platform}-${process.arch}${musl ? "-musl" : ""}`;
}

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
}

describe("platforms/generate.mjs", () => {
  test("writes one platform package per target and a dispatcher, all at the root version", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-platforms-" });
    const fake = join(d.path, "fake-ccb");
    writeFileSync(fake, "#!/bin/sh\n");
    const g = await generate({ out: join(d.path, "out"), bins: { "linux-arm64": fake } });
    assert.equal(g.version, rootPkg.version);
    assert.deepEqual(
      g.packages.map((p) => p.name),
      [...TARGETS.map((t) => `${rootPkg.name}-${t.key}`), rootPkg.name],
      "platform packages first, the dispatcher last (publish order)",
    );
    assert.deepEqual(readJson(join(g.out, "publish-order.json")), JSON.parse(JSON.stringify(g.packages)));
    for (const t of TARGETS) {
      const p = readJson(join(g.out, `${rootPkg.name}-${t.key}`, "package.json"));
      assert.equal(p.version, rootPkg.version);
      assert.deepEqual(p.os, [t.os]);
      assert.deepEqual(p.cpu, [t.cpu]);
      assert.deepEqual(p.libc, t.libc ? [t.libc] : undefined);
      assert.deepEqual(p.files, ["bin/", "THIRD_PARTY_NOTICES"]);
      assert.match(
        (p.repository as { url?: string } | undefined)?.url ?? "",
        /github\.com/,
        "every manifest names its repository (provenance needs it)",
      );
      assert.ok(
        existsSync(join(g.out, `${rootPkg.name}-${t.key}`, "THIRD_PARTY_NOTICES")),
        "the notices travel with the binary",
      );
      assert.equal(p.preferUnplugged, true);
      assert.equal(p.bin, undefined, "platform packages have no bin field");
      assert.equal(p.scripts, undefined, "no install scripts");
    }
    const arm = join(g.out, `${rootPkg.name}-linux-arm64`, "bin/ccb");
    assert.equal(statSync(arm).mode & 0o111, 0o111);
    const disp = readJson(join(g.out, rootPkg.name, "package.json"));
    assert.deepEqual(disp.bin, { ccb: "bin/ccb.mjs" });
    assert.equal(disp.mcpName, rootPkg.mcpName, "the MCP Registry verifies the npm package by mcpName");
    assert.match((disp.repository as { url?: string } | undefined)?.url ?? "", /github\.com/);
    assert.equal(disp.scripts, undefined);
    assert.equal(disp.dependencies, undefined);
    assert.deepEqual(
      disp.optionalDependencies,
      Object.fromEntries(TARGETS.map((t) => [`${rootPkg.name}-${t.key}`, rootPkg.version])),
    );
    assert.equal(
      readFileSync(join(g.out, rootPkg.name, "bin/ccb.mjs"), "utf8"),
      readFileSync(join(repoRoot, "platforms/launcher.mjs"), "utf8"),
    );
    await assert.rejects(
      generate({ out: join(d.path, "out2"), only: ["linux-x64"], requireBinaries: true }),
      /no binary for linux-x64/,
    );
  });

  test("a target with a runtime depends on a runtime package holding the pinned archive, checked first", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-platforms-rt-" });
    const fx = fixtureSet();
    const manifest = join(d.path, "manifest.json");
    writeFileSync(manifest, JSON.stringify(fx.manifest));
    const good = join(d.path, FIXTURE_FILE);
    writeFileSync(good, fx.good);
    const bad = join(d.path, "tampered", FIXTURE_FILE);
    mkdirSync(dirname(bad));
    writeFileSync(bad, fx.tampered);
    const fake = join(d.path, "fake-ccb");
    writeFileSync(fake, "#!/bin/sh\n");
    const saved = process.env.CCB_RUNTIME_MANIFEST;
    process.env.CCB_RUNTIME_MANIFEST = manifest;
    try {
      const g = await generate({
        out: join(d.path, "out"),
        bins: { "linux-x64": fake },
        runtimes: { "linux-x64": good },
        only: ["linux-x64"],
      });
      const rtName = `${rootPkg.name}-runtime-linux-x64`;
      assert.deepEqual(
        g.packages.map((p) => p.name),
        [rtName, `${rootPkg.name}-linux-x64`, rootPkg.name],
        "the runtime package is published before the platform package that depends on it",
      );
      const rt = readJson(join(g.out, rtName, "package.json"));
      assert.equal(rt.version, rootPkg.version);
      assert.deepEqual([rt.os, rt.cpu, rt.libc], [["linux"], ["x64"], ["glibc"]]);
      assert.deepEqual(rt.files, [FIXTURE_FILE]);
      assert.equal(rt.scripts, undefined, "no install scripts");
      assert.ok(readFileSync(join(g.out, rtName, FIXTURE_FILE)).equals(fx.good), "the archive byte for byte");
      assert.deepEqual(readJson(join(g.out, `${rootPkg.name}-linux-x64`, "package.json")).dependencies, {
        [rtName]: rootPkg.version,
      });
      // A release build needs the runtime of every target that has one, and refuses a wrong archive.
      await assert.rejects(
        generate({
          out: join(d.path, "out2"),
          bins: { "linux-x64": fake },
          only: ["linux-x64"],
          requireBinaries: true,
        }),
        /no runtime archive for linux-x64/,
      );
      await assert.rejects(
        generate({
          out: join(d.path, "out3"),
          bins: { "linux-x64": fake },
          runtimes: { "linux-x64": bad },
          only: ["linux-x64"],
        }),
        /refusing to package .*SHA-256/,
      );
      assert.ok(!existsSync(join(d.path, "out3", rtName)), "nothing written for a refused archive");
    } finally {
      if (saved === undefined) delete process.env.CCB_RUNTIME_MANIFEST;
      else process.env.CCB_RUNTIME_MANIFEST = saved;
    }
  });
});

describe("platforms/launcher.mjs", () => {
  async function dispatcher(d: { path: string }) {
    const g = await generate({ out: join(d.path, "out"), only: [] });
    return {
      g,
      launcher: join(g.out, rootPkg.name, "bin/ccb.mjs"),
      pkgFile: join(g.out, rootPkg.name, "package.json"),
    };
  }

  test("CCB_BINARY runs that binary with the arguments; exit codes pass through; a signal death is 128+signum", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-launcher-" });
    const { launcher } = await dispatcher(d);
    const fake = join(d.path, "fake");
    writeFileSync(
      fake,
      '#!/bin/sh\necho "args:$*"\nread line\necho "stdin:$line"\n[ "$1" = term ] && kill -TERM $$\nexit 7\n',
      { mode: 0o755 },
    );
    const env = { ...process.env, CCB_BINARY: fake };
    const r = spawnSync(process.execPath, [launcher, "a", "b c"], { env, input: "hello\n", encoding: "utf8" });
    assert.equal(r.stdout, "args:a b c\nstdin:hello\n");
    assert.equal(r.status, 7);
    const k = spawnSync(process.execPath, [launcher, "term"], { env, input: "x\n", encoding: "utf8" });
    assert.equal(k.status, 128 + 15);
  });

  test("a SIGTERM sent to the launcher alone reaches the real process", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-launcher-" });
    const { launcher } = await dispatcher(d);
    const fake = join(d.path, "fake");
    writeFileSync(
      fake,
      "#!/bin/bash\ntrap 'echo got-term; exit 3' TERM\necho ready $$\nwhile :; do sleep 0.05; done\n",
      {
        mode: 0o755,
      },
    );
    const child = spawn(process.execPath, [launcher], {
      env: { ...process.env, CCB_BINARY: fake },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let pid = 0;
    // The launcher's own exit, not the pipe's close: a real process left running (the launcher
    // killed by the signal it should have forwarded: CI once, under load) would hold the pipe open.
    const exited = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.stdout.setEncoding("utf8").on("data", (s: string) => {
        out += s;
        const m = /^ready (\d+)\n$/.exec(out);
        if (m && !pid) {
          pid = Number(m[1]);
          child.kill("SIGTERM");
        }
      });
      child.on("exit", (code, signal) => resolve({ code, signal }));
    });
    try {
      assert.deepEqual(exited, { code: 3, signal: null }, "the launcher ends as the real process did");
      if (child.stdout.readable) await new Promise((r) => child.stdout.once("close", r));
      assert.equal(out, `ready ${pid}\ngot-term\n`);
    } finally {
      try {
        if (pid > 0) process.kill(pid, "SIGKILL"); // only if it was left running
      } catch {}
    }
  });

  test("a missing platform package: says optional dependencies were omitted, or that there is no build", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-launcher-" });
    const { launcher, pkgFile } = await dispatcher(d);
    const env = { ...process.env };
    delete env.CCB_BINARY;
    const r = spawnSync(process.execPath, [launcher, "--version"], { env, encoding: "utf8" });
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `The package ${rootPkg.name}-${hostKey()}@${rootPkg.version}, which holds ccb's binary for ${hostKey()}, is not installed`,
      ),
    );
    assert.match(r.stderr, /--omit=optional/);
    assert.match(r.stderr, /CCB_BINARY/);
    // A dispatcher without a build for this host (as on a platform with no target).
    const pkg = readJson(pkgFile);
    pkg.repository = { type: "git", url: "git+https://github.com/example/ccb.git" };
    pkg.optionalDependencies = { [`${rootPkg.name}-plan9-mips`]: rootPkg.version };
    writeFileSync(pkgFile, JSON.stringify(pkg));
    const u = spawnSync(process.execPath, [launcher, "--version"], { env, encoding: "utf8" });
    assert.equal(u.status, 1);
    assert.match(u.stderr, new RegExp(`has no build for this platform \\(${hostKey()}\\)`));
    assert.match(u.stderr, /Builds: plan9-mips/);
    assert.match(u.stderr, new RegExp(`https://github.com/example/ccb/releases/tag/v${rootPkg.version}`));
  });
});

describe("npm tarball smoke test (the real compiled binary)", () => {
  test("npm install ./ccb-X.tgz ./ccb-<platform>-X.tgz, then npx ccb --version", { timeout: 300_000 }, async () => {
    await using d = tmpdirFixture({ prefix: "ccb-tarball-" });
    let binary = process.env.CCB_TEST_BIN;
    if (!binary) {
      binary = join(d.path, "ccb");
      execFileSync(process.execPath, [join(repoRoot, "scripts/compile.mjs"), binary], { cwd: repoRoot, stdio: "pipe" });
    }
    const key = hostKey();
    const g = await generate({ out: join(d.path, "out"), bins: { [key]: binary }, only: [key] });
    const pack = (dir: string) =>
      join(
        d.path,
        execFileSync("npm", ["pack", dir, "--pack-destination", d.path, "--silent"], { encoding: "utf8" })
          .trim()
          .split("\n")
          .pop() as string,
      );
    const tgzDispatcher = pack(join(g.out, rootPkg.name));
    const tgzPlatform = pack(join(g.out, `${rootPkg.name}-${key}`));
    assert.ok(existsSync(tgzDispatcher) && existsSync(tgzPlatform));
    const app = join(d.path, "app");
    execFileSync("mkdir", [app]);
    writeFileSync(join(app, "package.json"), '{"private":true}\n');
    // Offline with an empty cache: the other platforms' optional packages are skipped, the registry is never asked.
    execFileSync(
      "npm",
      [
        "install",
        "--offline",
        "--no-audit",
        "--no-fund",
        "--cache",
        join(d.path, "npm-cache"),
        tgzDispatcher,
        tgzPlatform,
      ],
      {
        cwd: app,
        stdio: "pipe",
      },
    );
    const env = { ...process.env };
    delete env.CCB_BINARY;
    const v = execFileSync("npx", ["--offline", "--cache", join(d.path, "npm-cache"), "ccb", "--version"], {
      cwd: app,
      env,
      encoding: "utf8",
    });
    assert.equal(v.trim(), rootPkg.version);
    const st = JSON.parse(
      execFileSync(join(app, "node_modules/.bin/ccb"), ["runtime", "status", "--json", "--platform", "linux-arm64"], {
        env: { ...env, CCB_CACHE_DIR: join(d.path, "cache") },
        encoding: "utf8",
      }),
    );
    assert.equal(st.installed, false);
    assert.equal(st.version, "1.109.5");
  });
});
