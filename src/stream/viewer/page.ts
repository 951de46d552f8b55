/// <reference lib="dom" />
import { ccbStream } from "./client.ts";

/**
 * The `ccb stream` viewer page's script (viewer-html.ts): the remote page on the canvas, fitted to the
 * window, over `/stream` with the token the page's own URL carries (the browser's WebSocket cannot
 * set headers).
 */
const params = new URLSearchParams(location.search);
const status = document.getElementById("s") as HTMLElement;
ccbStream({
  url: `${location.protocol === "https:" ? "wss://" : "ws://"}${location.host}/stream?token=${encodeURIComponent(params.get("token") || "")}`,
  canvas: document.getElementById("c") as HTMLCanvasElement,
  container: document.getElementById("box") as HTMLElement,
  onFirstFrame: () => {
    status.textContent = "";
  },
  onError: (message) => {
    status.textContent = message;
  },
  onClose: (reason) => {
    status.textContent = `disconnected${reason ? `: ${reason}` : ""}`;
  },
});
