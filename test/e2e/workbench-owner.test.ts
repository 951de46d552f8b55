import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/core/log.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, type Workbench } from "./workbench-helpers.ts";

/**
 * The workbench belongs to its owner. Real code-server behind `ccb serve --http`, a second local
 * account created here (useradd; probes run with runuser; removed after), and a real Chromium
 * opening the one-time link ccb printed.
 */
const ws = tmpdirFixture({ prefix: "ccb-owner-ws-" });
const home = tmpdirFixture({ prefix: "ccb-owner-home-" });
const OTHER = `ccbprobe${randomBytes(3).toString("hex")}`;
let wb: Workbench;
let socketPath = "";
let base = "";
let workbenchPath = "";
let ownerLink = "";
const probeScript = join("/tmp", `ccb-probe-${randomBytes(4).toString("hex")}.mjs`);

/** An HTTP GET over TCP or a Unix socket, run as `user` (undefined = this test's own account). */
function probe(
  user: string | undefined,
  target: { url?: string; socketPath?: string; path?: string; cookie?: string },
): { status: number | string; body: string } {
  const cmd = user ? ["runuser", "-u", user, "--", process.execPath, probeScript] : [process.execPath, probeScript];
  const r = spawnSync(cmd[0] as string, cmd.slice(1), {
    input: JSON.stringify(target),
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { status: number | string; body: string };
}

before(
  async () => {
    writeFileSync(
      probeScript,
      `import { request } from "node:http";
     let input = ""; process.stdin.on("data", (d) => (input += d)).on("end", () => {
       const t = JSON.parse(input);
       const u = t.url ? new URL(t.url) : undefined;
       const req = request({ ...(t.socketPath ? { socketPath: t.socketPath } : { host: u.hostname, port: u.port }), path: t.path ?? (u ? u.pathname + u.search : "/"), headers: t.cookie ? { cookie: t.cookie } : {} }, (res) => {
         let body = ""; res.on("data", (d) => (body += d)); res.on("end", () => console.log(JSON.stringify({ status: res.statusCode, body: body.slice(0, 300), location: res.headers.location, setCookie: res.headers["set-cookie"] })));
       });
       req.on("error", (e) => console.log(JSON.stringify({ status: e.code, body: e.message })));
       req.end();
     });`,
    );
    chmodSync(probeScript, 0o644);
    execFileSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", OTHER]);
    wb = await bootWorkbench(ws.path, home.path);
    base = wb.serve.base;
    const stateBase = join(home.path, "state/ccb/workbench");
    const inst = readdirSync(stateBase)[0] as string;
    socketPath = join(stateBase, inst, "runtime.sock");
    const r = await wb.ok("vscode_open");
    workbenchPath = new URL((r._meta?.["ccb/workbench"] as { url: string }).url).pathname;
    ownerLink = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
  },
  { timeout: 400_000 },
);

after(async () => {
  await wb?.stop();
  spawnSync("userdel", ["--force", OTHER]);
  spawnSync("rm", ["-f", probeScript]);
  ws.cleanup();
  home.cleanup();
});

describe("the workbench belongs to its owner", { timeout: 600_000 }, () => {
  it("the runtime listens on no TCP port: only a Unix socket (mode 600) in a 0700 folder", () => {
    assert.equal(statSync(socketPath).isSocket(), true);
    assert.equal(statSync(socketPath).mode & 0o777, 0o600);
    assert.equal(statSync(join(socketPath, "..")).mode & 0o777, 0o700);
    const listening = execFileSync("ss", ["-Hltnp"], { encoding: "utf8" });
    const pids = listening.match(/pid=\d+/g)?.map((p) => Number(p.slice(4))) ?? [];
    for (const pid of pids) {
      let cmdline = "";
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      } catch {
        continue;
      }
      assert.ok(
        !cmdline.includes(socketPath) && !cmdline.includes(join(socketPath, "..")),
        `a runtime process listens on TCP: ${cmdline.replace(/\0/g, " ")}`,
      );
    }
  });

  it("another local account cannot open the runtime's socket; its owner can (positive control)", () => {
    const owner = probe(undefined, { socketPath, path: "/healthz" });
    assert.equal(owner.status, 200, JSON.stringify(owner));
    const other = probe(OTHER, { socketPath, path: "/healthz" });
    assert.equal(other.status, "EACCES", JSON.stringify(other));
  });

  it("another local account gets nothing from the gateway without the secret, even knowing the path", () => {
    for (const path of [workbenchPath, `${workbenchPath.replace(/\/$/, "")}/static/x`, "/session.json", "/app"]) {
      const r = probe(OTHER, { url: `${base}${path}` });
      assert.equal(r.status, 401, `${path}: ${JSON.stringify(r)}`);
      assert.doesNotMatch(r.body, /\/ide\/[A-Za-z0-9_-]{20,}/, "no workbench path in a refusal");
    }
  });

  it("the owner with a one-time link gets the cookie and the workbench (positive control); the link works once", () => {
    const link = new URL(ownerLink);
    const exchange = probe(undefined, { url: link.toString() }) as {
      status: number;
      body: string;
      location?: string;
      setCookie?: string[];
    };
    assert.equal(exchange.status, 302);
    const cookie = (exchange.setCookie?.[0] ?? "").split(";")[0] as string;
    assert.match((exchange.setCookie ?? []).join("\n"), /HttpOnly; SameSite=Strict/);
    const page = probe(undefined, { url: `${base}${exchange.location}`, cookie });
    assert.equal(page.status, 200);
    assert.match(page.body, /<html|<!DOCTYPE/i);
    const replay = probe(OTHER, { url: link.toString() });
    assert.equal(replay.status, 401, "a used one-time link gives another account nothing");
  });

  it("real Chromium with the printed link gets a working workbench (cookie, WebSocket, extension host)", {
    timeout: 400_000,
  }, async () => {
    const printed = /open (http:\/\/127\.0\.0\.1:\d+\/app\?ccb_ott=[A-Za-z0-9_-]+)/.exec(wb.serve.stderr())?.[1];
    assert.ok(printed, "ccb printed a one-time /app link");
    const before = wb.countLog(/bridge: extension host \d+ connected/);
    let chromium: Chromium | undefined;
    try {
      chromium = await launchChromium({ url: printed, log: silentLogger, width: 1280, height: 800 });
      await wb.waitLog(() => wb.countLog(/bridge: extension host \d+ connected/) > before, 300_000);
      const cdp = chromium.page;
      const { cookies } = (await cdp.send("Network.getAllCookies")) as {
        cookies: Array<{ path: string; httpOnly: boolean; sameSite?: string }>;
      };
      const paths = cookies.map((c) => c.path).sort();
      assert.ok(
        paths.includes("/app") && paths.some((p) => p.startsWith("/ide/")),
        JSON.stringify(cookies.map((c) => c.path)),
      );
      for (const c of cookies) {
        assert.equal(c.httpOnly, true);
        assert.equal(c.sameSite, "Strict");
      }
      const { result } = (await cdp.send("Runtime.evaluate", { expression: "location.href", returnByValue: true })) as {
        result: { value: string };
      };
      assert.equal(result.value, `${base}/app`, "the token left the address bar");
    } finally {
      await chromium?.close();
    }
  });
});
