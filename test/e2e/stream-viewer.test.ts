import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/core/log.ts";
import type { CdpSession } from "../../src/platform/cdp-pipe.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { repoRoot, spawnCcb } from "../helpers/cli.ts";
import { stopProcess, waitForOutput } from "../helpers/process.ts";

/**
 * The `ccb stream` viewer page in a real Chromium (the viewer's browser), streaming a page of a
 * second, server-side Chromium: the canvas fits the window with the aspect kept, a window resize
 * resizes the remote page, and clicks land where they were aimed through the scale. Screenshots go
 * to test-artifacts/ (kept by CI).
 */
export const ARTIFACTS = join(repoRoot, "test-artifacts");

const PAGE = `<!doctype html><html><head><style>
html,body{margin:0;height:100%;font:16px sans-serif}
body{background:linear-gradient(90deg,#264f78 0,#264f78 50%,#6a9955 50%)}
#br{position:fixed;right:0;bottom:0;width:120px;height:40px;background:#c586c0;color:#000}
</style></head><body><div style="padding:8px;color:#fff">remote page</div><div id="br">bottom-right</div>
<script>
const report = (q) => fetch("/event?" + new URLSearchParams(q));
document.addEventListener("mousedown", (e) => report({ type: "down", x: e.clientX, y: e.clientY }));
window.onresize = () => report({ type: "resize", w: innerWidth, h: innerHeight });
</script></body></html>`;

interface Layout {
  box: { w: number; h: number };
  canvas: { left: number; top: number; w: number; h: number };
  remote: { w: number; h: number };
  frames: number;
  frameSize: string;
  overflowX: boolean;
  overflowY: boolean;
}

describe("ccb stream viewer fits its window (real Chromium on both sides)", () => {
  let page: Server;
  let stream: ChildProcess;
  let viewerUrl = "";
  let pageUrl = "";
  let viewer: Chromium;
  let cdp: CdpSession;
  const events: Record<string, string>[] = [];
  const waiters: Array<() => void> = [];
  const waitEvent = async (pred: (e: Record<string, string>) => boolean): Promise<Record<string, string>> => {
    for (;;) {
      const hit = events.find(pred);
      if (hit) return hit;
      await new Promise<void>((r) => waiters.push(r));
    }
  };

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    page = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname === "/event") {
        events.push(Object.fromEntries(url.searchParams));
        for (const w of waiters.splice(0)) w();
        res.end("ok");
        return;
      }
      res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    });
    page.listen(0, "127.0.0.1");
    await once(page, "listening");
    // The page's URL on stdin (`--url -`), as a one-time link would come: never on the command line.
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    stream = spawnCcb(["stream", "--url", "-", "--port", "0"]);
    stream.stdin?.end(`${pageUrl}\n`);
    viewerUrl = (await waitForOutput(stream, /viewer (http:\/\/\S+)/, { timeoutMs: 60_000 }))[1] as string;
    viewer = await launchChromium({ url: "about:blank", log: silentLogger, width: 1000, height: 700 });
    cdp = viewer.page;
    await cdp.send("Page.enable");
    await cdp.send("Runtime.enable");
    await setWindow(1000, 700);
    await cdp.send("Page.navigate", { url: viewerUrl });
  });

  after(async () => {
    await viewer?.close();
    await stopProcess(stream);
    page.closeAllConnections();
    page.close();
  });

  const setWindow = (width: number, height: number) =>
    cdp.send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: false });

  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = (await cdp.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value?: unknown };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails)
      throw new Error(`page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value as T;
  };

  const layout = () =>
    evaluate<Layout>(`(() => {
      const box = document.getElementById("box"), c = document.getElementById("c"), r = c.getBoundingClientRect(), b = box.getBoundingClientRect(), se = document.scrollingElement;
      return { box: { w: box.clientWidth, h: box.clientHeight }, canvas: { left: r.left - b.left, top: r.top - b.top, w: r.width, h: r.height },
        remote: { w: c.width, h: c.height }, frames: Number(box.dataset.frames || 0), frameSize: box.dataset.frameSize || "",
        overflowX: se.scrollWidth > se.clientWidth, overflowY: se.scrollHeight > se.clientHeight };
    })()`);

  /** Wait (by polling the page) until the layout satisfies `pred`. */
  const layoutWhen = async (what: string, pred: (l: Layout) => boolean): Promise<Layout> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const l = await layout();
      if (pred(l)) return l;
      if (Date.now() > deadline) throw new Error(`${what}: last layout ${JSON.stringify(l)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** The canvas is inside the box, keeps the remote aspect and touches two opposite sides. */
  const assertFits = (l: Layout) => {
    assert.equal(l.overflowX, false, "no horizontal overflow");
    assert.equal(l.overflowY, false, "no vertical overflow");
    assert.ok(l.canvas.left >= 0 && l.canvas.top >= 0, "canvas inside the box");
    assert.ok(
      l.canvas.left + l.canvas.w <= l.box.w + 0.5 && l.canvas.top + l.canvas.h <= l.box.h + 0.5,
      "canvas inside the box",
    );
    assert.ok(Math.abs(l.canvas.w / l.canvas.h - l.remote.w / l.remote.h) < 0.01, `aspect kept: ${JSON.stringify(l)}`);
    assert.ok(
      Math.abs(l.canvas.w - l.box.w) <= 1 || Math.abs(l.canvas.h - l.box.h) <= 1,
      `canvas fills the box in one dimension: ${JSON.stringify(l)}`,
    );
  };

  const screenshot = async (name: string) => {
    const shot = (await cdp.send("Page.captureScreenshot", { format: "png" })) as { data: string };
    writeFileSync(join(ARTIFACTS, name), Buffer.from(shot.data, "base64"));
  };

  for (const [w, h] of [
    [1000, 700],
    [700, 900],
  ] as const) {
    it(`a ${w}x${h} window: the remote page takes the window's size and the canvas fills it exactly`, async () => {
      await setWindow(w, h);
      // The remote page itself reports the new size, and a frame of that size is drawn.
      await waitEvent((e) => e.type === "resize" && e.w === String(w) && e.h === String(h));
      const l = await layoutWhen(`a ${w}x${h} frame`, (x) => x.frameSize === `${w}x${h}`);
      assertFits(l);
      assert.deepEqual(l.canvas, { left: 0, top: 0, w, h });
      assert.deepEqual(l.remote, { w, h });
      await screenshot(`stream-viewer-${w}x${h}.png`);
    });
  }

  it("`--url -` read the page's URL from stdin: it is on no command line", () => {
    const cmdline = readFileSync(`/proc/${stream.pid}/cmdline`, "utf8");
    assert.ok(!cmdline.includes(pageUrl), cmdline);
    assert.ok(cmdline.includes("--url\0-"), "control: the scan reads this process's arguments");
  });

  it("a box smaller than the remote minimum: the canvas scales with the aspect kept and clicks map back through the scale", async () => {
    // 300x150 CSS px: the remote page can be at least 200 high, so it becomes 300x200 and is drawn at 0.75.
    await evaluate(
      `(() => { const b = document.getElementById("box"); b.style.inset = "auto"; b.style.left = "40px"; b.style.top = "30px"; b.style.width = "300px"; b.style.height = "150px"; })()`,
    );
    const l = await layoutWhen("remote clamped to 300x200", (x) => x.remote.w === 300 && x.remote.h === 200);
    assertFits(l);
    assert.ok(
      Math.abs(l.canvas.w - 225) <= 1 && Math.abs(l.canvas.h - 150) <= 1,
      `scaled to 225x150: ${JSON.stringify(l.canvas)}`,
    );
    // Aim at remote (200, 100): canvas-relative CSS (150, 75); the box sits at (40, 30).
    const x = 40 + l.canvas.left + 150;
    const y = 30 + l.canvas.top + 75;
    const before = events.length;
    await cdp.send("Input.dispatchMouseEvent", { type: "mousePressed", x, y, button: "left", clickCount: 1 });
    await cdp.send("Input.dispatchMouseEvent", { type: "mouseReleased", x, y, button: "left", clickCount: 1 });
    const down = await waitEvent((e) => events.indexOf(e) >= before && e.type === "down");
    assert.ok(
      Math.abs(Number(down.x) - 200) <= 2 && Math.abs(Number(down.y) - 100) <= 2,
      `click landed at ${down.x},${down.y}`,
    );
    await screenshot("stream-viewer-scaled-300x150.png");
  });
});
