// The set-up the workbench benchmarks share: a private home and workspace, the built bridge
// extension, and (for tool benchmarks) an in-process core + gateway + code-server workbench with its
// headless client, ready once the bridge has connected.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import { Gateway } from "../src/net/gateway.ts";
import { startWorkbench } from "../src/workbench/index.ts";
import { codeServerRoot, node24 } from "../test/helpers/peers.ts";

const root = new URL("..", import.meta.url).pathname;

/** A temporary home with a `ws` folder, and the environment that confines the runtime to it. */
export function benchWorkspace(prefix: string) {
  if (!existsSync(join(root, "dist/bridge-extension")))
    spawnSync(process.execPath, [join(root, "scripts/build-extension.mjs")], { stdio: "inherit" });
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const ws = join(dir, "ws");
  mkdirSync(ws);
  const env = {
    ...process.env,
    HOME: dir,
    XDG_STATE_HOME: join(dir, "state"),
    XDG_CACHE_HOME: join(dir, "cache"),
    XDG_CONFIG_HOME: join(dir, "config"),
    ...(process.getuid?.() === 0 ? { CCB_CHROMIUM_NO_SANDBOX: "1" } : {}),
  };
  return { dir, ws, env };
}

/** code-server + headless Chromium beside an in-process core for `ws`; resolves once the bridge serves. */
export async function bootBenchWorkbench(ws: string, env: NodeJS.ProcessEnv) {
  const core = createCore({ roots: [ws], log: silentLogger });
  const gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
  const url = await gw.listen();
  const wb = startWorkbench({
    core,
    editor: core.claimEditor("bench"),
    http: { gateway: gw, url },
    log: silentLogger,
    runtime: "code-server",
    runtimeRoot: codeServerRoot(),
    runtimeNode: node24(),
    headlessClient: true,
    env,
  });
  await wb.ready;
  await wb.bridgeConnected;
  const ctx = { core, signal: new AbortController().signal, log: silentLogger };
  const close = async () => {
    await wb.close();
    await gw.close();
    await core.dispose();
  };
  return { core, gw, wb, ctx, close };
}

/** One process: its pid, parent, process group and command line. */
export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  cmd: string;
}

export function processes(): Proc[] {
  const out: Proc[] = [];
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      out.push({ pid: Number(p), ppid: Number(f[1]), pgid: Number(f[2]), cmd });
    } catch {
      // gone
    }
  }
  return out;
}

/** Proportional set size of one process in KiB (shared pages divided among their users): /proc/<pid>/smaps_rollup. */
export function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** `pid` and all its descendants. */
export function tree(pid: number, all = processes()): Proc[] {
  const kids = new Map<number, Proc[]>();
  for (const p of all) kids.set(p.ppid, [...(kids.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const walk = (q: number) => {
    for (const k of kids.get(q) ?? []) {
      out.push(k);
      walk(k.pid);
    }
  };
  const self = all.find((p) => p.pid === pid);
  if (self) out.push(self);
  walk(pid);
  return out;
}

/** What a process of a workbench is, for the PSS table. */
export function groupOf(p: Proc): string {
  const c = p.cmd;
  if (/chrom(e|ium)/.test(c)) {
    const type = /--type=([\w-]+)/.exec(c)?.[1];
    if (!type) return "chromium browser";
    if (type === "utility")
      return `chromium utility (${/--utility-sub-type=([\w.]+)/.exec(c)?.[1]?.split(".").slice(-2).join(".") ?? "?"})`;
    return `chromium ${type}`;
  }
  if (/tsserver|typescript\/lib\/(tsserver|typingsInstaller)/.test(c))
    return /typingsInstaller/.test(c) ? "runtime: typings installer" : "runtime: tsserver";
  if (/extensionHostProcess|--type=extensionHost/.test(c)) return "runtime: extension host";
  if (/fileWatcher|watcherMain|--type=fileWatcher/.test(c)) return "runtime: file watcher";
  if (/ptyHost|--type=ptyHost/.test(c)) return "runtime: pty host";
  if (/languageserver|language-features\/.*server|serverMain|jsonServerMain/.test(c))
    return "runtime: language servers";
  if (/code-server|openvscode|server-main|entry\.js/.test(c)) return "runtime: server";
  if (/ccb(\.mjs)?\b.*workbench host/.test(c)) return "ccb: workbench host";
  if (/ccb/.test(c)) return "ccb: front end";
  if (/^\/bin\/sh|read _ccb_alive/.test(c)) return "ccb: watchdogs";
  return `other: ${c.slice(0, 40)}`;
}

/** CPU time (user + system, ms) a process used, and its children that it waited for. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields 14-17 of stat (utime, stime, cutime, cstime) are at 11-14 after the command
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / 100;
  } catch {
    return 0;
  }
}
