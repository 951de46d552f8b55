import { type ChildProcess, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { childEnv } from "../core/child-env.ts";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { CdpPipe, type CdpSession } from "./cdp-pipe.ts";
import { claimDir, removeStale } from "./state-folders.ts";

/**
 * The one Chromium launcher (headless client, `ccb stream`, the MCP App stream tier), with one
 * root policy: as root, Chromium runs as an unprivileged account (CCB_CHROMIUM_USER, default
 * `nobody`) with its sandbox ON. `--no-sandbox` is used only when asked explicitly, through the
 * single opt-out CCB_CHROMIUM_NO_SANDBOX=1 (the CLI's `ccb stream --no-sandbox` sets the same
 * option). DevTools runs over a pipe, never a port.
 * Why: a DevTools port lets any local process or user drive the browser unauthenticated; a pipe is ccb's alone.
 */
export interface ChromiumOptions {
  /**
   * The page to open. A promise lets Chromium start while what it will show is still starting
   * (the workbench's runtime): it opens about:blank and navigates once the URL is known; a
   * rejection stops it.
   */
  url: string | Promise<string>;
  /** Told when the page fired its load event (each navigation). */
  onLoad?: (() => void) | undefined;

  /** Browser binary; default CHROME_PATH, then Debian's /usr/bin/chromium and the usual names. */
  chromePath?: string | undefined;
  width?: number;
  height?: number;
  /** The explicit opt-out; default: CCB_CHROMIUM_NO_SANDBOX=1 in `env`. */
  noSandbox?: boolean | undefined;
  /**
   * true: the page declares itself hidden and unfocused (Page Visibility API and
   * document.hasFocus(), set before any script of the page runs): ccb's own headless client is
   * nobody's window, so its extension host reports no focus and never takes the serving role from
   * a person's tab. false (default): the page is a person's foreground tab, visible and focused
   * (DevTools focus emulation; a headless page otherwise has no focus) — what a stream viewer sees.
   */
  hidden?: boolean;
  /** More flags, after CHROMIUM_FLAGS (the headless client's tuning). */
  extraFlags?: readonly string[] | undefined;
  log: Logger;
  env?: NodeJS.ProcessEnv;
}

export interface Chromium {
  readonly pid: number;
  /** uid Chromium runs as. */
  readonly uid: number;
  readonly sandbox: boolean;
  readonly userDataDir: string;
  /** The DevTools session of the page. */
  readonly page: CdpSession;
  /** The session of a target attached with `flatten` (e.g. an out-of-process frame from `Target.attachedToTarget`). */
  session(sessionId: string): CdpSession;
  /** Resolves when the browser process has exited. */
  readonly exited: Promise<void>;
  /** Stop the browser (its whole process group) and remove its profile. Idempotent. */
  close(): Promise<void>;
}

/** The flags that keep a headless Chromium quiet on a closed network. */
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
  "--password-store=basic",
  "--disable-features=Translate,MediaRouter,OptimizationHints",
  "--remote-debugging-pipe",
];

const HIDDEN_PAGE_SCRIPT = `(() => {
  const get = (v) => ({ configurable: true, get: () => v });
  Object.defineProperty(Document.prototype, "visibilityState", get("hidden"));
  Object.defineProperty(Document.prototype, "hidden", get(true));
  Document.prototype.hasFocus = function hasFocus() { return false; };
})();`;

/** How long the page's server may take to answer the first navigation. */
const PAGE_ANSWER_MS = 60_000;

/** The origin of a URL, for logs and errors (its path and query may carry a one-time token). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(not a URL)";
  }
}

export function findChromium(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    explicit,
    env.CHROME_PATH,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
  ];
  for (const c of candidates) if (c && existsSync(c)) return c;
  throw new CcbError("RUNTIME_UNAVAILABLE", "No Chromium or Chrome was found.", {
    hint: "Install one (Debian: apt-get install chromium) or give its path in CHROME_PATH.",
  });
}

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const f = line.split(":");
      if (f[0] === name && f[2] && f[3]) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export function sandboxOptOut(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true|yes)$/i.test(env.CCB_CHROMIUM_NO_SANDBOX ?? "");
}

export async function launchChromium(o: ChromiumOptions): Promise<Chromium> {
  const env = o.env ?? process.env;
  const chromePath = findChromium(o.chromePath, env);
  const noSandbox = o.noSandbox ?? sandboxOptOut(env);
  const root = process.getuid?.() === 0;
  let drop: { uid: number; gid: number } | undefined;
  if (root && !noSandbox) {
    const name = env.CCB_CHROMIUM_USER || "nobody";
    drop = lookupUser(name);
    if (!drop || drop.uid === 0) {
      throw new CcbError(
        "UNSUPPORTED",
        `ccb runs as root and cannot start Chromium as the unprivileged account "${name}".`,
        {
          hint: "Create that account or set CCB_CHROMIUM_USER to another one; last resort: CCB_CHROMIUM_NO_SANDBOX=1.",
        },
      );
    }
  }
  removeStale(tmpdir(), "ccb-chromium-");
  const profile = mkdtempSync(join(tmpdir(), "ccb-chromium-"));
  claimDir(profile);
  if (drop) chownSync(profile, drop.uid, drop.gid);
  const flags = [
    ...CHROMIUM_FLAGS,
    `--window-size=${o.width ?? 1280},${o.height ?? 800}`,
    `--user-data-dir=${profile}`,
    ...(o.extraFlags ?? []),
  ];
  if (noSandbox) {
    o.log.warn("Chromium runs with --no-sandbox (CCB_CHROMIUM_NO_SANDBOX=1)");
    flags.push("--no-sandbox");
  }
  flags.push("about:blank");
  const child: ChildProcess = spawn(chromePath, flags, {
    stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
    detached: true, // its own process group, stopped as a whole
    env: childEnv(env, {
      extra: {
        HOME: profile,
        TMPDIR: profile,
        XDG_CONFIG_HOME: join(profile, ".config"),
        XDG_CACHE_HOME: join(profile, ".cache"),
      },
    }),
    ...(drop ? { uid: drop.uid, gid: drop.gid } : {}),
  });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  let stderrTail = "";
  if (child.stderr) {
    createInterface({ input: child.stderr }).on("line", (line) => {
      stderrTail = `${stderrTail}${line}\n`.slice(-2000);
      o.log.debug(line);
    });
  }
  const removeProfile = () => rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  let closing: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    closing ??= (async () => {
      const pid = child.pid;
      if (pid && child.exitCode === null && child.signalCode === null) {
        o.log.debug(`stopping Chromium ${pid} (SIGTERM to its process group)`);
        try {
          process.kill(-pid, "SIGTERM");
        } catch {
          // gone
        }
        const t = setTimeout(() => {
          o.log.debug(`Chromium ${pid} did not exit within 3 s of SIGTERM: SIGKILL`);
          try {
            process.kill(-pid, "SIGKILL");
          } catch {
            // gone
          }
        }, 3_000);
        await exited;
        clearTimeout(t);
      }
      removeProfile();
      o.log.debug("Chromium stopped, its profile removed");
    })();
    return closing;
  };
  let pageError: CcbError | undefined;
  try {
    if (!child.pid) throw new Error("spawn failed");
    const cdp = new CdpPipe(child.stdio[3] as Writable, child.stdio[4] as Readable);
    const orExit = <T>(p: Promise<T> | T): Promise<T> =>
      Promise.race([
        p,
        exited.then((): never => {
          throw new Error(`Chromium exited: ${stderrTail.trim().split("\n").slice(-3).join(" ")}`);
        }),
      ]);
    o.log.debug("waiting for Chromium's first page (DevTools over its pipe)");
    const page = await orExit(cdp.attachFirstPage());
    await page.send("Page.enable");
    if (o.hidden) await page.send("Page.addScriptToEvaluateOnNewDocument", { source: HIDDEN_PAGE_SCRIPT });
    else await page.send("Emulation.setFocusEmulationEnabled", { enabled: true });
    if (o.onLoad) {
      const onLoad = o.onLoad;
      page.on("Page.loadEventFired", () => onLoad());
    }
    const url = await orExit(o.url);
    // Page.navigate answers once the page's server answered: a server that takes the connection
    // and never answers would hold the caller forever, silently.
    const origin = originOf(url);
    o.log.debug(`opening the page at ${origin}: waiting for its first answer`);
    let timer: NodeJS.Timeout | undefined;
    const nav = (await orExit(
      Promise.race([
        page.send("Page.navigate", { url }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            pageError = new CcbError(
              "TIMEOUT",
              `The page at ${origin} did not answer within ${PAGE_ANSWER_MS / 1000} s.`,
              { hint: "Check that its server is up and answers at that address (e.g. with curl), then start again." },
            );
            reject(pageError);
          }, PAGE_ANSWER_MS);
        }),
      ]).finally(() => clearTimeout(timer)),
    )) as { errorText?: string };
    // A page that could not be reached shows Chromium's error page (what a viewer then sees): say why here too.
    if (nav.errorText) o.log.warn(`the page at ${origin} did not open: ${nav.errorText}`);
    o.log.debug(`the page at ${origin} answered`);
    return {
      pid: child.pid,
      uid: drop?.uid ?? process.getuid?.() ?? -1,
      sandbox: !noSandbox,
      userDataDir: profile,
      page,
      session: (sessionId) => cdp.session(sessionId),
      exited,
      close: stop,
    };
  } catch (err) {
    await stop();
    if (err === pageError) throw err;
    throw new CcbError("RUNTIME_UNAVAILABLE", `Chromium did not start: ${(err as Error).message}`, {
      hint: `Check that ${chromePath} starts${drop ? " as the unprivileged account (CCB_CHROMIUM_USER)" : ""}.`,
      cause: err,
    });
  }
}
