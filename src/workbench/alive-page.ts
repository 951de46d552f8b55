/// <reference lib="dom" />
/**
 * The liveness script as it runs in every workbench page (browser code, bundled at build by
 * scripts/page-scripts.mjs; served by alive.ts at ALIVE_SCRIPT_PATH with "ALIVE_KEY" replaced by the
 * gateway's proof key). Two jobs:
 * - framed by the MCP App: posts `{type:"ccb:workbench-alive"}` to `window.parent` once
 *   `.monaco-workbench` exists after load;
 * - every page: asks for the runtime's epoch every EPOCH_POLL_MS with a fresh nonce and reloads when
 *   it changed (the runtime restarted: the page's connection cannot resume on a new server, so VS
 *   Code would otherwise wait for a person to click Reload); when ccb itself is gone (twice no proven
 *   answer), it says so at once in a banner, with how to get a fresh link.
 * An answer counts only with an HMAC of the nonce and epoch under the key this script carries (got
 * from the gateway over the cookie session): whoever binds the port after the gateway died cannot
 * forge one, so it can neither reload the tab onto its own page nor hide the banner. Without
 * WebCrypto (not a secure context) nothing is proven: the page never reloads by itself.
 *
 * The paths are written out where they are used (a bundle keeps imported strings as variables):
 * they are alive.ts's ALIVE_SCRIPT_PATH and EPOCH_PATH, which test/unit/workbench/health.test.ts
 * checks the served script asks for.
 */

/** How often every workbench page asks for the epoch. */
const EPOCH_POLL_MS = 2000;

interface EpochAnswer {
  epoch?: unknown;
  proof?: unknown;
}

(() => {
  const me = (document.currentScript as HTMLScriptElement | null)?.src;
  if (window.parent !== window) {
    let sent = false;
    const check = (): boolean => {
      if (sent || !document.querySelector(".monaco-workbench")) return false;
      sent = true;
      window.parent.postMessage({ type: "ccb:workbench-alive" }, "*");
      return true;
    };
    const watch = (): void => {
      if (check()) return;
      const mo = new MutationObserver(() => {
        if (check()) mo.disconnect();
      });
      mo.observe(document.documentElement, { childList: true, subtree: true });
    };
    if (document.readyState === "complete") watch();
    else window.addEventListener("load", watch);
  }
  if (!me) return;
  // biome-ignore lint/style/useTemplate: the two paths stay literal strings in the served text (see the top)
  const url = me.slice(0, me.indexOf("/__ccb/alive.js")) + "/__ccb/epoch";
  let first: number | null = null;
  let misses = 0;
  let banner: HTMLDivElement | null = null;
  const subtle: SubtleCrypto | undefined = window.crypto?.subtle;
  const bytes = (hex: string): Uint8Array<ArrayBuffer> => {
    const a = new Uint8Array(hex.length / 2);
    for (let i = 0; i < a.length; i++) a[i] = Number.parseInt(hex.substr(i * 2, 2), 16);
    return a;
  };
  // "ALIVE_KEY" is replaced with the gateway's proof key (hex) when the script is served (alive.ts).
  const key = subtle
    ? subtle.importKey("raw", bytes("ALIVE_KEY"), { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
    : null;
  const nonce = (): string => {
    const b = new Uint8Array(16);
    window.crypto.getRandomValues(b);
    return Array.from(b, (x) => (x + 256).toString(16).slice(1)).join("");
  };
  const proven = (n: string, j: EpochAnswer | null): Promise<boolean> => {
    if (!key || !subtle || !j || typeof j.epoch !== "number" || typeof j.proof !== "string")
      return Promise.resolve(false);
    const { epoch, proof } = j;
    if (!/^[0-9a-f]{64}$/.test(proof)) return Promise.resolve(false);
    return key.then((k) => subtle.verify("HMAC", k, bytes(proof), new TextEncoder().encode(`ccb-epoch:${n}:${epoch}`)));
  };
  const tell = (gone: boolean): void => {
    if (!gone) {
      if (banner) {
        banner.remove();
        banner = null;
      }
      return;
    }
    if (banner) return;
    banner = document.createElement("div");
    banner.id = "ccb-gone";
    banner.setAttribute("role", "alert");
    banner.style.cssText =
      "position:fixed;z-index:2147483647;left:0;right:0;top:0;padding:10px 14px;background:#a1260d;color:#fff;font:14px sans-serif";
    banner.textContent =
      "This ccb workbench has stopped: what you type here is no longer kept. Get a fresh link with `ccb workbench link` (or from your agent's vscode_open).";
    document.documentElement.appendChild(banner);
  };
  const poll = (): void => {
    const n = nonce();
    fetch(`${url}?n=${n}`, { cache: "no-store", credentials: "same-origin", redirect: "error" })
      .then((r) => {
        if (!r.ok) throw new Error(String(r.status));
        return r.json() as Promise<EpochAnswer | null>;
      })
      .then((j) =>
        proven(n, j).then((ok) => {
          if (!ok) throw new Error("unproven");
          return j as { epoch: number };
        }),
      )
      .then(
        (j) => {
          misses = 0;
          tell(false);
          if (first === null) first = j.epoch;
          else if (j.epoch !== first && j.epoch > 0) {
            location.reload();
            return;
          }
          setTimeout(poll, EPOCH_POLL_MS);
        },
        () => {
          if (++misses >= 2) tell(true);
          setTimeout(poll, EPOCH_POLL_MS);
        },
      );
  };
  poll();
})();
