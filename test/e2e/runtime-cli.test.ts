import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { FIXTURE_BANNER, FIXTURE_FILE, FIXTURE_TAG, FIXTURE_TOP, fixtureSet } from "../fixtures/runtime/archives.ts";
import { type Mirror, startMirror } from "../fixtures/runtime/mirror.ts";
import { ccbCommand, runCcb, spawnCcb } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const fx = fixtureSet();
const ASSET = `/${FIXTURE_TAG}/${FIXTURE_FILE}`;
let mirror: Mirror;
let n = 0;
const dirs: Array<{ cleanup(): void }> = [];

before(async () => {
  mirror = await startMirror();
});
after(async () => {
  await mirror.close();
  for (const d of dirs) d.cleanup();
});

/** A private cache, the fixture manifest (CCB_RUNTIME_MANIFEST) and a mirror prefix serving `body`. */
function setup(body: Buffer = fx.good) {
  const d = tmpdirFixture({ prefix: "ccb-runtime-cli-" });
  dirs.push(d);
  const manifestFile = join(d.path, "manifest.json");
  writeFileSync(manifestFile, JSON.stringify(fx.manifest));
  const prefix = `/cli${++n}`;
  mirror.routes.set(`${prefix}${ASSET}`, { body });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CCB_CACHE_DIR: join(d.path, "cache"),
    CCB_RUNTIME_MANIFEST: manifestFile,
  };
  delete env.CCB_RUNTIME_MIRROR;
  delete env.CCB_LOG_LEVEL;
  const runtimeDir = join(d.path, "cache", "runtime");
  return {
    dir: d.path,
    env,
    mirrorUrl: `${mirror.url}${prefix}`,
    route: `${prefix}${ASSET}`,
    hits: () => mirror.requests.filter((r) => r.path.startsWith(`${prefix}/`)),
    entries: () => (existsSync(runtimeDir) ? readdirSync(runtimeDir).sort() : []),
    run: (args: string[]) => runCcb(args, { env, timeoutMs: 60_000 }),
  };
}

describe("ccb runtime (CLI)", () => {
  test("status / fetch --json / status / path: installs from the mirror and reports it", async () => {
    const s = setup();
    const st0 = await s.run(["runtime", "status", "--json"]);
    assert.equal(st0.code, 0, st0.stderr);
    assert.equal(JSON.parse(st0.stdout).installed, false);
    const p0 = await s.run(["runtime", "path"]);
    assert.equal(p0.code, 1);
    assert.match(p0.stderr, /is not installed[\s\S]*ccb runtime fetch/);

    const f = await s.run(["runtime", "fetch", "--mirror", s.mirrorUrl, "--json"]);
    assert.equal(f.code, 0, f.stderr);
    const r = JSON.parse(f.stdout);
    assert.equal(r.ok, true);
    assert.equal(r.status, "installed");
    assert.equal(r.source, "mirror");
    assert.equal(r.sha256, fx.manifest.assets["linux-x64"]?.sha256);
    assert.doesNotMatch(f.stderr, /%/, "no progress output under --json");

    const st1 = JSON.parse((await s.run(["runtime", "status", "--json"])).stdout);
    assert.equal(st1.installed, true);
    assert.equal(st1.version, "0.0.0-test");
    const p1 = await s.run(["runtime", "path"]);
    assert.equal(p1.code, 0);
    assert.equal(p1.stdout.trim(), r.root);
    const bin = (await s.run(["runtime", "path", "--binary"])).stdout.trim();
    assert.equal(spawnSync(bin, ["hi"], { encoding: "utf8" }).stdout.trim(), `${FIXTURE_BANNER} hi`);
    const human = await s.run(["runtime", "status"]);
    assert.match(human.stdout, /Installed: yes/);
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });

  test("without --json: progress lines on stderr (not a TTY), a summary on stdout", async () => {
    const s = setup();
    const f = await s.run(["runtime", "fetch", "--mirror", s.mirrorUrl]);
    assert.equal(f.code, 0, f.stderr);
    assert.match(f.stderr, /^ccb runtime fetch: download: 127\.0\.0\.1:\d+ \(\d+ s\)$/m);
    assert.match(f.stderr, /^ccb runtime fetch: download 0% \(0\.0 of 1\.0 MB\)$/m);
    assert.match(f.stderr, /^ccb runtime fetch: download 100% \(1\.0 of 1\.0 MB\)$/m);
    assert.match(f.stderr, /^ccb runtime fetch: extract: openvscode-server-v0\.0\.0-test-linux-x64\.tar\.gz/m);
    assert.match(f.stderr, /^ccb runtime fetch: done in \d+ s$/m);
    assert.doesNotMatch(f.stderr, /\r/);
    assert.match(
      f.stdout,
      /^Installed OpenVSCode Server 0\.0\.0-test \(linux-x64\) in .*\n {2}from http:\/\/127\.0\.0\.1:\d+\/.* \(SHA-256 [0-9a-f]{64} verified\)/,
    );
    const again = await s.run(["runtime", "fetch", "--mirror", s.mirrorUrl]);
    assert.match(again.stdout, /is already installed/);
    assert.equal(s.hits().length, 1);
  });

  test("on a TTY: a progress bar redrawn in place on stderr", async () => {
    const s = setup();
    const { command, args } = ccbCommand(["runtime", "fetch", "--mirror", s.mirrorUrl]);
    const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    // util-linux `script` runs the command on a real pseudo-terminal.
    const out = await new Promise<string>((resolve, reject) => {
      const c = spawn("script", ["-qefc", quoted, "/dev/null"], {
        env: { ...s.env, COLUMNS: "120" },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let text = "";
      c.stdout.setEncoding("utf8").on("data", (d: string) => (text += d));
      c.on("error", reject);
      c.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`script exited ${code}: ${text}`))));
    });
    assert.match(out, /\rccb runtime fetch: download \[#*-*\] \d+% \([\d.]+ of [\d.]+ MB\) · \d+ s\x1b\[K/);
    assert.match(out, /\rccb runtime fetch: download \[#{20}\] 100% /);
    assert.match(out, /\rccb runtime fetch: done · \d+ s\x1b\[K\r?\n/);
    assert.doesNotMatch(out, /^ccb runtime fetch: download \d+% /m, "no plain progress lines on a TTY");
    assert.match(out, /Installed OpenVSCode Server 0\.0\.0-test/);
  });

  test("a tampered archive from CCB_RUNTIME_MIRROR: exit 1, the SHA-256 message, nothing installed", async () => {
    const s = setup(fx.tampered);
    const f = await runCcb(["runtime", "fetch"], {
      env: { ...s.env, CCB_RUNTIME_MIRROR: s.mirrorUrl },
      timeoutMs: 60_000,
    });
    assert.equal(f.code, 1);
    assert.match(
      f.stderr,
      /SHA-256 mismatch: expected [0-9a-f]{64} got [0-9a-f]{64} — the download was tampered with or truncated; nothing was extracted/,
    );
    assert.deepEqual(s.entries(), []);
    const j = await runCcb(["runtime", "fetch", "--json"], {
      env: { ...s.env, CCB_RUNTIME_MIRROR: s.mirrorUrl },
      timeoutMs: 60_000,
    });
    assert.equal(j.code, 1);
    const out = JSON.parse(j.stdout);
    assert.equal(out.ok, false);
    assert.equal(out.error.code, "INTEGRITY_FAILED");
  });

  test("--from-file installs an offline archive", async () => {
    const s = setup();
    const file = join(s.dir, "offline.tar.gz");
    writeFileSync(file, fx.good);
    const f = await s.run(["runtime", "fetch", "--from-file", file, "--json"]);
    assert.equal(f.code, 0, f.stderr);
    assert.equal(JSON.parse(f.stdout).source, "file");
    assert.equal(s.hits().length, 0);
  });

  test("macOS and Windows get UNSUPPORTED with the alternatives", async () => {
    const s = setup();
    const f = await s.run(["runtime", "fetch", "--platform", "darwin-arm64"]);
    assert.equal(f.code, 1);
    assert.match(f.stderr, /publishes no macOS build/);
    assert.match(f.stderr, /--runtime code-server/);
    assert.match(f.stderr, /--runtime-root/);
    const w = JSON.parse((await s.run(["runtime", "status", "--platform", "win32-x64", "--json"])).stdout);
    assert.equal(w.supported, false);
    assert.match(w.message, /no Windows build/);
    assert.match(w.hint, /WSL2/);
  });

  test("two ccb processes fetching at once: both succeed, one download, one install", async () => {
    const s = setup();
    const children = [0, 1].map(() => spawnCcb(["runtime", "fetch", "--mirror", s.mirrorUrl], { env: s.env }));
    let waited!: () => void;
    const someoneWaits = new Promise<void>((resolve) => (waited = resolve));
    mirror.routes.set(s.route, {
      body: fx.good,
      pauseAt: 4096,
      onPause: (p) => void someoneWaits.then(() => p.resume()),
    });
    const results = await Promise.all(
      children.map(
        (c) =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
            let stdout = "";
            let stderr = "";
            c.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
            c.stderr?.setEncoding("utf8").on("data", (d: string) => {
              stderr += d;
              if (/is fetching the runtime; waiting for it/.test(stderr)) waited();
            });
            c.on("close", (code) => resolve({ code, stdout, stderr }));
          }),
      ),
    );
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(results.map((r) => (/already installed/.test(r.stdout) ? "cached" : "new")).sort(), [
      "cached",
      "new",
    ]);
    assert.equal(s.hits().length, 1);
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });

  test("a fetch killed mid-download leaves nothing installed; the next run recovers (stale lock, leftovers)", async () => {
    const s = setup();
    const child = spawnCcb(["runtime", "fetch", "--mirror", s.mirrorUrl, "--json"], { env: s.env });
    const closed = new Promise<number | null>((resolve) =>
      child.on("close", (_code, signal) => resolve(signal === "SIGKILL" ? 137 : 0)),
    );
    mirror.routes.set(s.route, {
      body: fx.good,
      pauseAt: Math.floor(fx.good.length / 2),
      onPause: () => child.kill("SIGKILL"),
    });
    assert.equal(await closed, 137);
    assert.ok(s.entries().includes(`${FIXTURE_TOP}.lock`), "the killed process left its lock");
    assert.ok(!s.entries().includes(FIXTURE_TOP));
    const st = JSON.parse((await s.run(["runtime", "status", "--json"])).stdout);
    assert.equal(st.installed, false);
    const f = await s.run(["runtime", "fetch", "--mirror", s.mirrorUrl, "--json"]);
    assert.equal(f.code, 0, f.stderr);
    assert.equal(JSON.parse(f.stdout).status, "installed");
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });
});
