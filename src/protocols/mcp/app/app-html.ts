import { CCB_VERSION } from "../../../core/version.ts";
import { pageScript } from "../../../platform/page-scripts.ts";
import { appViewScript } from "./view-script.ts";

/** How long the embedded tier waits for the workbench's liveness message before showing the browser card. */
export const ALIVE_TIMEOUT_MS = 60_000;

/** `</script` inside an inline script would end it: escaped (valid in JS strings, regexes and templates). */
const inline = (js: string): string => js.replace(/<\/(script)/gi, "<\\/$1");

/**
 * The MCP App document (`ui://ccb/workbench.html`): self-contained HTML with the view
 * (src/protocols/mcp/app/view/main.ts, on the ext-apps SDK's `App`, bundled at build time) and the
 * stream client inline; it loads nothing from outside. See the view for the three tiers.
 */
function render(): string {
  const config = JSON.stringify({ aliveTimeoutMs: ALIVE_TIMEOUT_MS, version: CCB_VERSION });
  return `<!doctype html>
<html data-state="waiting" data-display-mode="inline"><head><meta charset="utf-8"><title>ccb workbench</title>
<meta name="referrer" content="no-referrer">
<style>
:root{color-scheme:dark;--bg:var(--color-background-primary,#1e1e1e);--fg:var(--color-text-primary,#ccc)}
html[data-theme=light]{color-scheme:light;--bg:var(--color-background-primary,#f3f3f3);--fg:var(--color-text-primary,#333)}
html,body{margin:0;background:var(--bg);color:var(--fg);font:14px system-ui,sans-serif;overflow:hidden}
#app{display:flex;flex-direction:column;width:100%;height:100vh;min-height:480px}
#bar{flex:0 0 28px;display:flex;align-items:center;justify-content:flex-end;padding:0 6px;box-sizing:border-box}
#wrap{position:relative;flex:1 1 auto;min-height:0;overflow:hidden}
iframe{position:absolute;inset:0;width:100%;height:100%;border:0;display:block}
canvas{position:absolute;display:block;outline:none}
#card{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;padding:24px;box-sizing:border-box}
#card div{max-width:560px;line-height:1.5}
#card h2{margin:0 0 8px;font-size:16px}
button{background:#0e639c;color:#fff;border:0;padding:6px 14px;border-radius:2px;cursor:pointer;margin-right:12px}
#fullscreen{margin:0;padding:2px 10px}
a{color:#3794ff}
.hidden{display:none!important}
</style></head>
<body><div id="app"><div id="bar" class="hidden"><button id="fullscreen">Full screen</button></div><div id="wrap">
<div id="card"><div><h2 id="title">Waiting for the workbench…</h2><p id="reason"></p><p id="actions" class="hidden"><button id="open">Open in browser</button><a id="link" target="_blank" rel="noopener noreferrer">open the workbench in a new tab</a></p><p id="offer" class="hidden"><button id="stream-here">Show it here</button>as a live picture streamed from ccb (a server-side browser shows the workbench).</p></div></div>
</div></div>
<script>var CCB_APP = ${config};
${inline(pageScript("stream-client"))}</script>
<script>${inline(appViewScript())}</script></body></html>`;
}

let cached: string | undefined;

/** The App document, rendered once per process. */
export function workbenchAppHtml(): string {
  cached ??= render();
  return cached;
}
