import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { generate } from "selfsigned";
import { FIXTURE_BANNER, FIXTURE_FILE, FIXTURE_TOP, fixtureSet } from "../fixtures/runtime/archives.ts";
import { repoRoot } from "../helpers/cli.ts";
import { INITIALIZE, MCP_POST_HEADERS, rawRequest, rpcMessages } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * Builds deploy/Containerfile with Podman and runs the image as the pod spec does (non-root uid,
 * read-only root, no capabilities, no new privileges, volumes for the writable paths). No registry
 * is needed: without CCB_IMAGE_BASE the Debian 12 base is made by deploy/base-image.sh from the
 * machine's Debian mirror. The workbench runtime comes from a file in the context
 * (RUNTIME_SOURCE=file) and is digest-checked during the build.
 */

const IMAGE = "localhost/ccb-test:ci";
const BASE = "localhost/ccb-base:bookworm";
const PKG_VERSION = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
const dir = tmpdirFixture({ prefix: "ccb-image-" });
const fx = fixtureSet();
const containers: string[] = [];
let binary = "";

function sh(cmd: string, args: string[], timeoutMs = 600_000): { code: number | null; out: string; err: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${cmd} could not run: ${r.error.message}`);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function need(bin: string, pkg: string): void {
  if (sh("sh", ["-c", `command -v ${bin}`]).code !== 0)
    throw new Error(`${bin} is missing: apt-get install ${pkg} (.ci/run does)`);
}

/** `--runtime runc` where cgroups are hybrid (crun refuses them); ulimits no higher than ours (root may lack CAP_SYS_RESOURCE). */
function engineFlags(): string[] {
  const unified = "/sys/fs/cgroup/unified/cgroup.controllers";
  const hybrid = existsSync(unified) && readFileSync(unified, "utf8").trim() !== "";
  const limits = readFileSync("/proc/self/limits", "utf8");
  const hard = (name: string) =>
    Number(new RegExp(`^${name}\\s+\\S+\\s+(\\S+)`, "m").exec(limits)?.[1] ?? "unlimited") || 1_048_576;
  const nofile = Math.min(hard("Max open files"), 1_048_576);
  const nproc = Math.min(hard("Max processes"), 32_768);
  return [
    ...(hybrid ? ["--runtime", "runc"] : []),
    "--ulimit",
    `nofile=${nofile}:${nofile}`,
    "--ulimit",
    `nproc=${nproc}:${nproc}`,
  ];
}

function podman(args: string[], timeoutMs?: number) {
  return sh("podman", args, timeoutMs);
}

/**
 * The base image: CCB_IMAGE_BASE (e.g. debian:12-slim where a registry is reachable), else the
 * one deploy/base-image.sh makes with mmdebstrap (.ci/run makes it before the tests; made here otherwise).
 */
function baseImage(): string {
  if (process.env.CCB_IMAGE_BASE) return process.env.CCB_IMAGE_BASE;
  if (podman(["image", "exists", BASE]).code === 0) return BASE;
  need("mmdebstrap", "mmdebstrap");
  const r = sh("bash", [join(repoRoot, "deploy/base-image.sh"), BASE], 900_000);
  assert.equal(r.code, 0, `deploy/base-image.sh: ${(r.out + r.err).slice(-2000)}`);
  return BASE;
}

function context(name: string, archive: Buffer): string {
  const ctx = join(dir.path, name);
  const r = spawnSync("bash", [join(repoRoot, "deploy/image-context.sh"), ctx], {
    encoding: "utf8",
    env: { ...process.env, CCB_BINARY: binary },
  });
  assert.equal(r.status, 0, r.stderr);
  writeFileSync(join(ctx, "runtime", FIXTURE_FILE), archive);
  writeFileSync(join(ctx, "runtime", "manifest.json"), JSON.stringify(fx.manifest));
  return ctx;
}

function build(ctx: string, tag: string) {
  return podman(
    [
      "build",
      "--force-rm",
      "--label",
      "ccb.test=deploy-image",
      ...engineFlags(),
      "--build-arg",
      `BASE_IMAGE=${baseImage()}`,
      "--build-arg",
      "RUNTIME_SOURCE=file",
      "-t",
      tag,
      "-f",
      join(ctx, "Containerfile"),
      ctx,
    ],
    900_000,
  );
}

/** Run the image the way the StatefulSet does: read-only root, no capabilities, writable paths mounted. */
function podLike(name: string): string[] {
  return [
    "--name",
    name,
    ...engineFlags(),
    "--read-only",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/dev/shm",
    "-v",
    `${name}-ws:/workspace`,
    "-v",
    `${name}-state:/var/lib/ccb`,
  ];
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * CCB_IMAGE_TEST=off is for a CI job that itself runs inside an unprivileged container (GitHub's
 * ci.yml job), where no container engine can start one: the image is then built and run by
 * .github/workflows/image.yml on the runner, which this checks instead.
 */
const engineOff = process.env.CCB_IMAGE_TEST === "off";

if (engineOff) {
  describe("deploy/Containerfile (this job cannot run a container engine)", () => {
    test(".github/workflows/image.yml builds and runs the image with this test file on the runner", () => {
      const wf = readFileSync(join(repoRoot, ".github/workflows/image.yml"), "utf8");
      assert.match(wf, /node scripts\/test\.mjs [^\n]*deploy-image/);
      assert.doesNotMatch(wf, /CCB_IMAGE_TEST/);
      assert.doesNotMatch(wf, /container:/, "the image job runs on the runner itself");
    });
  });
}

before(() => {
  if (engineOff) return;
  need("podman", "podman");
  binary = join(dir.path, "ccb");
  const c = spawnSync(process.execPath, [join(repoRoot, "scripts/compile.mjs"), binary], { encoding: "utf8" });
  assert.equal(c.status, 0, c.stderr);
});

after(() => {
  if (engineOff) return dir.cleanup();
  for (const c of containers) {
    podman(["rm", "-f", "-t", "0", c]);
    podman(["volume", "rm", "-f", `${c}-ws`, `${c}-state`]);
  }
  // Layers of failed builds (the tampered one); the tagged image stays as the next run's cache.
  podman(["image", "prune", "-f", "--filter", "label=ccb.test=deploy-image"]);
  dir.cleanup();
});

if (!engineOff)
  describe("deploy/Containerfile with Podman", () => {
    test("builds (runtime from a file, digest-checked); runs as uid 10001 with ccb --version; no secret in the image", (t) => {
      const t0 = Date.now();
      const b = build(context("ctx", fx.good), IMAGE);
      assert.equal(b.code, 0, `podman build failed:\n${(b.out + b.err).slice(-4000)}`);
      t.diagnostic(`image build: ${Math.round((Date.now() - t0) / 1000)} s`);
      const v = podman(["run", "--rm", ...engineFlags(), IMAGE, "--version"]);
      assert.equal(v.code, 0, v.err);
      assert.equal(v.out.trim(), PKG_VERSION);
      const who = podman(["run", "--rm", ...engineFlags(), "--entrypoint", "id", IMAGE, "-u"]);
      assert.equal(who.out.trim(), "10001");
      const tools = podman([
        "run",
        "--rm",
        ...engineFlags(),
        "--entrypoint",
        "sh",
        IMAGE,
        "-c",
        "for b in chromium rg git tini; do command -v $b || exit 1; done; /opt/ccb/cache/runtime/*/bin/openvscode-server --probe",
      ]);
      assert.equal(tools.code, 0, tools.err);
      assert.match(tools.out, /\/usr\/bin\/chromium\n\/usr\/bin\/rg\n\/usr\/bin\/git\n\/usr\/bin\/tini\n/);
      assert.match(
        tools.out,
        new RegExp(`${FIXTURE_BANNER} --probe`),
        "the runtime installed is the one from the archive",
      );
      const inspect = JSON.parse(podman(["image", "inspect", IMAGE]).out) as Array<{
        Config: { Env: string[]; User: string; Entrypoint: string[]; Cmd: string[] };
      }>;
      const cfg = inspect[0]?.Config;
      assert.ok(cfg);
      assert.equal(cfg.User, "10001:10001");
      assert.deepEqual(cfg.Entrypoint, ["/usr/bin/tini", "--", "/opt/ccb/ccb"]);
      assert.deepEqual(cfg.Cmd.slice(0, 2), ["serve", "--http"]);
      assert.ok(!cfg.Env.some((e) => /TOKEN|SECRET|KEY=/i.test(e)), `no secret in the image env: ${cfg.Env.join(" ")}`);
      const leftovers = podman([
        "run",
        "--rm",
        ...engineFlags(),
        "--entrypoint",
        "sh",
        IMAGE,
        "-c",
        `ls /tmp/runtime 2>&1; ls /opt/ccb/cache/runtime`,
      ]);
      assert.match(leftovers.out, /No such file/, "the build context's runtime folder is not left in the image");
      assert.match(leftovers.out, new RegExp(FIXTURE_TOP));
    });

    test("attack: a runtime archive that does not match the pinned digest fails the build", () => {
      const b = build(context("ctx-tampered", fx.tampered), `${IMAGE}-tampered`);
      assert.notEqual(b.code, 0, "the build must fail");
      assert.match(b.out + b.err, /SHA-256|digest|checksum/i);
      assert.notEqual(podman(["image", "exists", `${IMAGE}-tampered`]).code, 0);
    });

    test("a pod-like container serves /healthz and MCP tools/list on the published port, demands the token, logs JSON, stops on SIGTERM", async (t) => {
      const pems = await generate([{ name: "commonName", value: "localhost" }], {
        keySize: 2048,
        algorithm: "sha256",
        extensions: [
          {
            name: "subjectAltName",
            altNames: [
              { type: 2, value: "localhost" },
              { type: 7, ip: "127.0.0.1" },
            ],
          },
        ],
      });
      // A throwaway key, readable by the container's uid through the bind mount.
      writeFileSync(join(dir.path, "tls.crt"), pems.cert);
      writeFileSync(join(dir.path, "tls.key"), pems.private);
      chmodSync(join(dir.path, "tls.key"), 0o644);
      const token = randomBytes(32).toString("hex");
      const port = await freePort();
      const name = `ccb-test-${process.pid}`;
      containers.push(name);
      const run = podman([
        "run",
        "-d",
        ...podLike(name),
        "-e",
        `CCB_AUTH_TOKEN=${token}`,
        "-v",
        `${join(dir.path, "tls.crt")}:/run/tls/tls.crt:ro`,
        "-v",
        `${join(dir.path, "tls.key")}:/run/tls/tls.key:ro`,
        "-p",
        `127.0.0.1:${port}:${port}`,
        IMAGE,
        "serve",
        "--http",
        "--host",
        "0.0.0.0",
        "--port",
        String(port),
        "--cert",
        "/run/tls/tls.crt",
        "--key",
        "/run/tls/tls.key",
        "--workspace",
        "/workspace",
      ]);
      assert.equal(run.code, 0, run.err);
      const base = `https://127.0.0.1:${port}`;
      let health: Awaited<ReturnType<typeof rawRequest>> | undefined;
      for (let i = 0; i < 120 && !health; i++) {
        health = await rawRequest(`${base}/healthz`, { ca: pems.cert }).catch(() => undefined);
        if (!health) await new Promise((r) => setTimeout(r, 500));
      }
      assert.ok(health, `no answer on ${base}:\n${podman(["logs", name]).err}`);
      assert.equal(health.status, 200);
      assert.equal((JSON.parse(health.body) as { version: string }).version, PKG_VERSION);

      const denied = await rawRequest(`${base}/mcp`, {
        method: "POST",
        headers: MCP_POST_HEADERS,
        body: INITIALIZE,
        ca: pems.cert,
      });
      assert.equal(denied.status, 401, "no token, no MCP");
      const wrong = await rawRequest(`${base}/mcp`, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${"0".repeat(64)}` },
        body: INITIALIZE,
        ca: pems.cert,
      });
      assert.equal(wrong.status, 401, "a wrong token, no MCP");

      const auth = { ...MCP_POST_HEADERS, authorization: `Bearer ${token}` };
      const init = await rawRequest(`${base}/mcp`, { method: "POST", headers: auth, body: INITIALIZE, ca: pems.cert });
      assert.equal(init.status, 200, init.body);
      const session = String(init.headers["mcp-session-id"]);
      const sessionHeaders = { ...auth, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
      await rawRequest(`${base}/mcp`, {
        method: "POST",
        headers: sessionHeaders,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        ca: pems.cert,
      });
      const list = await rawRequest(`${base}/mcp`, {
        method: "POST",
        headers: sessionHeaders,
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
        ca: pems.cert,
      });
      assert.equal(list.status, 200, list.body);
      const names = ((rpcMessages(list.body)[0]?.result as { tools: Array<{ name: string }> }).tools ?? []).map(
        (x) => x.name,
      );
      for (const want of ["fs_read", "fs_write", "fs_search", "git_status", "terminal_create", "editor_open"])
        assert.ok(names.includes(want), `tools/list has ${want}: ${names.join(",")}`);

      const write = await rawRequest(`${base}/mcp`, {
        method: "POST",
        headers: sessionHeaders,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "fs_write", arguments: { path: "hello.txt", content: "from the pod\n" } },
        }),
        ca: pems.cert,
      });
      assert.equal(write.status, 200);
      assert.notEqual((rpcMessages(write.body)[0]?.result as { isError?: boolean }).isError, true, write.body);
      const onVolume = podman([
        "run",
        "--rm",
        ...engineFlags(),
        "-v",
        `${name}-ws:/w`,
        "--entrypoint",
        "cat",
        IMAGE,
        "/w/hello.txt",
      ]);
      assert.equal(onVolume.out, "from the pod\n", "the workspace lives on the volume");

      const t0 = Date.now();
      const stop = podman(["stop", "-t", "30", name]);
      assert.equal(stop.code, 0, stop.err);
      t.diagnostic(`podman stop (SIGTERM) took ${Date.now() - t0} ms`);
      const state = JSON.parse(podman(["inspect", name]).out) as Array<{ State: { ExitCode: number } }>;
      assert.equal(state[0]?.State.ExitCode, 0, "a clean exit on SIGTERM, not a SIGKILL after the grace period");
      const logs = podman(["logs", name]);
      const lines = (logs.out + logs.err).split("\n").filter(Boolean);
      assert.ok(lines.length > 0);
      for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `JSON log line: ${l}`);
      assert.ok(!lines.some((l) => l.includes(token)), "the token is never logged");
    });
  });
