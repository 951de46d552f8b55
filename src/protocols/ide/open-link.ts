import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../../util/paths.ts";

/** How long the page holding a one-time link is kept (the link's own lifetime). */
const KEEP_MS = 10 * 60_000;

/** The folder of pages that hold links for the opener: 0700, owned by this user, not a symlink. */
function openDir(env: NodeJS.ProcessEnv): string {
  const dir = join(stateDir(env), "open");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) throw new Error(`${dir} is not a folder of yours`);
  chmodSync(dir, 0o700);
  return dir;
}

/**
 * A 0600 HTML page (in a 0700 folder) that sends the browser on to `url`: what the desktop's opener
 * gets instead of the one-time link, so the link is never on a command line (`/proc/<pid>/cmdline`
 * of the opener or of the browser it starts is readable by every local account).
 */
export function writeLinkPage(url: string, env: NodeJS.ProcessEnv = process.env): { path: string; remove(): void } {
  const path = join(openDir(env), `workbench-${randomBytes(8).toString("hex")}.html`);
  const href = url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  writeFileSync(
    path,
    `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${href}"><title>ccb workbench</title></head>
<body><a href="${href}">Open the ccb workbench</a></body></html>
`,
    { mode: 0o600, flag: "wx" },
  );
  return { path, remove: () => rmSync(path, { force: true }) };
}

/**
 * `--open`: hand the desktop's opener a 0600 page that leads to `url` (never `url` itself) and say
 * what happened either way. Returns what removes the page (also removed after the link's lifetime).
 */
export function openBrowser(
  url: string,
  announce: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): () => void {
  const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  const failed = (why: string) =>
    announce(`--open: could not start ${cmd} (${why}); open the workbench URL above in a browser yourself.`);
  let page: { path: string; remove(): void } | undefined;
  try {
    page = writeLinkPage(url, env);
    const child = spawn(cmd, [page.path], { stdio: "ignore", detached: true });
    child.once("spawn", () => announce(`--open: opened the workbench URL in your browser (${cmd}).`));
    child.once("error", (err) =>
      failed((err as NodeJS.ErrnoException).code === "ENOENT" ? "not installed" : err.message),
    );
    child.unref();
    setTimeout(() => page?.remove(), KEEP_MS).unref();
  } catch (err) {
    failed((err as Error).message);
  }
  return () => page?.remove();
}
