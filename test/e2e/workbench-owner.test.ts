import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/core/log.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { OtherAccount } from "../helpers/other-account.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, type Workbench } from "../helpers/workbench.ts";

/**
 * The workbench belongs to its owner. Real code-server behind `ccb serve --http`, a second local
 * account created here (useradd; probes run with runuser; removed after), and a real Chromium
 * opening the one-time link ccb printed.
 */
const ws = tmpdirFixture({ prefix: "ccb-owner-ws-" });
const home = tmpdirFixture({ prefix: "ccb-owner-home-" });
let other: OtherAccount;
let wb: Workbench;
let socketPath = "";
let base = "";
let workbenchPath = "";
let ownerLink = "";
let frameLink = "";

before(
  async () => {
    other = OtherAccount.create("ccbprobe");
    wb = await bootWorkbench(ws.path, home.path);
    base = wb.serve.base;
    const stateBase = join(home.path, "state/ccb/workbench");
    const inst = readdirSync(stateBase)[0] as string;
    socketPath = join(stateBase, inst, "runtime.sock");
    const r = await wb.ok("vscode_open");
    workbenchPath = new URL((r._meta?.["ccb/workbench"] as { url: string }).url).pathname;
    ownerLink = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
    frameLink = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
  },
  { timeout: 400_000 },
);

after(async () => {
  await wb?.stop();
  other?.remove();
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
    const owner = other.probe("self", { socketPath, path: "/healthz" });
    assert.equal(owner.status, 200, JSON.stringify(owner));
    const theirs = other.probe("other", { socketPath, path: "/healthz" });
    assert.equal(theirs.status, "EACCES", JSON.stringify(theirs));
  });

  it("another local account gets nothing from the gateway without the secret, even knowing the path", () => {
    for (const path of [workbenchPath, `${workbenchPath.replace(/\/$/, "")}/static/x`, "/session.json", "/app"]) {
      const r = other.probe("other", { url: `${base}${path}` });
      assert.equal(r.status, 401, `${path}: ${JSON.stringify(r)}`);
      assert.doesNotMatch(r.body, /\/ide\/[A-Za-z0-9_-]{20,}/, "no workbench path in a refusal");
    }
  });

  it("the owner with a one-time link gets the cookie and the workbench (positive control); the link works once", () => {
    const link = new URL(ownerLink);
    const exchange = other.probe("self", { url: link.toString() }) as {
      status: number;
      body: string;
      location?: string;
      setCookie?: string[];
    };
    assert.equal(exchange.status, 302);
    const cookie = (exchange.setCookie?.[0] ?? "").split(";")[0] as string;
    assert.match((exchange.setCookie ?? []).join("\n"), /HttpOnly; SameSite=Strict/);
    const page = other.probe("self", { url: `${base}${exchange.location}`, cookie });
    assert.equal(page.status, 200);
    assert.match(page.body, /<html|<!DOCTYPE/i);
    const replay = other.probe("other", { url: link.toString() });
    assert.equal(replay.status, 401, "a used one-time link gives another account nothing");
  });

  it("a frame's capability path exists only after a used one-time link; another local account gets nothing from a made-up, altered or replayed one", () => {
    const frame = { "sec-fetch-dest": "iframe", "sec-fetch-site": "cross-site" };
    // Before any exchange, a capability-shaped path opens nothing (the path alone).
    const made = `/s/${"A".repeat(43)}${workbenchPath}`;
    const early = other.probe("other", { url: `${base}${made}`, headers: frame });
    assert.equal(early.status, 401, JSON.stringify(early));
    assert.doesNotMatch(early.body, /\/ide\/[A-Za-z0-9_-]{20,}/, "no workbench path in a refusal");
    // The owner's frame exchanges its one-time link: a capability in the path, no cookie (positive control).
    const exchange = other.probe("self", { url: frameLink, headers: frame }) as {
      status: number;
      location?: string;
      setCookie?: string[];
    };
    assert.equal(exchange.status, 302);
    assert.equal(exchange.setCookie, undefined, "a frame gets no cookie");
    const m = /^(\/s\/[A-Za-z0-9_-]{43})(\/ide\/.+)$/.exec(exchange.location ?? "");
    assert.ok(m, "redirected below /s/<capability>");
    const [, cap, rest] = m as unknown as [string, string, string];
    const page = other.probe("self", { url: `${base}${cap}${rest}` });
    assert.equal(page.status, 200, "the capability path opens the workbench");
    assert.match(page.body, /<html|<!DOCTYPE/i);
    // Another account: a made-up capability, the owner's altered by one character, the used link replayed.
    const altered = `${cap.slice(0, -1)}${cap.endsWith("A") ? "B" : "A"}`;
    for (const path of [made, `${altered}${rest}`, `/s/${rest}`, `/s/x/session.json`]) {
      const r = other.probe("other", { url: `${base}${path}`, headers: frame });
      assert.equal(r.status, 401, `${path.replace(cap, "/s/<cap>")}: ${r.status}`);
      assert.doesNotMatch(r.body, /\/ide\/[A-Za-z0-9_-]{20,}/, "no workbench path in a refusal");
    }
    const replay = other.probe("other", { url: frameLink, headers: frame });
    assert.equal(replay.status, 401, "a used one-time link gives another account no capability");
    assert.equal(replay.location, undefined);
    assert.doesNotMatch(wb.serve.stderr(), new RegExp(cap.slice(3)), "the capability is in no log line");
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
      const paths = cookies.map((c) => c.path);
      assert.equal(paths.length, 1, JSON.stringify(paths));
      assert.match(
        paths[0] as string,
        /^\/ide\/[A-Za-z0-9_-]{32}$/,
        "the cookie goes below the workbench's prefix only",
      );
      for (const c of cookies) {
        assert.equal(c.httpOnly, true);
        assert.equal(c.sameSite, "Strict");
      }
      const { result } = (await cdp.send("Runtime.evaluate", { expression: "location.href", returnByValue: true })) as {
        result: { value: string };
      };
      assert.equal(
        result.value,
        `${base}${paths[0]}/__ccb/app`,
        "the token left the address bar; the App page is below the prefix",
      );
    } finally {
      await chromium?.close();
    }
  });
});
