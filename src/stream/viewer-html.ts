import { pageScript } from "../platform/page-scripts.ts";

let cached: string | undefined;

/**
 * The `ccb stream` viewer: the remote page on a canvas that fits the window (its script is
 * viewer/page.ts, bundled at build). `</script` inside the script would end it: escaped.
 */
export function viewerHtml(): string {
  cached ??= `<!doctype html>
<html><head><meta charset="utf-8"><title>ccb stream</title>
<style>html,body{margin:0;height:100%;overflow:hidden;background:#1e1e1e}#box{position:fixed;inset:0;overflow:hidden}canvas{display:block;outline:none}#s{position:fixed;top:4px;right:8px;color:#aaa;font:12px sans-serif}</style>
</head><body><div id="box"><canvas id="c" tabindex="0"></canvas></div><div id="s">connecting…</div>
<script>${pageScript("stream-viewer").replace(/<\/(script)/gi, "<\\/$1")}</script></body></html>`;
  return cached;
}
