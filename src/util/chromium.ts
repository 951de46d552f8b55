import { spawn as nodeSpawn, type SpawnOptions } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Launcher } from "chrome-launcher";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";

export interface ChromiumOptions {
  /** Page to open first. */
  url?: string;
  /** Browser binary; default CHROME_PATH, then Debian's /usr/bin/chromium, then chrome-launcher's search. */
  chromePath?: string | undefined;
  width?: number;
  height?: number;
  /**
   * Explicit opt-in to Chromium's --no-sandbox (a last resort for containers that cannot run
   * the sandbox). Never added silently: as root, Chromium is started as an unprivileged user.
   */
  noSandbox?: boolean;
  /** Account to run Chromium as when ccb runs as root (default CCB_CHROMIUM_USER or "nobody"). */
  runAs?: string | undefined;
  log: Logger;
}

export interface Chromium {
  readonly port: number;
  readonly pid: number;
  readonly userDataDir: string;
  /** Stop the browser (whole process group) and remove its temporary profile. */
  close(): Promise<void>;
}

/** The flags that keep a headless Chromium quiet on a closed network (see reference/workbench.md). */
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
];

export function findChromium(explicit?: string): string {
  const candidates = [explicit, process.env.CHROME_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].filter(
    (c): c is string => typeof c === "string" && c.length > 0,
  );
  for (const c of candidates) if (existsSync(c)) return c;
  const found = Launcher.getFirstInstallation();
  if (found) return found;
  throw new CcbError("RUNTIME_UNAVAILABLE", "No Chromium, Chrome or Edge was found.", {
    hint: "Install one (Debian: apt-get install chromium) or pass its path (CHROME_PATH).",
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

/**
 * Launch headless Chromium with chrome-launcher on a fresh temporary profile, DevTools on
 * 127.0.0.1. As root it runs as an unprivileged account with the sandbox kept on.
 */
export async function launchChromium(o: ChromiumOptions): Promise<Chromium> {
  const chromePath = findChromium(o.chromePath);
  const root = process.getuid?.() === 0;
  let drop: { uid: number; gid: number } | undefined;
  if (root && !o.noSandbox) {
    const name = o.runAs ?? process.env.CCB_CHROMIUM_USER ?? "nobody";
    drop = lookupUser(name);
    if (!drop || drop.uid === 0) {
      throw new CcbError("UNSUPPORTED", `ccb runs as root and cannot start Chromium as the unprivileged account "${name}".`, {
        hint: "Create that account, set CCB_CHROMIUM_USER to another one, or (last resort) opt in to --no-sandbox.",
      });
    }
  }
  const userDataDir = mkdtempSync(join(tmpdir(), "ccb-chromium-"));
  if (drop) chownSync(userDataDir, drop.uid, drop.gid);
  const home = userDataDir;
  const spawn = (cmd: string, args: readonly string[], opts: SpawnOptions) =>
    nodeSpawn(cmd, args, { ...opts, ...(drop ? { uid: drop.uid, gid: drop.gid } : {}) });
  const flags = [...CHROMIUM_FLAGS, `--window-size=${o.width ?? 1280},${o.height ?? 800}`];
  if (o.noSandbox) {
    o.log.warn("Chromium runs with --no-sandbox (explicit opt-in)");
    flags.push("--no-sandbox");
  }
  const launcher = new Launcher(
    {
      chromePath,
      chromeFlags: flags,
      ignoreDefaultFlags: true,
      userDataDir,
      startingUrl: o.url ?? "about:blank",
      logLevel: "silent",
      envVars: { ...process.env, HOME: home, TMPDIR: userDataDir, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: join(home, ".cache") },
    },
    { spawn: spawn as unknown as typeof nodeSpawn },
  );
  try {
    await launcher.launch();
  } catch (err) {
    launcher.kill();
    rmSync(userDataDir, { recursive: true, force: true });
    throw new CcbError("RUNTIME_UNAVAILABLE", `Chromium did not start: ${(err as Error).message}`, {
      hint: `Check that ${chromePath} starts${drop ? " as the unprivileged account (CCB_CHROMIUM_USER)" : ""}; its log is in the profile folder while it runs.`,
      cause: err,
    });
  }
  const proc = launcher.chromeProcess;
  const exited = new Promise<void>((resolve) => {
    if (!proc || proc.exitCode !== null) resolve();
    else proc.once("exit", () => resolve());
  });
  return {
    port: launcher.port as number,
    pid: launcher.pid as number,
    userDataDir,
    async close() {
      launcher.kill();
      await exited;
      rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}
