// Installing a release from a registry, as a user would: the generated npm packages (runtime package,
// platform packages, dispatcher: platforms/generate.mjs) are published to a local verdaccio on
// 127.0.0.1 with no uplink, installed with npm -g, npx, pnpm and bun, and each installed `ccb serve`,
// given no runtime flag, runs the workbench that came in the runtime package (nothing else reachable
// but the local registry): a live bridge. The runtime package carries a live OpenVSCode-shaped archive
// (test/fixtures/runtime/live.ts), checked by generate.mjs as the release checks the real one.
// A runtime package altered in the registry is refused by npm's integrity check.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { LIVE_FILE, LIVE_VERSION, liveRuntime } from "../fixtures/runtime/live.ts";
import { repoRoot } from "../helpers/cli.ts";
import { compiledBinary, liveBridge, peerBin, sha256File } from "../helpers/install.ts";
import { homeEnv, tmpdirFixture } from "../helpers/tmp.ts";

const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { name: string; version: string };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

function run(cmd: string, args: string[], opts: { cwd: string; env: Record<string, string> }): string {
  const r = spawnSync(cmd, args, { ...opts, encoding: "utf8", timeout: 400_000 });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(" ")} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const runtimePkg = `${pkg.name}-runtime-linux-x64`;

describe("install from a registry (verdaccio, npm, npx, pnpm, bun)", { timeout: 1_800_000 }, () => {
  const dir = tmpdirFixture({ prefix: "ccb-registry-" });
  let registry: ChildProcess | undefined;
  let url = "";
  let env: Record<string, string> = {};
  const binSha = sha256File(compiledBinary());
  const live = liveRuntime();
  const manifestFile = join(dir.path, "runtime-manifest.json");
  writeFileSync(manifestFile, JSON.stringify(live.manifest));

  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/`;
    const cfg = join(dir.path, "verdaccio.yaml");
    writeFileSync(
      cfg,
      [
        `storage: ${join(dir.path, "storage")}`,
        "auth:",
        "  htpasswd:",
        `    file: ${join(dir.path, "htpasswd")}`,
        "uplinks: {}",
        "max_body_size: 600mb",
        "packages:",
        "  '**':",
        "    access: $all",
        "    publish: $authenticated",
        "log: { type: stdout, format: pretty, level: warn }",
        "",
      ].join("\n"),
    );
    registry = spawn(
      process.execPath,
      [peerBin("verdaccio", "verdaccio", "bin/verdaccio"), "--config", cfg, "--listen", `127.0.0.1:${port}`],
      { stdio: "ignore" },
    );
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}-/ping`)).ok) break;
      } catch {
        // starting
      }
      if (i > 120 || registry.exitCode !== null) throw new Error("verdaccio did not start");
      await new Promise((r) => setTimeout(r, 500));
    }
    const user = await fetch(`${url}-/user/org.couchdb.user:ccb`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "ccb", password: "ccb-test-password" }),
    });
    const { token } = (await user.json()) as { token: string };
    assert.ok(token, "verdaccio issued a token");
    const npmrc = join(dir.path, "npmrc");
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...homeEnv(join(dir.path, "home")),
      npm_config_userconfig: npmrc,
      npm_config_registry: url,
      BUN_INSTALL_CACHE_DIR: join(dir.path, "bun-cache"),
      BUN_CONFIG_REGISTRY: url,
      // The fixture runtime's pins, in place of the real ones (for generate.mjs and the installed ccb).
      CCB_RUNTIME_MANIFEST: manifestFile,
    };
    // Publish exactly what release.yml publishes: generated packages, platform packages first.
    const out = join(dir.path, "packages");
    run(
      process.execPath,
      [
        join(repoRoot, "platforms/generate.mjs"),
        "--out",
        out,
        "--bin",
        `linux-x64=${compiledBinary()}`,
        "--runtime",
        `linux-x64=${live.file}`,
      ],
      { cwd: repoRoot, env },
    );
    const order = JSON.parse(readFileSync(join(out, "publish-order.json"), "utf8")) as Array<{ dir: string }>;
    for (const p of order)
      run("npm", ["publish", p.dir, "--registry", url, "--access", "public"], { cwd: dir.path, env });
  });

  after(async () => {
    registry?.kill("SIGTERM");
    dir.cleanup();
  });

  const check = async (label: string, bin: string, project: string, platformPkg: string) => {
    assert.ok(existsSync(bin), `${label} installed the ccb command at ${bin}`);
    assert.equal(
      sha256File(realpathSync(platformPkg)),
      binSha,
      `${label}: the platform package carries the compiled binary`,
    );
    assert.equal(run(bin, ["--version"], { cwd: project, env }).trim(), pkg.version);
    const home = join(dir.path, `home-${label}`);
    const userEnv = { ...env, ...homeEnv(home) };
    const before = JSON.parse(run(bin, ["runtime", "status", "--json"], { cwd: project, env: userEnv }));
    assert.equal(before.inUse, "openvscode-package", `${label}: ccb finds the runtime package it came with`);
    assert.equal(before.installed, false, "nothing in the cache yet");
    assert.match(before.packaged.via, new RegExp(`npm package ${runtimePkg}$`));
    assert.equal(sha256File(before.packaged.path), live.manifest.assets["linux-x64"]?.sha256);
    // No runtime flag: ccb installs the packaged runtime into its cache and runs it.
    const stderr = await liveBridge(bin, project, home, {
      runtimeArgs: [],
      env: { CCB_RUNTIME_MANIFEST: manifestFile },
    });
    assert.match(
      stderr,
      new RegExp(`runtime: OpenVSCode Server ${LIVE_VERSION} \\(linux-x64\\) from npm package ${runtimePkg}`),
    );
    assert.match(stderr, /bridge: extension host \d+ serves/);
    const after = JSON.parse(run(bin, ["runtime", "status", "--json"], { cwd: project, env: userEnv }));
    assert.equal(after.inUse, "openvscode-cache", `${label}: installed into the cache on first use`);
  };

  it("npm install -g", async () => {
    const prefix = join(dir.path, "npm-global");
    run("npm", ["install", "-g", "--prefix", prefix, `${pkg.name}@${pkg.version}`], { cwd: dir.path, env });
    const mods = join(prefix, "lib/node_modules");
    const platformPkg = [
      join(mods, `${pkg.name}/node_modules/${pkg.name}-linux-x64/bin/ccb`),
      join(mods, `${pkg.name}-linux-x64/bin/ccb`),
    ].find(existsSync);
    assert.ok(platformPkg, "npm installed the linux-x64 platform package");
    assert.ok(
      !existsSync(join(mods, `${pkg.name}/node_modules/${pkg.name}-darwin-arm64`)),
      "and not another platform's",
    );
    await check("npm", join(prefix, "bin/ccb"), dir.path, platformPkg);
  });

  it("npx", async () => {
    const home = join(dir.path, "npx-home");
    const npxEnv = { ...env, ...homeEnv(home) };
    assert.equal(
      run("npx", ["-y", `${pkg.name}@${pkg.version}`, "--version"], { cwd: dir.path, env: npxEnv }).trim(),
      pkg.version,
    );
    // What npx ran: the package it installed into npm's cache (_npx/<hash>/node_modules).
    const npxDir = join(home, "npm-cache/_npx");
    const hash = readdirSync(npxDir).find((h) => existsSync(join(npxDir, h, "node_modules/.bin/ccb")));
    assert.ok(hash, "npx installed ccb into its cache");
    const mods = join(npxDir, hash, "node_modules");
    await check("npx", join(mods, ".bin/ccb"), dir.path, join(mods, `${pkg.name}-linux-x64/bin/ccb`));
  });

  it("pnpm add", async () => {
    const project = join(dir.path, "pnpm-project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), '{"name":"p","private":true}\n');
    run(
      process.execPath,
      [
        peerBin("pnpm", "pnpm", "bin/pnpm.cjs"),
        "add",
        `${pkg.name}@${pkg.version}`,
        "--registry",
        url,
        "--store-dir",
        join(dir.path, "pnpm-store"),
      ],
      { cwd: project, env },
    );
    const platformPkg = join(
      realpathSync(join(project, "node_modules", pkg.name)),
      "..",
      `${pkg.name}-linux-x64/bin/ccb`,
    );
    await check("pnpm", join(project, "node_modules/.bin/ccb"), project, platformPkg);
  });

  it("bun add", async () => {
    const project = join(dir.path, "bun-project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), '{"name":"b","private":true}\n');
    run(join(repoRoot, "node_modules/.bin/bun"), ["add", `${pkg.name}@${pkg.version}`, "--registry", url], {
      cwd: project,
      env,
    });
    await check(
      "bun",
      join(project, "node_modules/.bin/ccb"),
      project,
      join(project, `node_modules/${pkg.name}-linux-x64/bin/ccb`),
    );
  });

  it("a runtime package altered in the registry never lands: npm's integrity check (the installs above are the control)", () => {
    const tgz = join(dir.path, "storage", runtimePkg, `${runtimePkg}-${pkg.version}.tgz`);
    assert.ok(existsSync(tgz), `verdaccio stores ${tgz}`);
    const buf = readFileSync(tgz);
    const i = Math.floor(buf.length / 2);
    buf[i] = (buf[i] as number) ^ 0xff;
    writeFileSync(tgz, buf);
    const prefix = join(dir.path, "npm-global-tampered");
    const home = join(dir.path, "home-tampered");
    const r = spawnSync(
      "npm",
      ["install", "-g", "--prefix", prefix, "--loglevel", "verbose", `${pkg.name}@${pkg.version}`],
      { cwd: dir.path, env: { ...env, ...homeEnv(home) }, encoding: "utf8", timeout: 400_000 },
    );
    assert.match(
      r.stderr,
      new RegExp(`EINTEGRITY|tarball data for ${runtimePkg}@\\S+ \\(sha512-[^)]+\\) seems to be corrupted`),
      "npm checked the tarball against the registry's integrity and refused it",
    );
    const everywhere = [
      join(prefix, "lib/node_modules", runtimePkg),
      join(prefix, "lib/node_modules", pkg.name, "node_modules", runtimePkg),
    ];
    for (const p of everywhere) assert.ok(!existsSync(join(p, LIVE_FILE)), `the altered archive never landed (${p})`);
    // The platform package is an optional dependency: npm drops the subtree that failed and may exit 0.
    // Then ccb says its install is incomplete instead of running without its runtime.
    if (r.status === 0) {
      const v = spawnSync(join(prefix, "bin/ccb"), ["--version"], { env, encoding: "utf8" });
      assert.notEqual(v.status, 0);
      assert.match(v.stderr, /optional/);
    }
  });
});
