import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/core/log.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { spawnCcb } from "../helpers/cli.ts";
import { OtherAccount } from "../helpers/other-account.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, eventually, type Workbench } from "../helpers/workbench.ts";

/**
 * Issue 38: another local account against a person's workbench session. The person is a real
 * Chromium; the attacker is a second local account (useradd) running its own HTTP servers on
 * 127.0.0.1 (runuser); ccb is `ccb serve --http` with the real code-server workbench, and `ccb ide
 * --open` attached to it with a fake `xdg-open` that records its argv and stays alive. Each attack
 * has a positive control showing the probe sees the leak, the frame, the link or the reload when
 * there is one.
 */
const ws = tmpdirFixture({ prefix: "ccb-bsa-ws-" });
const home = tmpdirFixture({ prefix: "ccb-bsa-home-" });
writeFileSync(join(ws.path, "hello.txt"), "hello\n");
const bin = tmpdirFixture({ prefix: "ccb-bsa-bin-" });

/** The attacker's servers: commands on stdin, every request it gets on stdout (JSON lines). */
const ATTACKER = `import { createServer } from "node:http";
import { createHmac, randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
let key = null;
const out = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
const page = (title, body) => "<!doctype html><html><head><meta charset=utf-8><title>" + title + "</title></head><body>" + body + "</body></html>";
function handler(port) {
  return (req, res) => {
    const u = new URL(req.url, "http://x");
    out({ port, method: req.method, path: u.pathname, cookie: req.headers.cookie ?? "", dest: req.headers["sec-fetch-dest"] ?? "" });
    if (u.pathname === "/probe") {
      // Asks its own origin for each path, the way any page can, cookies included.
      const paths = JSON.stringify((u.searchParams.get("paths") ?? "").split(",")).replace(/</g, "\\\\u003c");
      return res.writeHead(200, { "content-type": "text/html" }).end(page("probing", "<script>Promise.all(" + paths + ".map((p) => fetch(p, { credentials: 'include' }).catch(() => 0))).then(() => { document.title = 'probed'; });</script>"));
    }
    if (u.pathname === "/frame") {
      const src = JSON.stringify(u.searchParams.get("src") ?? "about:blank").replace(/</g, "\\\\u003c");
      return res.writeHead(200, { "content-type": "text/html" }).end(page("framing", "<iframe id=f></iframe><script>const f = document.getElementById('f'); f.onload = () => { let own = null; try { own = f.contentDocument && f.contentDocument.title; } catch (e) { own = 'cross-origin'; } document.title = 'framed:' + own; }; f.src = " + src + ";</script>"));
    }
    if (u.pathname === "/own") return res.writeHead(200, { "content-type": "text/html" }).end(page("own page", "mine"));
    if (u.pathname.endsWith("/__ccb/epoch")) {
      const n = u.searchParams.get("n") ?? "";
      const proof = key ? createHmac("sha256", key).update("ccb-epoch:" + n + ":99").digest("hex") : randomBytes(32).toString("hex");
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ epoch: 99, proof }));
    }
    res.writeHead(200, { "content-type": "text/html" }).end(page("attacker", "the attacker's page"));
  };
}
function listen(port) {
  const s = createServer(handler(port));
  s.once("error", () => setTimeout(() => listen(port), 5));
  s.listen(port, "127.0.0.1", () => out({ listening: s.address().port, asked: port }));
}
createInterface({ input: process.stdin }).on("line", (l) => {
  const c = JSON.parse(l);
  if (c.listen !== undefined) listen(c.listen);
  if (c.key) key = Buffer.from(c.key, "hex");
});
`;

interface Seen {
  port: number;
  method: string;
  path: string;
  cookie: string;
  dest: string;
}

let other: OtherAccount;
let wb: Workbench;
let person: Chromium;
let attacker: ChildProcess;
const seen: Seen[] = [];
const listening = new Map<number, number>();
let attackerOrigin = "";
const logs: string[] = [];

function attack(cmd: Record<string, unknown>): void {
  attacker.stdin?.write(`${JSON.stringify(cmd)}\n`);
}

async function attackerListen(port: number): Promise<number> {
  attack({ listen: port });
  return eventually(`the attacker listens (asked ${port})`, () => listening.get(port), 60_000);
}

async function evaluate<T>(expression: string, c: Chromium = person): Promise<T> {
  const r = (await c.page.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })) as {
    result?: { value?: unknown };
  };
  return r.result?.value as T;
}

async function navigate(url: string): Promise<void> {
  await person.page.send("Page.navigate", { url });
}

/** The person's cookies named like ccb's. */
async function ccbCookies(): Promise<Array<{ name: string; value: string; path: string }>> {
  const { cookies } = (await person.page.send("Network.getAllCookies")) as {
    cookies: Array<{ name: string; value: string; path: string }>;
  };
  return cookies.filter((c) => c.name.startsWith("ccb_"));
}

/** Processes whose command line holds a one-time link (a `ccb_ott=` with a token after it). */
function linksOnCommandLines(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (/ccb_ott=[A-Za-z0-9_-]{20,}/.test(cmdline)) found.push(`${pid}: ${cmdline.replace(/\0/g, " ").slice(0, 200)}`);
  }
  return found;
}

const env = () => ({
  HOME: home.path,
  XDG_STATE_HOME: join(home.path, "state"),
  XDG_CACHE_HOME: join(home.path, "cache"),
  XDG_CONFIG_HOME: join(home.path, "config"),
  XDG_DATA_HOME: join(home.path, "data"),
});

before(
  async () => {
    other = OtherAccount.create("ccbatk");
    const script = join("/tmp", `ccb-attacker-${randomBytes(4).toString("hex")}.mjs`);
    writeFileSync(script, ATTACKER);
    chmodSync(script, 0o644);
    attacker = spawn("runuser", ["-u", other.name, "--", process.execPath, script], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    createInterface({ input: attacker.stdout as NodeJS.ReadableStream }).on("line", (l) => {
      const m = JSON.parse(l) as Seen & { listening?: number; asked?: number };
      if (m.listening !== undefined) listening.set(m.asked as number, m.listening);
      else seen.push(m);
    });
    attacker.stderr?.on("data", (d: Buffer) => logs.push(d.toString()));
    attackerOrigin = `http://127.0.0.1:${await attackerListen(0)}`;
    wb = await bootWorkbench(ws.path, home.path);
    person = await launchChromium({ url: "about:blank", log: silentLogger, width: 1280, height: 800 });
    await person.page.send("Page.enable");
    await person.page.send("Runtime.enable");
    await person.page.send("Log.enable");
    await person.page.send("Network.enable");
    person.page.on("Log.entryAdded", (p) => logs.push(String((p.entry as { text?: string }).text ?? "")));
    person.page.on("Runtime.consoleAPICalled", (p) => logs.push(JSON.stringify(p.args)));
    person.page.on("Network.responseReceived", (p) => {
      const r = p.response as { url: string; status: number };
      statuses.set(r.url, r.status);
    });
  },
  { timeout: 400_000 },
);

const statuses = new Map<string, number>();
let personDir = "";

after(async () => {
  await person?.close().catch(() => undefined);
  await wb?.stop();
  attacker?.kill();
  other?.remove();
  ws.cleanup();
  home.cleanup();
  bin.cleanup();
  if (personDir) rmSync(personDir, { recursive: true, force: true });
});

describe("another local account against the person's workbench session (real Chromium)", { timeout: 900_000 }, () => {
  let key = "";
  let cookieName = "";

  it("a page on another loopback port gets no cookie from a fresh link; knowing the prefix it would (positive control)", async () => {
    const printed = /open (http:\/\/127\.0\.0\.1:\d+\/app\?ccb_ott=[A-Za-z0-9_-]+)/.exec(wb.serve.stderr())?.[1];
    assert.ok(printed, "ccb printed a one-time /app link");
    await navigate(printed);
    // The App page lives below the prefix and frames the workbench from its own origin (frame-ancestors 'self' lets it).
    const app = await eventually("the App page below the prefix", async () => {
      const href = await evaluate<string>("location.href");
      return /\/ide\/[A-Za-z0-9_-]{32}\/__ccb\/app$/.test(href) ? href : undefined;
    });
    key = (/\/ide\/([A-Za-z0-9_-]{32})\//.exec(app) as RegExpExecArray)[1] as string;
    await eventually(
      "the workbench rendered inside the App page's frame",
      async () =>
        (await evaluate<boolean>(
          "Boolean(document.getElementById('wb').contentDocument?.querySelector('.monaco-workbench'))",
        ))
          ? true
          : undefined,
      240_000,
    );
    const cookies = await ccbCookies();
    assert.deepEqual(
      cookies.map((c) => c.path),
      [`/ide/${key}`],
      "one cookie, below the prefix only",
    );
    cookieName = (cookies[0] as { name: string }).name;
    assert.match(cookieName, /^ccb_[0-9a-f]{16}$/);
    const value = (cookies[0] as { value: string }).value;

    // The attacker's page asks its own origin for every fixed path a cookie used to have.
    const before = seen.length;
    await navigate(`${attackerOrigin}/probe?paths=/session.json,/app,/ide/,/,/__ccb/app`);
    await eventually("the probe ran", async () =>
      (await evaluate<string>("document.title")) === "probed" ? true : undefined,
    );
    // The attacker's process reports each request on its stdout (another account, a pipe): under
    // load its lines came after the page's title (CI: 0 of 5 read at that moment). Wait for them.
    const asked = ["/session.json", "/app", "/ide/", "/", "/__ccb/app"];
    const reported = () => seen.slice(before).filter((s) => asked.includes(s.path));
    const got = await eventually("the attacker reported every probe", () =>
      reported().length >= asked.length ? reported() : undefined,
    );
    assert.equal(got.length, asked.length, JSON.stringify(got));
    assert.deepEqual(
      got.filter((s) => s.cookie.includes(value) || s.cookie.includes(cookieName)).map((s) => s.path),
      [],
      "no cookie reached the page on another port",
    );
    // Positive control: cookies ignore ports, so with the secret prefix the same page would get it.
    const mark = seen.length;
    await navigate(`${attackerOrigin}/probe?paths=/ide/${key}/x`);
    await eventually("the control probe ran", async () =>
      (await evaluate<string>("document.title")) === "probed" ? true : undefined,
    );
    const control = await eventually("the attacker reported the control probe", () =>
      seen.slice(mark).find((s) => s.path === `/ide/${key}/x`),
    );
    assert.ok(control.cookie.includes(`${cookieName}=${value}`), "the probe sees a cookie when one is sent");
  });

  it("framing refused: a page on another loopback port frames the App page and the workbench; the gateway's own page may (positive control)", async () => {
    const workbench = `${wb.serve.base}/ide/${key}/`;
    for (const src of [`${wb.serve.base}/ide/${key}/__ccb/app`, workbench]) {
      logs.length = 0;
      statuses.delete(src);
      await navigate(`${attackerOrigin}/frame?src=${encodeURIComponent(src)}`);
      await eventually("the frame settled", async () =>
        (await evaluate<string>("document.title")).startsWith("framed:") ? true : undefined,
      );
      await eventually("the gateway answered the frame", () => statuses.get(src));
      assert.equal(statuses.get(src), 403, `${src}: refused (Sec-Fetch-Site: same-site)`);
      await eventually(
        "Chromium blocked the frame by its frame-ancestors policy",
        () =>
          logs.some((l) => /^Framing .* violates .*"frame-ancestors 'self'"\. The request has been blocked/.test(l))
            ? true
            : undefined,
        30_000,
      );
      assert.equal(
        await evaluate<number>(
          "document.getElementById('f').contentDocument?.querySelectorAll('.monaco-workbench').length ?? -1",
        ),
        -1,
        "nothing of the workbench is in the attacker's page",
      );
    }
    // Positive control: the same framing page frames a page without the policy.
    await navigate(`${attackerOrigin}/frame?src=${encodeURIComponent(`${attackerOrigin}/own`)}`);
    await eventually("the control frame loaded", async () =>
      (await evaluate<string>("document.title")) === "framed:own page" ? true : undefined,
    );
  });

  it("ccb ide --open: the one-time link is on no command line while the opener runs; the opener's 0600 page opens the workbench", async () => {
    const record = join(bin.path, "argv.txt");
    const pidFile = join(bin.path, "opener.pid");
    writeFileSync(
      join(bin.path, "xdg-open"),
      `#!/bin/sh\necho $$ > ${pidFile}\nprintf '%s\\n' "$@" > ${record}\nexec sleep 300\n`,
    );
    chmodSync(join(bin.path, "xdg-open"), 0o755);
    const ide = spawnCcb(["ide", "--open", "--workspace", ws.path], {
      env: cleanEnv({ ...env(), PATH: `${bin.path}:${process.env.PATH}` }),
    });
    let out = "";
    ide.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    ide.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    try {
      await eventually("the opener ran", () => (/--open: opened/.test(out) ? true : undefined), 120_000);
      const arg = await eventually("the opener's argv", () => {
        try {
          return readFileSync(record, "utf8").trim() || undefined;
        } catch {
          return undefined;
        }
      });
      assert.doesNotMatch(arg, /ccb_ott|http/, "the opener gets a file, not the link");
      assert.deepEqual(linksOnCommandLines(), [], "no live link on any command line while the opener runs");
      // Positive control: a process holding a link on its command line is found.
      const holder = spawn("sh", [
        "-c",
        "sleep 60",
        `http://127.0.0.1:1/x?ccb_ott=${randomBytes(32).toString("base64url")}`,
      ]);
      await eventually("the scanner sees a link on a command line", () =>
        linksOnCommandLines().length > 0 ? true : undefined,
      );
      holder.kill();
      // The page: 0600 in a 0700 folder, holding a live link another account cannot read.
      assert.equal(statSync(arg).mode & 0o777, 0o600);
      assert.equal(statSync(join(arg, "..")).mode & 0o777, 0o700);
      const html = readFileSync(arg, "utf8");
      const link = (/href="([^"]+)"/.exec(html)?.[1] ?? "").replace(/&amp;/g, "&");
      assert.match(link, /ccb_ott=/);
      const theirs = spawnSync("runuser", ["-u", other.name, "--", "cat", arg], { encoding: "utf8" });
      assert.notEqual(theirs.status, 0, "another account cannot read the page");
      assert.doesNotMatch(theirs.stdout, /ccb_ott/);
      // The person's browser opens the page (a copy owned by the browser's account, as the person's own
      // file would be) and lands on the workbench through the gateway's continuation page.
      const dir = join("/tmp", `ccb-bsa-person-${randomBytes(4).toString("hex")}`);
      mkdirSync(dir, { mode: 0o700 });
      personDir = dir;
      const copy = join(dir, "open.html");
      writeFileSync(copy, html, { mode: 0o600 });
      if (person.uid !== 0) {
        chownSync(dir, person.uid, person.uid);
        chownSync(copy, person.uid, person.uid);
      }
      await navigate(`file://${copy}`);
      await eventually(
        "the workbench opened from the page",
        async () => {
          const href = await evaluate<string>("location.href");
          if (href.startsWith(`${wb.serve.base}/ide/`) && !href.includes("ccb_ott")) return href;
          throw new Error(`at ${String(href).replace(/ccb_ott=[^&]+/, "ccb_ott=<t>")}`);
        },
        60_000,
      );
      await eventually(
        "the workbench rendered",
        async () =>
          (await evaluate<boolean>("Boolean(document.querySelector('.monaco-workbench'))")) ? true : undefined,
        240_000,
      );
      const replay = other.probe("other", { url: link });
      assert.equal(replay.status, 401, "the link in the page was used by the person");
      // The link ccb printed is another one, and still works as the README says (the opener used its own).
      const printed = /Workbench \(one-time link\).*?: (http\S+)/.exec(out)?.[1] ?? "";
      assert.match(printed, /ccb_ott=/);
      assert.notEqual(printed, link, "the opener got a link of its own");
      const used = await fetch(printed, { redirect: "manual" });
      assert.notEqual(used.status, 401, "the printed link still opens the workbench");
      assert.match(used.headers.get("set-cookie") ?? "", /^ccb_/, "it sets the workbench cookie");
    } finally {
      ide.kill("SIGTERM");
      await new Promise((r) => ide.once("exit", r));
      // The fake opener (it stays alive, as a browser would), ended by its own pid.
      try {
        process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGKILL");
      } catch {}
    }
    await eventually("the page removed when ccb ide ended", () => {
      try {
        statSync(readFileSync(record, "utf8").trim());
        return undefined;
      } catch {
        return true;
      }
    });
  });

  it("kill -9 of the gateway: the other account binds the freed port; its epoch answers cannot reload the tab; one with the gateway's key could (positive control)", async () => {
    const link = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
    await navigate(link);
    await eventually(
      "the person's workbench rendered",
      async () =>
        (await evaluate<boolean>("Boolean(document.querySelector('.monaco-workbench'))")) ? true : undefined,
      240_000,
    );
    await evaluate("window.__ccbMark = 1");
    const href = await evaluate<string>("location.href");
    // The key the tab got over its session (for the positive control only: the attacker never has it).
    const script = await evaluate<string>(
      `fetch(${JSON.stringify(`/ide/${key}/__ccb/alive.js`)}, { credentials: "same-origin" }).then((r) => r.text())`,
    );
    const proofKey = /bytes\("([0-9a-f]{64})"\)/.exec(script)?.[1];
    assert.ok(proofKey, "the tab's script carries its gateway's key");
    const port = Number(new URL(wb.serve.base).port);
    const before = seen.length;
    wb.serve.child.kill("SIGKILL");
    const bound = await attackerListen(port);
    assert.equal(bound, port, "the other account holds the freed port");
    await eventually(
      "the tab asked the attacker for the epoch three times",
      () => (seen.slice(before).filter((s) => s.path.endsWith("/__ccb/epoch")).length >= 3 ? true : undefined),
      60_000,
    );
    assert.equal(await evaluate("window.__ccbMark"), 1, "the tab did not reload");
    assert.equal(await evaluate("location.href"), href);
    assert.equal(await evaluate("Boolean(document.getElementById('ccb-gone'))"), true, "it says the workbench stopped");
    assert.deepEqual(
      seen.slice(before).filter((s) => s.dest === "document"),
      [],
      "no page of the attacker was loaded",
    );
    // What reached the port is the dead gateway's cookie (the tab's own requests): nothing opens with it.
    const got = seen.slice(before).filter((s) => s.cookie.includes(cookieName));
    assert.ok(
      got.every((s) => s.path.startsWith(`/ide/${key}/`)),
      "only requests below the dead gateway's prefix carried its cookie",
    );
    // Positive control: an answer with the gateway's key is believed (the tab reloads onto the port's page).
    attack({ key: proofKey });
    await eventually(
      "the tab reloaded onto the port's page",
      async () => ((await evaluate<string>("document.title")) === "attacker" ? true : undefined),
      60_000,
    );
    assert.equal(await evaluate("window.__ccbMark"), undefined);
  });
});
