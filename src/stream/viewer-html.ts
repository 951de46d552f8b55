/** A minimal viewer: draws JPEG frames on a canvas and sends bounded input back. */
export const VIEWER_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>ccb stream</title>
<style>html,body{margin:0;height:100%;background:#1e1e1e}canvas{display:block;outline:none}#s{position:fixed;top:4px;right:8px;color:#aaa;font:12px sans-serif}</style>
</head><body><canvas id="c" tabindex="0"></canvas><div id="s">connecting…</div>
<script>
const params = new URLSearchParams(location.search);
const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/stream?token=" + encodeURIComponent(params.get("token") || "");
const c = document.getElementById("c"), ctx = c.getContext("2d"), s = document.getElementById("s");
const ws = new WebSocket(url); ws.binaryType = "blob";
const send = (m) => ws.readyState === 1 && ws.send(JSON.stringify(m));
ws.onmessage = async (e) => {
  if (typeof e.data === "string") { const m = JSON.parse(e.data); if (m.type === "hello" || m.type === "resized") { c.width = m.width; c.height = m.height; s.textContent = ""; } if (m.type === "error") s.textContent = m.message; return; }
  const img = await createImageBitmap(e.data); ctx.drawImage(img, 0, 0); img.close();
};
ws.onclose = (e) => { s.textContent = "disconnected" + (e.reason ? ": " + e.reason : ""); };
const pos = (e) => { const r = c.getBoundingClientRect(); return { x: Math.max(0, e.clientX - r.left), y: Math.max(0, e.clientY - r.top) }; };
const btn = (b) => ["left", "middle", "right"][b] || "left";
const mods = (e) => (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
c.onmousedown = (e) => { c.focus(); send({ type: "pointer", action: "down", ...pos(e), button: btn(e.button), clickCount: e.detail || 1, modifiers: mods(e) }); };
c.onmouseup = (e) => send({ type: "pointer", action: "up", ...pos(e), button: btn(e.button), clickCount: e.detail || 1, modifiers: mods(e) });
c.onmousemove = (e) => send({ type: "pointer", action: "move", ...pos(e), button: "none", clickCount: 0, modifiers: mods(e) });
c.onwheel = (e) => { e.preventDefault(); send({ type: "wheel", ...pos(e), deltaX: e.deltaX, deltaY: e.deltaY }); };
c.oncontextmenu = (e) => e.preventDefault();
c.onkeydown = (e) => { e.preventDefault(); send({ type: "key", action: "down", key: e.key, code: e.code, ...(e.key.length === 1 ? { text: e.key } : {}), modifiers: mods(e) }); };
c.onkeyup = (e) => { e.preventDefault(); send({ type: "key", action: "up", key: e.key, code: e.code, modifiers: mods(e) }); };
c.addEventListener("paste", (e) => { const t = e.clipboardData.getData("text"); if (t) send({ type: "text", text: t.slice(0, 4096) }); });
</script></body></html>`;
