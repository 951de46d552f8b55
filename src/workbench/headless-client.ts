import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";

export interface HeadlessClientOptions {
  url: string;
  log: Logger;
  /** Default: CHROME_PATH, else Debian's /usr/bin/chromium. */
  chromePath?: string;
  /** Chromium's sandbox cannot run as root: only an explicit opt-in (CCB_CHROMIUM_NO_SANDBOX=1) disables it. */
  noSandbox?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface HeadlessClient {
  pid: number;
  /** Chrome DevTools port; 0: DevTools runs over a pipe, so Chromium exits when ccb does. */
  port: number;
  close(): Promise<void>;
}

/** Flags from the measured recipe: headless, quiet on a closed network, fixed window size. */
export const CHROMIUM_FLAGS = [
  "--headless=new",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-default-apps",
  "--disable-extensions",
  "--mute-audio",
  "--window-size=1280,800",
  "--remote-debugging-address=127.0.0.1",
  // DevTools over a pipe instead of a port: when ccb dies (even by SIGKILL) the pipe closes and Chromium exits with it.
  "--remote-debugging-pipe",
];

/**
 * Opens the workbench in headless Chromium so an extension host (and so the bridge) exists with
 * nobody watching. A fresh profile folder per launch, removed on close.
 */
export async function startHeadlessClient(o: HeadlessClientOptions): Promise<HeadlessClient> {
  const env = o.env ?? process.env;
  const noSandbox = o.noSandbox ?? /^(1|true|yes)$/i.test(env.CCB_CHROMIUM_NO_SANDBOX ?? "");
  if (process.getuid?.() === 0 && !noSandbox) {
    throw new CcbError("UNSUPPORTED", "Headless Chromium cannot use its sandbox when ccb runs as root.", {
      hint: "Run ccb as a normal user, or accept the risk explicitly with CCB_CHROMIUM_NO_SANDBOX=1.",
    });
  }
  const { launch } = await import("chrome-launcher");
  const profile = mkdtempSync(join(tmpdir(), "ccb-chromium-"));
  const flags = [...CHROMIUM_FLAGS, ...(noSandbox ? ["--no-sandbox"] : [])];
  let chrome;
  try {
    chrome = await launch({
      chromePath: o.chromePath ?? env.CHROME_PATH ?? "/usr/bin/chromium",
      chromeFlags: flags,
      userDataDir: profile,
      startingUrl: o.url,
      logLevel: "silent",
      handleSIGINT: false,
      envVars: { ...env, HOME: profile, TMPDIR: profile, XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile },
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw new CcbError("UNSUPPORTED", `Could not start headless Chromium: ${(err as Error).message}`, {
      hint: "Install Chromium (Debian: apt-get install chromium) or set CHROME_PATH.",
    });
  }
  o.log.info(`headless client: Chromium ${chrome.pid} opened the workbench`);
  const proc = chrome.process;
  const exited = new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve();
    else proc.once("exit", () => resolve());
  });
  const onExit = () => chrome.kill();
  process.on("exit", onExit);
  let closing: Promise<void> | undefined;
  return {
    pid: chrome.pid,
    port: chrome.port,
    close() {
      closing ??= (async () => {
        process.off("exit", onExit);
        chrome.kill();
        const t = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(t);
        rmSync(profile, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
