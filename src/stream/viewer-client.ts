import { LIMITS } from "./protocol.ts";

/** How long the container must keep a size before the remote page is resized to it. */
export const RESIZE_DEBOUNCE_MS = 250;

/**
 * Browser-side stream client shared by the `ccb stream` viewer page and the MCP App's stream
 * tier, as a script that defines `ccbStream(options)`. The canvas keeps the remote page's pixel
 * size (taken from each frame) and is scaled by CSS to fit its container with the aspect kept,
 * centred; pointer and wheel coordinates are mapped back through that scale; a container resize
 * refits at once and, once the size has held for RESIZE_DEBOUNCE_MS, asks the server to resize the
 * remote page to the container (within the protocol's bounds). The state is mirrored in
 * `container.dataset` (remoteWidth/remoteHeight/frames/frameSize) for tests and debugging.
 *
 * options: { url, canvas, container, onFirstFrame(), onClose(reason), onError(message) }
 */
export const STREAM_CLIENT_JS = `
function ccbStream(o) {
  "use strict";
  var c = o.canvas, box = o.container, ctx = c.getContext("2d");
  var frames = 0, timer = 0, asked = "";
  var ws = new WebSocket(o.url);
  ws.binaryType = "blob";
  var send = function (m) { if (ws.readyState === 1) ws.send(JSON.stringify(m)); };
  var clamp = function (v, lo, hi) { return Math.max(lo, Math.min(hi, Math.floor(v))); };
  function fit() {
    var cw = box.clientWidth, ch = box.clientHeight;
    if (!c.width || !c.height || !cw || !ch) return;
    var s = Math.min(cw / c.width, ch / c.height);
    var w = Math.floor(c.width * s), h = Math.floor(c.height * s);
    c.style.position = "absolute";
    c.style.width = w + "px";
    c.style.height = h + "px";
    c.style.left = Math.floor((cw - w) / 2) + "px";
    c.style.top = Math.floor((ch - h) / 2) + "px";
  }
  function setRemote(w, h) {
    if (c.width === w && c.height === h) return;
    c.width = w; c.height = h;
    box.dataset.remoteWidth = String(w);
    box.dataset.remoteHeight = String(h);
    fit();
  }
  function wanted() {
    return { width: clamp(box.clientWidth, ${LIMITS.minSize}, ${LIMITS.maxWidth}), height: clamp(box.clientHeight, ${LIMITS.minSize}, ${LIMITS.maxHeight}) };
  }
  function askResize() {
    var want = wanted(), key = want.width + "x" + want.height;
    if (key === asked || (c.width === want.width && c.height === want.height)) return;
    asked = key;
    send({ type: "resize", width: want.width, height: want.height });
  }
  var ro = new ResizeObserver(function () {
    fit();
    clearTimeout(timer);
    timer = setTimeout(askResize, ${RESIZE_DEBOUNCE_MS});
  });
  ro.observe(box);
  ws.onmessage = function (e) {
    if (typeof e.data === "string") {
      var m = JSON.parse(e.data);
      if (m.type === "hello") { setRemote(m.width, m.height); askResize(); }
      else if (m.type === "resized") { asked = ""; setRemote(m.width, m.height); }
      else if (m.type === "error" && o.onError) o.onError(m.message);
      return;
    }
    createImageBitmap(e.data).then(function (img) {
      var w = img.width, h = img.height;
      setRemote(w, h);
      ctx.drawImage(img, 0, 0);
      img.close();
      frames++;
      box.dataset.frames = String(frames);
      box.dataset.frameSize = w + "x" + h;
      if (frames === 1 && o.onFirstFrame) o.onFirstFrame();
    });
  };
  ws.onclose = function (e) { ro.disconnect(); clearTimeout(timer); if (o.onClose) o.onClose(e.reason || ""); };
  var pos = function (e) {
    var r = c.getBoundingClientRect();
    var x = (e.clientX - r.left) * c.width / (r.width || 1), y = (e.clientY - r.top) * c.height / (r.height || 1);
    return { x: Math.max(0, Math.min(c.width, x)), y: Math.max(0, Math.min(c.height, y)) };
  };
  var btn = function (b) { return ["left", "middle", "right"][b] || "left"; };
  var mods = function (e) { return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0); };
  var ptr = function (action) {
    return function (e) {
      if (action === "down") c.focus();
      var p = pos(e);
      send({ type: "pointer", action: action, x: p.x, y: p.y, button: action === "move" ? "none" : btn(e.button), clickCount: action === "move" ? 0 : Math.min(3, e.detail || 1), modifiers: mods(e) });
    };
  };
  c.onmousedown = ptr("down");
  c.onmouseup = ptr("up");
  c.onmousemove = ptr("move");
  c.onwheel = function (e) { e.preventDefault(); var p = pos(e); send({ type: "wheel", x: p.x, y: p.y, deltaX: e.deltaX, deltaY: e.deltaY }); };
  c.oncontextmenu = function (e) { e.preventDefault(); };
  c.onkeydown = function (e) { e.preventDefault(); send({ type: "key", action: "down", key: e.key.slice(0, ${LIMITS.maxKey}), code: e.code.slice(0, ${LIMITS.maxKey}), text: e.key.length === 1 ? e.key : undefined, modifiers: mods(e) }); };
  c.onkeyup = function (e) { e.preventDefault(); send({ type: "key", action: "up", key: e.key.slice(0, ${LIMITS.maxKey}), code: e.code.slice(0, ${LIMITS.maxKey}), modifiers: mods(e) }); };
  c.addEventListener("paste", function (e) { var t = e.clipboardData.getData("text"); if (t) send({ type: "text", text: t.slice(0, ${LIMITS.maxText}) }); });
  return { close: function () { ro.disconnect(); clearTimeout(timer); ws.close(); }, fit: fit };
}
`;
