import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { isCcbError } from "../../../src/core/errors.ts";
import { npmEnv } from "../../../src/runtime-fetch/code-server.ts";
import {
  cachedRuntime,
  cachedRuntimePath,
  ensureRuntime,
  type FetchRuntimeOptions,
  fetchRuntime,
  openVscodeAvailable,
  runtimeStatus,
} from "../../../src/runtime-fetch/index.ts";
import { FIXTURE_BANNER, FIXTURE_FILE, FIXTURE_TAG, FIXTURE_TOP, fixtureSet } from "../../fixtures/runtime/archives.ts";
import { type Mirror, type Pause, startMirror } from "../../fixtures/runtime/mirror.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const fx = fixtureSet();
const ASSET_PATH = `/${FIXTURE_TAG}/${FIXTURE_FILE}`;
const host = { platform: "linux", arch: "x64" };

let mirror: Mirror;
const dirs: Array<{ cleanup(): void }> = [];

before(async () => {
  mirror = await startMirror();
});
after(async () => {
  await mirror.close();
  for (const d of dirs) d.cleanup();
});

/** A fresh cache dir and mirror prefix per test, so tests never share files or routes. */
function setup(body: Buffer = fx.good, manifest = fx.manifest) {
  const dir = tmpdirFixture({ prefix: "ccb-runtime-" });
  dirs.push(dir);
  const prefix = `/m${dirs.length}`;
  mirror.routes.set(`${prefix}${ASSET_PATH}`, { body });
  const opts: FetchRuntimeOptions = { manifest, mirror: `${mirror.url}${prefix}`, cacheDir: dir.path, host, env: {} };
  const hits = () => mirror.requests.filter((r) => r.path.startsWith(`${prefix}/`));
  const runtimeDir = join(dir.path, "runtime");
  const entries = () => (existsSync(runtimeDir) ? readdirSync(runtimeDir).sort() : []);
  return { dir: dir.path, prefix, opts, hits, runtimeDir, entries };
}

async function rejectsWith(p: Promise<unknown>, code: string, message?: RegExp) {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isCcbError(err), `expected a CcbError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe("fetchRuntime against a local mirror", () => {
  test("a good archive is verified, extracted and reported installed; the binary runs", async () => {
    const s = setup();
    const before = await runtimeStatus(s.opts);
    assert.equal(before.supported && before.installed, false);
    const r = await fetchRuntime(s.opts);
    assert.equal(r.status, "installed");
    assert.equal(r.source, "mirror");
    assert.equal(r.root, join(s.runtimeDir, FIXTURE_TOP));
    assert.equal(r.sha256, fx.manifest.assets["linux-x64"]?.sha256);
    assert.deepEqual(s.entries(), [FIXTURE_TOP], "only the install folder remains: no lock, no temporaries");
    const out = spawnSync(r.binary, ["--version"], { encoding: "utf8" });
    assert.equal(out.stdout.trim(), `${FIXTURE_BANNER} --version`);
    assert.equal(readlinkSync(join(r.root, "bin/code")), "openvscode-server");
    assert.equal(lstatSync(join(r.root, "out/main-copy.js")).nlink, 2);
    const st = await runtimeStatus(s.opts);
    assert.ok(st.supported);
    assert.equal(st.installed, true);
    assert.equal(st.root, r.root);
    assert.equal(cachedRuntimePath(undefined, s.opts), r.root);
    assert.equal(cachedRuntime(s.opts)?.binary, join(r.root, "bin/openvscode-server"));
    assert.deepEqual(
      s.hits().map((h) => [h.path, h.status]),
      [[`${s.prefix}${ASSET_PATH}`, 200]],
    );
    const again = await fetchRuntime(s.opts);
    assert.equal(again.status, "already-installed");
    assert.equal(s.hits().length, 1, "an installed runtime is not downloaded again");
  });

  test("a tampered archive (same size) fails with INTEGRITY_FAILED and nothing is extracted", async () => {
    const s = setup(fx.tampered);
    const want = fx.manifest.assets["linux-x64"]?.sha256 as string;
    await rejectsWith(
      fetchRuntime(s.opts),
      "INTEGRITY_FAILED",
      new RegExp(
        `^SHA-256 mismatch: expected ${want} got [0-9a-f]{64} — the download was tampered with or truncated; nothing was extracted`,
      ),
    );
    assert.deepEqual(s.entries(), []);
    assert.equal(cachedRuntimePath(undefined, s.opts), undefined);
  });

  test("a truncated archive fails and nothing is extracted", async () => {
    const s = setup(fx.truncated);
    await rejectsWith(fetchRuntime(s.opts), "INTEGRITY_FAILED", /Size mismatch: expected \d+ bytes got \d+/);
    assert.deepEqual(s.entries(), []);
  });

  test("an archive with a ../ entry is refused even when its digest matches", async () => {
    const s = setup(fx.dotdot, fx.dotdotManifest);
    await rejectsWith(
      fetchRuntime({ ...s.opts, manifest: fx.dotdotManifest }),
      "INTEGRITY_FAILED",
      /evil\.txt.*"\.\." path/,
    );
    assert.deepEqual(s.entries(), []);
    assert.equal(existsSync(join(s.dir, "evil.txt")), false);
  });

  test("an archive with an escaping symlink is refused even when its digest matches", async () => {
    const s = setup(fx.symlinkOut, fx.symlinkOutManifest);
    await rejectsWith(
      fetchRuntime({ ...s.opts, manifest: fx.symlinkOutManifest }),
      "INTEGRITY_FAILED",
      /bin\/evil.*points outside/,
    );
    assert.deepEqual(s.entries(), []);
  });

  test("a 404 from the mirror is NOT_FOUND and names the mirror layout", async () => {
    const s = setup();
    await rejectsWith(fetchRuntime({ ...s.opts, mirror: `${mirror.url}/nowhere` }), "NOT_FOUND", /HTTP 404/);
    assert.deepEqual(s.entries(), []);
  });

  test("redirects are followed (GitHub release URLs redirect)", async () => {
    const s = setup();
    mirror.routes.set(`${s.prefix}${ASSET_PATH}`, { redirect: `${s.prefix}/hop`, status: 302 });
    mirror.routes.set(`${s.prefix}/hop`, { redirect: `${mirror.url}${s.prefix}/storage/asset.bin`, status: 301 });
    mirror.routes.set(`${s.prefix}/storage/asset.bin`, { body: fx.good });
    const r = await fetchRuntime(s.opts);
    assert.equal(r.status, "installed");
    assert.equal(r.from, `${mirror.url}${s.prefix}/storage/asset.bin`);
    assert.deepEqual(
      s.hits().map((h) => h.status),
      [302, 301, 200],
    );
  });

  test("two fetches at once in one process: one download, one good install", async () => {
    const s = setup();
    let waited!: () => void;
    const someoneWaits = new Promise<void>((resolve) => (waited = resolve));
    // Hold the body half-way until the second fetch is waiting on the lock: the two really overlap.
    mirror.routes.set(`${s.prefix}${ASSET_PATH}`, {
      body: fx.good,
      pauseAt: 4096,
      onPause: (p: Pause) => void someoneWaits.then(() => p.resume()),
    });
    const [a, b] = await Promise.all([
      fetchRuntime({ ...s.opts, onWait: waited }),
      fetchRuntime({ ...s.opts, onWait: waited }),
    ]);
    assert.deepEqual([a.status, b.status].sort(), ["already-installed", "installed"]);
    assert.equal(s.hits().length, 1);
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
    assert.equal(spawnSync(a.binary, [], { encoding: "utf8" }).stdout.trim(), FIXTURE_BANNER);
  });

  test("a dropped connection leaves only a partial download; the next run resumes it with a Range request", async () => {
    const s = setup();
    const half = Math.floor(fx.good.length / 2);
    let pause!: Pause;
    const paused = new Promise<void>((resolve) =>
      mirror.routes.set(`${s.prefix}${ASSET_PATH}`, {
        body: fx.good,
        pauseAt: half,
        onPause: (p) => {
          pause = p;
          resolve();
        },
      }),
    );
    let dropped = false;
    const first = fetchRuntime({
      ...s.opts,
      onProgress: (p) => {
        // Drop the connection once the client has written every byte sent so far.
        if (p.received === half && !dropped) {
          dropped = true;
          void paused.then(() => pause.drop());
        }
      },
    });
    await rejectsWith(first, "RUNTIME_UNAVAILABLE", /interrupted after \d+ of \d+ bytes/);
    assert.deepEqual(
      s.entries(),
      [`${FIXTURE_TOP}.partial`],
      "nothing half-installed, no lock, only the resumable partial file",
    );
    const st = await runtimeStatus(s.opts);
    assert.ok(st.supported);
    assert.equal(st.installed, false);
    assert.equal(st.partialBytes, half);

    const r = await fetchRuntime(s.opts);
    assert.equal(r.status, "installed");
    assert.equal(r.resumedBytes, half);
    const second = s.hits()[1];
    assert.equal(second?.range, `bytes=${half}-`);
    assert.equal(second?.status, 206);
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });

  test("a server that ignores Range restarts the download from zero", async () => {
    const s = setup();
    mkdirSync(s.runtimeDir, { recursive: true });
    writeFileSync(join(s.runtimeDir, `${FIXTURE_TOP}.partial`), fx.good.subarray(0, 1000));
    mirror.routes.set(`${s.prefix}${ASSET_PATH}`, { body: fx.good, ranges: false });
    const r = await fetchRuntime(s.opts);
    assert.equal(r.status, "installed");
    assert.equal(r.resumedBytes, 0);
    assert.deepEqual(
      s.hits().map((h) => [h.range, h.status]),
      [["bytes=1000-", 200]],
      "the full 200 answer is used as it comes",
    );
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });

  test("a corrupt partial download is discarded after the hash check and the next run starts clean", async () => {
    const s = setup();
    mkdirSync(s.runtimeDir, { recursive: true });
    writeFileSync(join(s.runtimeDir, `${FIXTURE_TOP}.partial`), Buffer.alloc(1000, 7));
    await rejectsWith(fetchRuntime(s.opts), "INTEGRITY_FAILED", /SHA-256 mismatch/);
    assert.deepEqual(s.entries(), []);
    assert.equal((await fetchRuntime(s.opts)).status, "installed");
  });

  test("leftovers and a stale lock of a dead process are cleaned up", async () => {
    const s = setup();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const deadPid = Number(dead.stdout);
    mkdirSync(join(s.runtimeDir, `.${FIXTURE_TOP}.extract-${deadPid}-abc`, FIXTURE_TOP), { recursive: true });
    writeFileSync(join(s.runtimeDir, `.${FIXTURE_TOP}.download-${deadPid}-abc`), "partial");
    writeFileSync(
      join(s.runtimeDir, `${FIXTURE_TOP}.lock`),
      JSON.stringify({ pid: deadPid, host: (await import("node:os")).hostname(), token: "x", createdAt: "" }),
    );
    const r = await fetchRuntime(s.opts);
    assert.equal(r.status, "installed");
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });

  test("an incomplete install folder is not reported installed, and fetch replaces it; --force re-installs", async () => {
    const s = setup();
    mkdirSync(join(s.runtimeDir, FIXTURE_TOP, "bin"), { recursive: true });
    writeFileSync(join(s.runtimeDir, FIXTURE_TOP, "junk"), "x");
    assert.equal(cachedRuntimePath(undefined, s.opts), undefined);
    const r = await fetchRuntime(s.opts);
    assert.equal(r.status, "installed");
    assert.equal(existsSync(join(r.root, "junk")), false);
    const marker = JSON.parse(readFileSync(join(r.root, ".ccb-runtime.json"), "utf8"));
    assert.equal(marker.sha256, r.sha256);
    const forced = await fetchRuntime({ ...s.opts, force: true });
    assert.equal(forced.status, "installed");
    assert.equal(s.hits().length, 2);
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });

  test("CCB_RUNTIME_MIRROR from the environment is used when no mirror is passed", async () => {
    const s = setup();
    const r = await fetchRuntime({
      ...s.opts,
      mirror: undefined,
      env: { CCB_RUNTIME_MIRROR: `${mirror.url}${s.prefix}/` },
    });
    assert.equal(r.source, "mirror");
    assert.equal(s.hits()[0]?.path, `${s.prefix}${ASSET_PATH}`);
  });

  test("a cache path that cannot be created is a typed error (NOT_DIRECTORY); --from-file with --mirror is refused", async () => {
    const s = setup();
    writeFileSync(join(s.dir, "file"), "not a folder");
    await rejectsWith(fetchRuntime({ ...s.opts, cacheDir: join(s.dir, "file", "cache") }), "NOT_DIRECTORY");
    await rejectsWith(
      fetchRuntime({ ...s.opts, fromFile: join(s.dir, "x.tar.gz") }),
      "INVALID_ARGUMENT",
      /either --from-file or --mirror/,
    );
    assert.equal(s.hits().length, 0);
  });

  test("a stalled server is given up after the idle timeout; the partial download is kept for a resume", async () => {
    const s = setup();
    mirror.routes.set(`${s.prefix}${ASSET_PATH}`, { body: fx.good, pauseAt: 8192, onPause: () => undefined });
    await rejectsWith(
      fetchRuntime({ ...s.opts, idleTimeoutMs: 3000 }),
      "RUNTIME_UNAVAILABLE",
      /interrupted after \d+ of \d+ bytes \(.*idle timeout/,
    );
    assert.deepEqual(s.entries(), [`${FIXTURE_TOP}.partial`]);
    const r = await fetchRuntime(s.opts);
    assert.equal(r.status, "installed");
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });

  test("cancelling with an AbortSignal stops the download and installs nothing", async () => {
    const s = setup();
    const ac = new AbortController();
    mirror.routes.set(`${s.prefix}${ASSET_PATH}`, { body: fx.good, pauseAt: 4096, onPause: () => ac.abort() });
    await rejectsWith(fetchRuntime({ ...s.opts, signal: ac.signal }), "ABORTED");
    assert.deepEqual(s.entries(), []);
  });
});

describe("fetchRuntime --from-file", () => {
  test("an offline archive is verified and installed without any network", async () => {
    const s = setup();
    const file = join(s.dir, "offline.tar.gz");
    writeFileSync(file, fx.good);
    const r = await fetchRuntime({ ...s.opts, mirror: undefined, fromFile: file });
    assert.equal(r.status, "installed");
    assert.equal(r.source, "file");
    assert.equal(r.from, file);
    assert.equal(s.hits().length, 0);
    assert.equal(existsSync(file), true, "the user's archive is left alone");
  });

  test("a tampered offline archive is refused", async () => {
    const s = setup();
    const file = join(s.dir, "offline.tar.gz");
    writeFileSync(file, fx.tampered);
    await rejectsWith(
      fetchRuntime({ ...s.opts, mirror: undefined, fromFile: file }),
      "INTEGRITY_FAILED",
      /SHA-256 mismatch.*the archive was tampered with or truncated; nothing was extracted/,
    );
    assert.deepEqual(s.entries(), []);
  });

  test("a missing offline archive is NOT_FOUND", async () => {
    const s = setup();
    await rejectsWith(
      fetchRuntime({ ...s.opts, mirror: undefined, fromFile: join(s.dir, "nope.tar.gz") }),
      "NOT_FOUND",
    );
    rmSync(s.runtimeDir, { recursive: true, force: true });
  });
});

describe("unsupported platforms", () => {
  for (const [platform, arch, word] of [
    ["darwin", "arm64", "macOS"],
    ["win32", "x64", "Windows"],
  ] as const) {
    test(`${platform}-${arch} gets UNSUPPORTED with the alternatives`, async () => {
      const s = setup();
      await assert.rejects(fetchRuntime({ ...s.opts, host: { platform, arch } }), (err: unknown) => {
        assert.ok(isCcbError(err, "UNSUPPORTED"));
        assert.match(err.message, new RegExp(`publishes no ${word} build`));
        assert.match(err.hint ?? "", /--runtime code-server/);
        assert.match(err.hint ?? "", /--runtime-root/);
        assert.match(err.hint ?? "", /WSL2|Linux VM/);
        return true;
      });
      const st = await runtimeStatus({ ...s.opts, host: { platform, arch } });
      assert.equal(st.supported, false);
      assert.equal(s.hits().length, 0);
    });
  }

  test("an unknown --platform name is UNSUPPORTED, not a crash", async () => {
    const s = setup();
    await assert.rejects(fetchRuntime({ ...s.opts, platform: "linux-riscv64" }), (err: unknown) =>
      isCcbError(err, "UNSUPPORTED"),
    );
  });
});

describe("two real processes fetching at once", () => {
  test("both succeed, one download, one good install", async () => {
    const s = setup();
    let waited!: () => void;
    const someoneWaits = new Promise<void>((resolve) => (waited = resolve));
    mirror.routes.set(`${s.prefix}${ASSET_PATH}`, {
      body: fx.good,
      pauseAt: 4096,
      onPause: (p) => void someoneWaits.then(() => p.resume()),
    });
    const script = `
      import { fetchRuntime } from ${JSON.stringify(new URL("../../../src/runtime-fetch/index.ts", import.meta.url).href)};
      const opts = JSON.parse(process.argv[1]);
      const r = await fetchRuntime({ ...opts, onWait: () => process.stderr.write("WAITING\\n") });
      process.stdout.write(r.status);
    `;
    const run = () =>
      new Promise<{ code: number | null; out: string }>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ["--import", "tsx", "--input-type=module", "-e", script, JSON.stringify(s.opts)],
          {
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        let out = "";
        let err = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
        child.stderr.setEncoding("utf8").on("data", (d: string) => {
          err += d;
          if (err.includes("WAITING")) waited();
        });
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, out: code === 0 ? out : `${out}${err}` }));
      });
    const [a, b] = await Promise.all([run(), run()]);
    assert.equal(a.code, 0, a.out);
    assert.equal(b.code, 0, b.out);
    assert.deepEqual([a.out, b.out].sort(), ["already-installed", "installed"]);
    assert.equal(s.hits().length, 1);
    assert.deepEqual(s.entries(), [FIXTURE_TOP]);
  });
});

describe("the runtime that ships with ccb (npm runtime package, release tarball)", () => {
  /** A fake install: <prefix>/lib/node_modules/ccb/node_modules/{ccb-linux-x64/bin, ccb-runtime-linux-x64/<archive>}. */
  function installTree(archive: Buffer) {
    const s = setup();
    const mods = join(s.dir, "prefix/lib/node_modules/ccb/node_modules");
    const bin = join(mods, "ccb-linux-x64/bin");
    mkdirSync(bin, { recursive: true });
    mkdirSync(join(mods, "ccb-runtime-linux-x64"), { recursive: true });
    writeFileSync(join(mods, "ccb-runtime-linux-x64", FIXTURE_FILE), archive);
    const opts: FetchRuntimeOptions = { ...s.opts, mirror: undefined, searchFrom: [bin] };
    return { s, mods, bin, opts };
  }

  test("found from the platform package's folder; installed into the cache on first use, with no request", async () => {
    const t = installTree(fx.good);
    const st = await runtimeStatus(t.opts);
    assert.ok(st.supported);
    assert.equal(st.inUse, "openvscode-package");
    assert.equal(st.packaged?.via, "npm package ccb-runtime-linux-x64");
    assert.equal(openVscodeAvailable(t.opts), true);
    const r = await ensureRuntime(t.opts);
    assert.equal(r.source, "package");
    assert.equal(r.root, join(t.s.runtimeDir, FIXTURE_TOP));
    assert.equal(spawnSync(r.binary, ["x"], { encoding: "utf8" }).stdout.trim(), `${FIXTURE_BANNER} x`);
    assert.equal(t.s.hits().length, 0, "nothing was downloaded");
    assert.equal((await ensureRuntime(t.opts)).source, "cache", "the second run uses the cache");
    const after = await runtimeStatus(t.opts);
    assert.ok(after.supported && after.inUse === "openvscode-cache");
  });

  test("the release tarball's runtime/ folder beside the executable", async () => {
    const s = setup();
    const x = join(s.dir, "ccb-v1-linux-x64");
    mkdirSync(join(x, "runtime"), { recursive: true });
    writeFileSync(join(x, "runtime", FIXTURE_FILE), fx.good);
    const r = await ensureRuntime({ ...s.opts, mirror: undefined, searchFrom: [x] });
    assert.equal(r.source, "package");
    assert.match(r.from ?? "", /^release tarball/);
  });

  test("an altered packaged archive installs nothing (SHA-256), and says so", async () => {
    const t = installTree(fx.tampered);
    await rejectsWith(ensureRuntime(t.opts), "INTEGRITY_FAILED");
    assert.deepEqual(t.s.entries(), [], "no install, no leftovers");
    assert.equal(cachedRuntimePath(undefined, t.opts), undefined);
  });

  test("without a package or cache: RUNTIME_UNAVAILABLE names fetch, the mirror and the code-server way", async () => {
    const s = setup();
    const st = await runtimeStatus({ ...s.opts, searchFrom: [s.dir] });
    assert.ok(st.supported && st.inUse === "none" && st.packaged === null);
    await assert.rejects(ensureRuntime({ ...s.opts, searchFrom: [s.dir] }), (e: unknown) => {
      assert.ok(isCcbError(e, "RUNTIME_UNAVAILABLE"));
      assert.match(`${e.message} ${e.hint}`, /ccb runtime fetch.*--mirror.*--runtime code-server/s);
      return true;
    });
  });
});

describe("npm's environment for the code-server install", () => {
  test("from a shell: the person's npm_config_* stay, the user agent goes; from an npm script: all npm_* go", () => {
    const shell = npmEnv({
      PATH: "/bin",
      npm_config_registry: "https://registry.example/",
      npm_config_user_agent: "npm/11 node/v20.20.2 linux x64",
    });
    assert.deepEqual(shell, { PATH: "/bin", npm_config_registry: "https://registry.example/" });
    const script = npmEnv({
      PATH: "/bin",
      npm_lifecycle_event: "test",
      npm_config_local_prefix: "/work/parent",
      npm_config_user_agent: "npm/11 node/v20.20.2 linux x64",
      npm_package_name: "parent",
    });
    assert.deepEqual(script, { PATH: "/bin" });
  });
});
