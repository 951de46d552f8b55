import type { Logger } from "../core/log.ts";
import { launchChromium } from "../platform/chromium.ts";

export interface HeadlessClientOptions {
  /** The workbench link; a promise starts Chromium before the runtime answers (it navigates once it resolves). */
  url: string | Promise<string>;
  /** Told when the workbench page loaded (the start's timeline). */
  onLoad?: () => void;

  log: Logger;
  /** Default: CHROME_PATH, else the usual install paths. */
  chromePath?: string;
  /**
   * Whether the page reports itself hidden and unfocused (default true: ccb's own client is
   * nobody's window and serves only while no person's tab does). false opens it like a person's
   * visible foreground tab (tests).
   */
  hidden?: boolean;
  env?: NodeJS.ProcessEnv;
  /** More Chromium flags (tuning.ts headlessChromiumFlags). */
  extraFlags?: readonly string[];
}

export interface HeadlessClient {
  pid: number;
  /** The account Chromium runs as (never 0 unless CCB_CHROMIUM_NO_SANDBOX=1). */
  uid: number;
  sandbox: boolean;
  /** Evaluate an expression in the page (tests: document.title). */
  evaluate(expression: string): Promise<unknown>;
  /** Reload the page (same URL; the session cookie opens it again). */
  reload(): Promise<void>;
  /**
   * Leave the workbench: the page navigates away, so the workbench shuts down as a closed tab does
   * and tells the runtime its extension host can end now (a killed browser leaves it to the
   * runtime's reconnection grace, hours). Then close.
   */
  leave(): Promise<void>;
  /** Resolves when its browser exited (killed, crashed or closed). */
  exited: Promise<void>;
  close(): Promise<void>;
}

/** How long a page may take to leave the workbench before its browser is closed anyway. */
const LEAVE_TIMEOUT_MS = 5_000;

/**
 * Opens the workbench in headless Chromium so an extension host (and so the bridge) exists with
 * nobody watching. The launcher's root policy applies (src/platform/chromium.ts).
 */
export async function startHeadlessClient(o: HeadlessClientOptions): Promise<HeadlessClient> {
  let leaving = false;
  const chrome = await launchChromium({
    url: o.url,
    chromePath: o.chromePath,
    hidden: o.hidden ?? true,
    onLoad: () => {
      if (!leaving) o.onLoad?.();
    },
    extraFlags: o.extraFlags,
    log: o.log,
    ...(o.env ? { env: o.env } : {}),
  });
  o.log.info(
    `headless client: Chromium ${chrome.pid} (uid ${chrome.uid}, sandbox ${chrome.sandbox ? "on" : "OFF"}) opened the workbench`,
  );
  return {
    pid: chrome.pid,
    uid: chrome.uid,
    sandbox: chrome.sandbox,
    async evaluate(expression) {
      const r = (await chrome.page.send("Runtime.evaluate", { expression, returnByValue: true })) as {
        result?: { value?: unknown };
      };
      return r.result?.value;
    },
    async reload() {
      await chrome.page.send("Page.reload", { ignoreCache: false });
    },
    async leave() {
      leaving = true;
      // Page.navigate answers once the new document committed: the workbench's unload has run.
      await Promise.race([
        chrome.page.send("Page.navigate", { url: "about:blank" }),
        new Promise((r) => setTimeout(r, LEAVE_TIMEOUT_MS).unref()),
      ]);
    },
    exited: chrome.exited,
    close: () => chrome.close(),
  };
}
