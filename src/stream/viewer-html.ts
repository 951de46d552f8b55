import { STREAM_CLIENT_JS } from "./viewer-client.ts";

/** The `ccb stream` viewer: the remote page on a canvas that fits the window (see viewer-client.ts). */
export const VIEWER_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>ccb stream</title>
<style>html,body{margin:0;height:100%;overflow:hidden;background:#1e1e1e}#box{position:fixed;inset:0;overflow:hidden}canvas{display:block;outline:none}#s{position:fixed;top:4px;right:8px;color:#aaa;font:12px sans-serif}</style>
</head><body><div id="box"><canvas id="c" tabindex="0"></canvas></div><div id="s">connecting…</div>
<script>${STREAM_CLIENT_JS}
(function () {
  var params = new URLSearchParams(location.search);
  var s = document.getElementById("s");
  ccbStream({
    url: (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/stream?token=" + encodeURIComponent(params.get("token") || ""),
    canvas: document.getElementById("c"),
    container: document.getElementById("box"),
    onFirstFrame: function () { s.textContent = ""; },
    onError: function (message) { s.textContent = message; },
    onClose: function (reason) { s.textContent = "disconnected" + (reason ? ": " + reason : ""); }
  });
})();
</script></body></html>`;
