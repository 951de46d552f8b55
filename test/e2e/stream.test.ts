import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { artifactSource, keptBefore } from "../helpers/artifacts.ts";
import { spawnCcb } from "../helpers/cli.ts";
import { exitOf, Output } from "../helpers/proc-output.ts";
import { pidAlive, stopProcess, until } from "../helpers/process.ts";

const PAGE = `<!doctype html><html><body style="margin:0">
<button id="b" style="position:absolute;left:0;top:0;width:400px;height:200px">click me</button>
<input id="i" style="position:absolute;left:0;top:300px;width:400px;height:40px">
<script>
const report = (q) => fetch("/event?" + new URLSearchParams(q));
b.onclick = () => report({ type: "click" });
i.oninput = () => report({ type: "input", value: i.value });
i.onkeydown = (e) => { if (e.key === "Enter") report({ type: "key", key: e.key }); };
window.onresize = () => report({ type: "resize", w: innerWidth, h: innerHeight });
</script></body></html>`;

/** Width and height from a JPEG's SOF marker. */
function jpegSize(buf: Buffer): { width: number; height: number } {
  assert.equal(buf[0], 0xff);
  assert.equal(buf[1], 0xd8);
  let i = 2;
  while (i < buf.length) {
    if (buf[i] !== 0xff) throw new Error("bad JPEG marker");
    const marker = buf[i + 1] as number;
    const len = buf.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xc2) return { height: buf.readUInt16BE(i + 5), width: buf.readUInt16BE(i + 7) };
    i += 2 + len;
  }
  throw new Error("no SOF marker");
}

describe("ccb stream (real headless Chromium)", () => {
  let page: Server;
  const events: Record<string, string>[] = [];
  const waiters: { pred: (e: Record<string, string>) => boolean; resolve: (e: Record<string, string>) => void }[] = [];
  let stream: ChildProcess;
  let viewerUrl: URL;
  let chromiumPid = 0;
  let profile = "";

  const waitEvent = (pred: (e: Record<string, string>) => boolean) =>
    new Promise<Record<string, string>>((resolve) => {
      const hit = events.find(pred);
      if (hit) resolve(hit);
      else waiters.push({ pred, resolve });
    });

  before(
    keptBefore(async () => {
      page = createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://x");
        if (url.pathname === "/event") {
          const e = Object.fromEntries(url.searchParams);
          events.push(e);
          for (const w of [...waiters])
            if (w.pred(e)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(e);
            }
          res.end("ok");
          return;
        }
        res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
      });
      page.listen(0, "127.0.0.1");
      await once(page, "listening");
      const pagePort = (page.address() as AddressInfo).port;
      // At debug level its stderr names each start-up step (and carries Chromium's own stderr): a failed
      // test keeps it (.cache/test-artifacts/stream/...), so the step it stopped at is on record.
      stream = spawnCcb(["stream", "--url", `http://127.0.0.1:${pagePort}/`, "--port", "0", "--log-level", "debug"]);
      const stderr = new Output(stream.stderr);
      artifactSource("ccb-stream", () => ({ "stderr.log": stderr.text }));
      // Both lines are matched in everything read so far (on a busy machine they arrive in one chunk,
      // and a wait that looked only at the chunks after the first match never saw the viewer line),
      // each up to its newline (a chunk may end inside the URL).
      const info = await stderr.waitFor(/chromium pid (\d+), profile (\S+)\n/);
      chromiumPid = Number(info[1]);
      profile = info[2] as string;
      const m = await stderr.waitFor(/viewer (http:\/\/\S+)\n/);
      viewerUrl = new URL(m[1] as string);
    }),
  );

  after(async () => {
    await stopProcess(stream);
    page.closeAllConnections();
    page.close();
  });

  const wsUrl = (token: string | null) => `ws://${viewerUrl.host}/stream${token === null ? "" : `?token=${token}`}`;

  it("serves the viewer page only with the token", async () => {
    assert.equal((await fetch(`http://${viewerUrl.host}/`)).status, 401);
    const ok = await fetch(viewerUrl);
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /<canvas/);
  });

  it("refuses a viewer without the right token", async () => {
    for (const t of [null, "wrong"]) {
      const status = await new Promise<number>((resolve) => {
        const ws = new WebSocket(wsUrl(t));
        ws.on("unexpected-response", (_q, r) => resolve(r.statusCode ?? 0));
        ws.on("open", () => resolve(101));
      });
      assert.equal(status, 401);
    }
  });

  it("streams JPEG frames and takes pointer, text, key and resize input; one viewer at a time", async () => {
    const token = viewerUrl.searchParams.get("token") as string;
    const ws = new WebSocket(wsUrl(token));
    const texts: Record<string, unknown>[] = [];
    const frames: Buffer[] = [];
    let onFrame: ((b: Buffer) => void) | undefined;
    ws.on("message", (d, isBinary) => {
      if (isBinary) {
        frames.push(d as Buffer);
        onFrame?.(d as Buffer);
      } else texts.push(JSON.parse(d.toString()));
    });
    await once(ws, "open");
    const nextFrame = (pred: (b: Buffer) => boolean) =>
      new Promise<Buffer>((resolve) => {
        const hit = frames.find(pred);
        if (hit) return resolve(hit);
        onFrame = (b) => pred(b) && resolve(b);
      });
    // Frames come at the emulated viewport size (the very first one may predate the override).
    const sized = await nextFrame((b) => jpegSize(b).height === 800);
    assert.deepEqual(jpegSize(sized), { width: 1280, height: 800 });
    assert.deepEqual(texts[0], { type: "hello", width: 1280, height: 800, maxFps: 12 });

    // A second viewer is refused while this one is connected.
    const second = await new Promise<number>((resolve) => {
      const w2 = new WebSocket(wsUrl(token));
      w2.on("unexpected-response", (_q, r) => resolve(r.statusCode ?? 0));
      w2.on("open", () => resolve(101));
    });
    assert.equal(second, 409);

    ws.send(JSON.stringify({ type: "pointer", action: "down", x: 100, y: 100, button: "left", clickCount: 1 }));
    ws.send(JSON.stringify({ type: "pointer", action: "up", x: 100, y: 100, button: "left", clickCount: 1 }));
    await waitEvent((e) => e.type === "click");

    ws.send(JSON.stringify({ type: "pointer", action: "down", x: 100, y: 320, button: "left", clickCount: 1 }));
    ws.send(JSON.stringify({ type: "pointer", action: "up", x: 100, y: 320, button: "left", clickCount: 1 }));
    ws.send(JSON.stringify({ type: "text", text: "hello-ccb" }));
    await waitEvent((e) => e.type === "input" && e.value === "hello-ccb");
    ws.send(JSON.stringify({ type: "key", action: "down", key: "Enter", code: "Enter", text: "\r" }));
    ws.send(JSON.stringify({ type: "key", action: "up", key: "Enter", code: "Enter" }));
    await waitEvent((e) => e.type === "key" && e.key === "Enter");

    // Bad input is answered, not obeyed, and the connection stays.
    ws.send(JSON.stringify({ type: "resize", width: 99999, height: 1 }));
    ws.send("{nope");
    ws.send(JSON.stringify({ type: "navigate", url: "file:///etc/passwd" }));
    await until(() => texts.filter((t) => t.type === "error").length >= 3, "three error replies");

    ws.send(JSON.stringify({ type: "resize", width: 800, height: 600 }));
    await waitEvent((e) => e.type === "resize" && e.w === "800" && e.h === "600");
    const resized = await nextFrame((b) => jpegSize(b).width === 800 && jpegSize(b).height === 600);
    assert.deepEqual(jpegSize(resized), { width: 800, height: 600 });

    ws.close();
    await once(ws, "close");
    // The slot is free again.
    const third = new WebSocket(wsUrl(token));
    await once(third, "open");
    third.close();
  });

  it("stops Chromium and removes its profile on shutdown", async () => {
    assert.equal(pidAlive(chromiumPid), true);
    assert.equal(existsSync(profile), true);
    // Waits for the real exit (ccb bounds its own shutdown: Chromium gets SIGKILL 3 s after SIGTERM),
    // not stopProcess(), whose SIGKILL after 5 s turned a slow but clean shutdown under load into
    // exit code null. ccb exits only after Chromium has exited and its profile is gone.
    const exited = exitOf(stream);
    stream.kill("SIGTERM");
    assert.deepEqual(await exited, { code: 0, signal: null });
    assert.equal(pidAlive(chromiumPid), false);
    assert.equal(existsSync(profile), false);
  });
});
