/// <reference lib="dom" />
import { LIMITS } from "../limits.ts";
import type { StreamEvent, ViewerInput } from "../protocol.ts";

/** How long the container must keep a size before the remote page is resized to it. */
const RESIZE_DEBOUNCE_MS = 250;

export interface StreamClientOptions {
  /** The `/stream` WebSocket URL with its token. */
  url: string;
  canvas: HTMLCanvasElement;
  container: HTMLElement;
  onFirstFrame?: () => void;
  onClose?: (reason: string) => void;
  onError?: (message: string) => void;
}

export interface StreamClient {
  close(): void;
  fit(): void;
}

const BUTTONS = ["left", "middle", "right"] as const;

/**
 * Browser-side stream client shared by the `ccb stream` viewer page (viewer/page.ts) and the MCP
 * App's stream tier (viewer/global.ts defines it as `ccbStream` for the App document). The canvas
 * keeps the remote page's pixel size (taken from each frame) and is scaled by CSS to fit its
 * container with the aspect kept, centred; pointer and wheel coordinates are mapped back through that
 * scale; a container resize refits at once and, once the size has held for RESIZE_DEBOUNCE_MS, asks
 * the server to resize the remote page to the container (within the protocol's bounds). The state is
 * mirrored in `container.dataset` (remoteWidth/remoteHeight/frames/frameSize) for tests and debugging.
 */
export function ccbStream(o: StreamClientOptions): StreamClient {
  const c = o.canvas;
  const box = o.container;
  const ctx = c.getContext("2d");
  let frames = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let asked = "";
  const ws = new WebSocket(o.url);
  ws.binaryType = "blob";
  const send = (m: ViewerInput): void => {
    if (ws.readyState === 1) ws.send(JSON.stringify(m));
  };
  const clamp = (v: number, lo: number, hi: number): number => Math.max(lo, Math.min(hi, Math.floor(v)));
  const fit = (): void => {
    const cw = box.clientWidth;
    const ch = box.clientHeight;
    if (!c.width || !c.height || !cw || !ch) return;
    const s = Math.min(cw / c.width, ch / c.height);
    const w = Math.floor(c.width * s);
    const h = Math.floor(c.height * s);
    c.style.position = "absolute";
    c.style.width = `${w}px`;
    c.style.height = `${h}px`;
    c.style.left = `${Math.floor((cw - w) / 2)}px`;
    c.style.top = `${Math.floor((ch - h) / 2)}px`;
  };
  const setRemote = (w: number, h: number): void => {
    if (c.width === w && c.height === h) return;
    c.width = w;
    c.height = h;
    box.dataset.remoteWidth = String(w);
    box.dataset.remoteHeight = String(h);
    fit();
  };
  const wanted = () => ({
    width: clamp(box.clientWidth, LIMITS.minSize, LIMITS.maxWidth),
    height: clamp(box.clientHeight, LIMITS.minSize, LIMITS.maxHeight),
  });
  const askResize = (): void => {
    const want = wanted();
    const key = `${want.width}x${want.height}`;
    if (key === asked || (c.width === want.width && c.height === want.height)) return;
    asked = key;
    send({ type: "resize", width: want.width, height: want.height });
  };
  const ro = new ResizeObserver(() => {
    fit();
    clearTimeout(timer);
    timer = setTimeout(askResize, RESIZE_DEBOUNCE_MS);
  });
  ro.observe(box);
  ws.onmessage = (e: MessageEvent<string | Blob>) => {
    if (typeof e.data === "string") {
      const m = JSON.parse(e.data) as StreamEvent;
      if (m.type === "hello") {
        setRemote(m.width, m.height);
        askResize();
      } else if (m.type === "resized") {
        asked = "";
        setRemote(m.width, m.height);
      } else if (m.type === "error" && o.onError) o.onError(m.message);
      return;
    }
    void createImageBitmap(e.data).then((img) => {
      const w = img.width;
      const h = img.height;
      setRemote(w, h);
      ctx?.drawImage(img, 0, 0);
      img.close();
      frames++;
      box.dataset.frames = String(frames);
      box.dataset.frameSize = `${w}x${h}`;
      if (frames === 1 && o.onFirstFrame) o.onFirstFrame();
    });
  };
  ws.onclose = (e) => {
    ro.disconnect();
    clearTimeout(timer);
    if (o.onClose) o.onClose(e.reason || "");
  };
  const pos = (e: MouseEvent): { x: number; y: number } => {
    const r = c.getBoundingClientRect();
    const x = ((e.clientX - r.left) * c.width) / (r.width || 1);
    const y = ((e.clientY - r.top) * c.height) / (r.height || 1);
    return { x: Math.max(0, Math.min(c.width, x)), y: Math.max(0, Math.min(c.height, y)) };
  };
  const btn = (b: number) => BUTTONS[b] ?? "left";
  const mods = (e: MouseEvent | KeyboardEvent): number =>
    (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  const ptr =
    (action: "down" | "up" | "move") =>
    (e: MouseEvent): void => {
      if (action === "down") c.focus();
      const p = pos(e);
      send({
        type: "pointer",
        action,
        x: p.x,
        y: p.y,
        button: action === "move" ? "none" : btn(e.button),
        clickCount: action === "move" ? 0 : Math.min(3, e.detail || 1),
        modifiers: mods(e),
      });
    };
  c.onmousedown = ptr("down");
  c.onmouseup = ptr("up");
  c.onmousemove = ptr("move");
  c.onwheel = (e) => {
    e.preventDefault();
    const p = pos(e);
    send({ type: "wheel", x: p.x, y: p.y, deltaX: e.deltaX, deltaY: e.deltaY });
  };
  c.oncontextmenu = (e) => {
    e.preventDefault();
  };
  c.onkeydown = (e) => {
    e.preventDefault();
    send({
      type: "key",
      action: "down",
      key: e.key.slice(0, LIMITS.maxKey),
      code: e.code.slice(0, LIMITS.maxKey),
      text: e.key.length === 1 ? e.key : undefined,
      modifiers: mods(e),
    });
  };
  c.onkeyup = (e) => {
    e.preventDefault();
    send({
      type: "key",
      action: "up",
      key: e.key.slice(0, LIMITS.maxKey),
      code: e.code.slice(0, LIMITS.maxKey),
      modifiers: mods(e),
    });
  };
  c.addEventListener("paste", (e) => {
    const t = e.clipboardData?.getData("text");
    if (t) send({ type: "text", text: t.slice(0, LIMITS.maxText) });
  });
  return {
    close: () => {
      ro.disconnect();
      clearTimeout(timer);
      ws.close();
    },
    fit,
  };
}
