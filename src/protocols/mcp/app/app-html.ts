import { STREAM_CLIENT_JS } from "../../../stream/viewer-client.ts";

/**
 * The MCP App document (`ui://ccb/workbench.html`): self-contained HTML + JS, no external loads.
 * It speaks the MCP Apps postMessage protocol (JSON-RPC 2.0 with the host: ui/initialize,
 * ui/notifications/initialized, ui/notifications/tool-result, ui/open-link) and shows the
 * workbench in one of three tiers, from the tool result's `_meta` (never from model-visible text):
 *
 * - embedded (default): an iframe to `_meta["ccb/workbench"].url`, declared successful only after
 *   the injected `{type:"ccb:workbench-alive"}` message arrives from that frame; a CSP-blocked
 *   frame fires no useful event, so a timeout falls back to the browser card;
 * - stream (`_meta["ccb/stream"]`, only when the server runs with --render-mode stream): JPEG
 *   frames of a server-side Chromium drawn on a canvas, input sent back over the same WebSocket;
 *   when the stream could not start (`{error}`), the browser card says so: no silent iframe;
 * - browser: an honest card with the reason, a ui/open-link request to the host and a plain link.
 *
 * State changes are reported to the host as `notifications/message` (logger "ccb-app") and kept in
 * `document.documentElement.dataset.state` (waiting, probing, embedded, stream, browser).
 */
export const ALIVE_TIMEOUT_MS = 60_000;

export const WORKBENCH_APP_HTML = `<!doctype html>
<html data-state="waiting"><head><meta charset="utf-8"><title>ccb workbench</title>
<meta name="referrer" content="no-referrer">
<style>
html,body{margin:0;height:100%;background:#1e1e1e;color:#ccc;font:14px system-ui,sans-serif}
#wrap{position:relative;width:100%;height:100vh;min-height:480px}
html,body{overflow:hidden}
iframe{position:absolute;inset:0;width:100%;height:100%;border:0;display:block}
canvas{position:absolute;display:block;outline:none}
#card{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;padding:24px;box-sizing:border-box}
#card div{max-width:560px;line-height:1.5}
#card h2{margin:0 0 8px;font-size:16px;color:#eee}
button{background:#0e639c;color:#fff;border:0;padding:6px 14px;border-radius:2px;cursor:pointer;margin-right:12px}
a{color:#3794ff}
.hidden{display:none!important}
</style></head>
<body><div id="wrap">
<div id="card"><div><h2 id="title">Waiting for the workbench…</h2><p id="reason"></p><p id="actions" class="hidden"><button id="open">Open in browser</button><a id="link" target="_blank" rel="noopener noreferrer">open the workbench in a new tab</a></p></div></div>
</div>
<script>${STREAM_CLIENT_JS}
(function () {
  "use strict";
  var ALIVE_TIMEOUT_MS = ${ALIVE_TIMEOUT_MS};
  var wrap = document.getElementById("wrap");
  var card = document.getElementById("card");
  var nextId = 1;
  var pending = {};
  var hostCapabilities = {};
  var shown = false;

  function post(msg) { window.parent.postMessage(msg, "*"); }
  function request(method, params) {
    var id = nextId++;
    post({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function notify(method, params) { post({ jsonrpc: "2.0", method: method, params: params }); }
  function setState(state, detail) {
    document.documentElement.dataset.state = state;
    notify("notifications/message", { level: state === "browser" ? "warning" : "info", logger: "ccb-app", data: { state: state, detail: detail || "" } });
  }
  function showCard(title, reason, url) {
    document.getElementById("title").textContent = title;
    document.getElementById("reason").textContent = reason;
    var actions = document.getElementById("actions");
    if (url) {
      document.getElementById("link").href = url;
      document.getElementById("open").onclick = function () {
        request("ui/open-link", { url: url }).then(function (r) {
          if (r && r.isError) document.getElementById("reason").textContent = reason + " The host refused to open the link; use the plain link.";
        }, function () {
          document.getElementById("reason").textContent = reason + " The host cannot open links; use the plain link.";
        });
      };
      actions.classList.remove("hidden");
    } else actions.classList.add("hidden");
    card.classList.remove("hidden");
  }
  function browser(reason, url) {
    showCard(url ? "Open the workbench in a browser tab" : "No workbench", reason, url);
    setState("browser", reason);
  }

  function frameRefused(origin) {
    var csp = hostCapabilities && hostCapabilities.sandbox && hostCapabilities.sandbox.csp;
    if (!csp || !Array.isArray(csp.frameDomains)) return false;
    return csp.frameDomains.indexOf(origin) < 0;
  }

  function embed(url) {
    var origin = new URL(url).origin;
    if (frameRefused(origin)) {
      browser("The host does not allow this App to frame " + origin + " (frameDomains), so the workbench cannot be shown here.", url);
      return;
    }
    setState("probing", origin);
    var frame = document.createElement("iframe");
    frame.title = "workbench";
    frame.allow = "clipboard-read; clipboard-write";
    var done = false;
    var timer = setTimeout(function () {
      if (done) return;
      done = true;
      frame.remove();
      browser("The workbench did not report in within " + Math.round(ALIVE_TIMEOUT_MS / 1000) + " s: the host may block frames from " + origin + ", or the workbench is not reachable from this browser.", url);
    }, ALIVE_TIMEOUT_MS);
    window.addEventListener("message", function (e) {
      if (done || e.source !== frame.contentWindow || !e.data || e.data.type !== "ccb:workbench-alive") return;
      done = true;
      clearTimeout(timer);
      card.classList.add("hidden");
      setState("embedded", origin);
    });
    frame.src = url;
    wrap.appendChild(frame);
  }

  function stream(s, workbenchUrl) {
    setState("probing", "stream");
    var canvas = document.createElement("canvas");
    canvas.tabIndex = 0;
    wrap.appendChild(canvas);
    try {
      ccbStream({
        url: s.url + "?token=" + encodeURIComponent(s.token),
        canvas: canvas,
        container: wrap,
        onFirstFrame: function () { card.classList.add("hidden"); setState("stream", "first frame"); },
        onClose: function (reason) {
          canvas.remove();
          browser("The stream ended" + (reason ? ": " + reason : " (the server refused or closed it)") + ".", workbenchUrl);
        }
      });
    } catch (err) {
      canvas.remove();
      browser("The stream could not be opened: " + err.message, workbenchUrl);
    }
  }

  function onToolResult(result) {
    if (shown) return;
    var meta = (result && result._meta) || {};
    var wb = meta["ccb/workbench"];
    var s = meta["ccb/stream"];
    if (!wb || typeof wb.url !== "string") {
      if (result && result.isError) return browser("vscode_open failed: no workbench is running, so there is no editor to show.", "");
      return browser("The tool result carries no workbench address (the host did not pass the result metadata to this App).", "");
    }
    shown = true;
    if (s && typeof s.error === "string") browser("Stream mode is on, but " + s.error.charAt(0).toLowerCase() + s.error.slice(1), wb.url);
    else if (s && typeof s.url === "string" && typeof s.token === "string") stream(s, wb.url);
    else embed(wb.url);
  }

  window.addEventListener("message", function (e) {
    if (e.source !== window.parent) return;
    var m = e.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && !m.method) {
      var p = pending[m.id];
      if (!p) return;
      delete pending[m.id];
      if (m.error) p.reject(new Error(m.error.message || "host error")); else p.resolve(m.result);
      return;
    }
    if (m.method === "ui/notifications/tool-result") onToolResult(m.params);
    else if (m.method === "ui/resource-teardown" && m.id !== undefined) post({ jsonrpc: "2.0", id: m.id, result: {} });
    else if (m.id !== undefined) post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  });

  request("ui/initialize", {
    appInfo: { name: "ccb-workbench", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] },
    protocolVersion: "2026-01-26"
  }).then(function (r) {
    hostCapabilities = (r && r.hostCapabilities) || {};
    notify("ui/notifications/initialized", {});
  }, function (err) {
    browser("The host did not complete the MCP Apps handshake: " + err.message, "");
  });
})();
</script></body></html>`;
