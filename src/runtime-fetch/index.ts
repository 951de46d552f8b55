/**
 * The OpenVSCode Server runtime: a pinned manifest, a verified download (or mirror, or offline
 * archive), a safe extraction, and a versioned cache. The workbench launcher asks
 * `cachedRuntime()` for an installed runtime; `ccb runtime fetch` calls `fetchRuntime()`.
 */
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CcbError, isCcbError, toCcbError } from "../core/errors.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import {
  ccbCacheDir,
  discardDir,
  type InstallMarker,
  isInstalled,
  MARKER_FILE,
  type RuntimePaths,
  removeLeftovers,
  runtimePaths,
  tempPath,
} from "./cache.ts";
import { type CodeServerInstall, cachedCodeServer } from "./code-server.ts";
import { extractArchive, scanArchive } from "./extract.ts";
import { copyVerified, type DownloadResult, displayUrl, downloadVerified, ResumableError } from "./fetch.ts";
import { acquireLock } from "./install-lock.ts";
import {
  assetFor,
  type HostInfo,
  mirrorUrl,
  type RuntimeAsset,
  type RuntimeManifest,
  type RuntimePlatform,
  resolveManifest,
  resolvePlatform,
} from "./manifest.ts";
import { findPackagedArchive, type PackagedArchive } from "./packaged.ts";
import type { RuntimeProgress } from "./progress.ts";
import { otherWays } from "./reach.ts";

export { ccbCacheDir, type RuntimePaths, runtimePaths } from "./cache.ts";
export {
  CODE_SERVER_PIN,
  type CodeServerInstall,
  type CodeServerResult,
  cachedCodeServer,
  fetchCodeServer,
} from "./code-server.ts";
export {
  hostRuntimePlatform,
  loadManifest,
  PINNED_MANIFEST,
  RUNTIME_PLATFORMS,
  type RuntimeAsset,
  type RuntimeManifest,
  type RuntimePlatform,
  resolveManifest,
  unsupportedPlatformError,
} from "./manifest.ts";
export { findPackagedArchive, type PackagedArchive, runtimePackageName } from "./packaged.ts";
export { createProgress, type ProgressDisplay, type RuntimeProgress } from "./progress.ts";

export interface RuntimeCacheOptions {
  /** A runtime platform name (`linux-x64`, `linux-arm64`, `linux-armhf`); default: this host's. */
  platform?: string | undefined;
  /** Default: CCB_RUNTIME_MANIFEST (a JSON file; testing / advanced override), else the pinned manifest. */
  manifest?: RuntimeManifest | undefined;
  /** ccb's cache root; default CCB_CACHE_DIR, else $XDG_CACHE_HOME/ccb, else ~/.cache/ccb. */
  cacheDir?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** For tests: the host to detect the platform of. */
  host?: HostInfo | undefined;
  /** For tests: the folders a packaged runtime is looked for from (default: where this program runs). */
  searchFrom?: string[] | undefined;
}

export interface FetchRuntimeOptions extends RuntimeCacheOptions {
  /** Install from the archive that ships with ccb (what `ensureRuntime` found); still hash-checked. */
  packaged?: PackagedArchive | undefined;
  /** Base URL of a GitHub-releases mirror (default CCB_RUNTIME_MIRROR): `<mirror>/<release tag>/<asset file name>`. */
  mirror?: string | undefined;
  /** An offline copy of the archive; verified like a download. */
  fromFile?: string | undefined;
  /** Re-download and replace an existing install. */
  force?: boolean | undefined;
  signal?: AbortSignal | undefined;
  log?: Logger | undefined;
  /** Told where the fetch is: its phase (download, verify, extract, done) and a download's bytes. */
  onProgress?: ((p: RuntimeProgress) => void) | undefined;
  /** Give up (keeping the partial download for a resume) when no bytes arrive for this long; default 60 s. */
  idleTimeoutMs?: number | undefined;
  /** Called when another process holds the fetch lock and this one waits for it. */
  onWait?: ((holder: { pid: number }) => void) | undefined;
}

export interface InstalledRuntime {
  name: "openvscode-server";
  version: string;
  platform: RuntimePlatform;
  /** The runtime's folder (`…/runtime/openvscode-server-v1.109.5-linux-x64`). */
  root: string;
  /** `<root>/bin/openvscode-server`. */
  binary: string;
  sha256: string;
}

export interface FetchRuntimeResult extends InstalledRuntime {
  status: "installed" | "already-installed";
  source: "cache" | "download" | "mirror" | "file" | "package";
  /** Where the archive came from (credentials removed); absent for "cache". */
  from?: string;
  bytes?: number;
  resumedBytes?: number;
}

interface Resolved {
  manifest: RuntimeManifest;
  platform: RuntimePlatform;
  asset: RuntimeAsset;
  paths: RuntimePaths;
  cacheDir: string;
}

function resolveAll(o: RuntimeCacheOptions): Resolved {
  const env = o.env ?? process.env;
  const manifest = o.manifest ?? resolveManifest(env);
  const platform = resolvePlatform(o.platform, o.host ?? process);
  const asset = assetFor(manifest, platform);
  const cacheDir = o.cacheDir ?? ccbCacheDir(env);
  return { manifest, platform, asset, paths: runtimePaths(cacheDir, manifest, asset), cacheDir };
}

function installed(r: Resolved): InstalledRuntime {
  return {
    name: "openvscode-server",
    version: r.manifest.version,
    platform: r.platform,
    root: r.paths.installDir,
    binary: r.paths.binary,
    sha256: r.asset.sha256,
  };
}

/** The installed runtime for a platform (default: this host), or undefined when it is not in the cache. */
export function cachedRuntime(o: RuntimeCacheOptions = {}): InstalledRuntime | undefined {
  const r = resolveAll(o);
  return isInstalled(r.paths, r.asset) ? installed(r) : undefined;
}

/** The folder of the installed runtime, or undefined. */
export function cachedRuntimePath(platform?: string, o: RuntimeCacheOptions = {}): string | undefined {
  return cachedRuntime({ ...o, platform: platform ?? o.platform })?.root;
}

/** Whether OpenVSCode Server can run without a download: installed in the cache, or shipped with ccb. */
export function openVscodeAvailable(o: RuntimeCacheOptions = {}): boolean {
  try {
    const r = resolveAll(o);
    return isInstalled(r.paths, r.asset) || findPackagedArchive(r.platform, r.asset, o.searchFrom) !== undefined;
  } catch {
    return false;
  }
}

/**
 * The runtime to run: the one in the cache, else the one that ships with ccb (npm runtime package or
 * release tarball), installed into the cache first (SHA-256 checked, no network). Otherwise
 * RUNTIME_UNAVAILABLE telling the user how to get one.
 */
export async function ensureRuntime(o: FetchRuntimeOptions = {}): Promise<FetchRuntimeResult> {
  const rt = cachedRuntime(o);
  if (rt) return { ...rt, status: "already-installed", source: "cache" };
  const r = resolveAll(o);
  const packaged = findPackagedArchive(r.platform, r.asset, o.searchFrom);
  if (packaged) {
    o.log?.info(
      `installing the OpenVSCode Server ${r.manifest.version} that ships with ccb (${packaged.via}) into ${r.paths.runtimeDir} (first run only)`,
    );
    return fetchRuntime({ ...o, fromFile: undefined, mirror: undefined, packaged });
  }
  throw unavailable(r);
}

function unavailable(r: Resolved): CcbError {
  return new CcbError(
    "RUNTIME_UNAVAILABLE",
    `OpenVSCode Server ${r.manifest.version} (${r.platform}) is not installed in ${r.paths.runtimeDir}, and no runtime package ships with this ccb.`,
    {
      hint: "Run `ccb runtime fetch` (behind a firewall: --mirror <url> or --from-file <archive>; with npm but no GitHub: `ccb runtime fetch --runtime code-server`), or use --runtime-root <dir>.",
    },
  );
}

export type RuntimeStatus =
  | {
      supported: true;
      name: "openvscode-server";
      version: string;
      platform: RuntimePlatform;
      installed: boolean;
      root: string;
      binary: string;
      cacheDir: string;
      archive: { url: string; fileName: string; size: number; sha256: string };
      /** Bytes of an interrupted download waiting to be resumed. */
      partialBytes: number;
      /** The archive that ships with this ccb (npm runtime package, release tarball), if any. */
      packaged: PackagedArchive | null;
      /** The code-server that `ccb runtime fetch --runtime code-server` installed, if any. */
      codeServer: CodeServerInstall | null;
      /** What a front end runs without --runtime flags. */
      inUse: "openvscode-cache" | "openvscode-package" | "code-server-cache" | "none";
    }
  | { supported: false; platform: string; code: string; message: string; hint?: string | undefined };

/** What `ccb runtime status` shows. Unsupported platforms are a status, not an error. */
export async function runtimeStatus(o: RuntimeCacheOptions = {}): Promise<RuntimeStatus> {
  let r: Resolved;
  try {
    r = resolveAll(o);
  } catch (err) {
    if (isCcbError(err, "UNSUPPORTED")) {
      const host = o.host ?? process;
      return {
        supported: false,
        platform: o.platform ?? `${host.platform}-${host.arch}`,
        code: err.code,
        message: err.message,
        hint: err.hint,
      };
    }
    throw err;
  }
  const installedNow = isInstalled(r.paths, r.asset);
  const packaged = findPackagedArchive(r.platform, r.asset, o.searchFrom) ?? null;
  const codeServer = cachedCodeServer({ cacheDir: r.cacheDir, env: o.env }) ?? null;
  const partialBytes = await stat(r.paths.partialFile).then(
    (s) => s.size,
    () => 0,
  );
  return {
    supported: true,
    name: "openvscode-server",
    version: r.manifest.version,
    platform: r.platform,
    installed: installedNow,
    root: r.paths.installDir,
    binary: r.paths.binary,
    cacheDir: r.cacheDir,
    archive: { url: r.asset.url, fileName: r.asset.fileName, size: r.asset.size, sha256: r.asset.sha256 },
    partialBytes,
    packaged,
    codeServer,
    inUse: installedNow
      ? "openvscode-cache"
      : packaged
        ? "openvscode-package"
        : codeServer
          ? "code-server-cache"
          : "none",
  };
}

/**
 * Fetch, verify and install the runtime. Idempotent: an installed runtime is returned as is
 * (unless `force`). Safe to run from several processes at once (lock file + atomic rename), and
 * after a crash or an interrupted download (leftovers are removed, downloads resume).
 */
export async function fetchRuntime(o: FetchRuntimeOptions = {}): Promise<FetchRuntimeResult> {
  if (o.fromFile && o.mirror) throw new CcbError("INVALID_ARGUMENT", "Use either --from-file or --mirror, not both.");
  try {
    return await fetchRuntimeUnchecked(o);
  } catch (err) {
    const e = await otherWays(toCcbError(err), o.env ?? process.env, o.log);
    if (e.code === "PERMISSION_DENIED" && !e.hint) {
      throw new CcbError(e.code, e.message, { hint: "Set CCB_CACHE_DIR to a folder you can write to.", cause: err });
    }
    throw e;
  }
}

async function fetchRuntimeUnchecked(o: FetchRuntimeOptions): Promise<FetchRuntimeResult> {
  const r = resolveAll(o);
  const log = o.log ?? silentLogger;
  const env = o.env ?? process.env;
  if (!o.force && isInstalled(r.paths, r.asset))
    return { ...installed(r), status: "already-installed", source: "cache" };

  await mkdir(r.paths.runtimeDir, { recursive: true });
  const lock = await acquireLock(r.paths.lockFile, {
    signal: o.signal,
    onWait: (h) => {
      log.info(`another ccb process (pid ${h.pid}) is fetching the runtime; waiting for it`);
      o.onWait?.(h);
    },
  });
  try {
    if (isInstalled(r.paths, r.asset)) {
      if (!o.force) return { ...installed(r), status: "already-installed", source: "cache" };
    }
    const left = await removeLeftovers(r.paths);
    if (left.length > 0) log.debug(`removed leftovers of an earlier fetch: ${left.join(", ")}`);
    return await fetchLocked(r, o, log, env);
  } finally {
    await lock.release();
  }
}

async function fetchLocked(
  r: Resolved,
  o: FetchRuntimeOptions,
  log: Logger,
  env: NodeJS.ProcessEnv,
): Promise<FetchRuntimeResult> {
  const download = tempPath(r.paths, "download");
  const mirror = o.mirror ?? env.CCB_RUNTIME_MIRROR;
  let got: DownloadResult;
  let source: FetchRuntimeResult["source"];
  // The archive that ships with ccb needs no network: it is used unless a source was named.
  const packaged =
    o.fromFile || o.mirror ? undefined : (o.packaged ?? findPackagedArchive(r.platform, r.asset, o.searchFrom));
  const file = o.fromFile ?? packaged?.path;
  try {
    if (file) {
      source = o.fromFile ? "file" : "package";
      log.info(`verifying ${file}${packaged ? ` (from the ${packaged.via})` : ""}`);
      o.onProgress?.({ phase: "verify", detail: `SHA-256 of ${file}` });
      got = await copyVerified(file, download, r.asset, o.signal);
    } else {
      source = mirror ? "mirror" : "download";
      const url = mirror ? mirrorUrl(mirror, r.manifest, r.asset) : r.asset.url;
      // Take over an interrupted download (rename is atomic: only one fetch can win it).
      await rename(r.paths.partialFile, download).catch(() => undefined);
      log.info(
        `downloading ${r.asset.fileName} (${(r.asset.size / 1024 / 1024).toFixed(1)} MB) from ${displayUrl(url)}`,
      );
      const onProgress = o.onProgress;
      const host = new URL(url).host;
      try {
        got = await downloadVerified({
          url,
          dest: download,
          expected: r.asset,
          signal: o.signal,
          onProgress: onProgress && ((p) => onProgress({ phase: "download", detail: host, ...p })),
          idleTimeoutMs: o.idleTimeoutMs,
          log,
        });
      } catch (err) {
        if (err instanceof ResumableError) await rename(download, r.paths.partialFile).catch(() => undefined);
        throw err;
      }
    }
    log.info(`SHA-256 verified (${r.asset.sha256})`);
    o.onProgress?.({ phase: "extract", detail: r.asset.fileName });
    const done = await install(r, download, o.force === true);
    o.onProgress?.({ phase: "done" });
    return {
      ...done,
      status: "installed",
      source,
      from: got.finalUrl.startsWith("file://")
        ? packaged
          ? `${packaged.via} (${file})`
          : file
        : displayUrl(got.finalUrl),
      bytes: got.bytes,
      resumedBytes: got.resumedBytes,
    };
  } finally {
    await rm(download, { force: true });
  }
}

/** Scan, extract into a temporary folder, check, mark, and rename into place. */
async function install(r: Resolved, archive: string, replace: boolean): Promise<InstalledRuntime> {
  const rules = { topLevelDir: r.asset.topLevelDir, maxUnpackedBytes: r.manifest.maxUnpackedBytes };
  await scanArchive(archive, rules);
  const tmp = tempPath(r.paths, "extract");
  await mkdir(tmp, { mode: 0o700 });
  try {
    await extractArchive(archive, tmp, rules);
    const root = join(tmp, r.asset.topLevelDir);
    const bin = join(root, ...r.manifest.binary.split("/"));
    const st = await stat(bin).catch(() => undefined);
    if (!st?.isFile() || (st.mode & 0o111) === 0) {
      throw new CcbError(
        "INTEGRITY_FAILED",
        `The runtime archive has no executable ${r.manifest.binary}; nothing was installed.`,
      );
    }
    const marker: InstallMarker = {
      name: r.manifest.name,
      version: r.manifest.version,
      platform: r.platform,
      sha256: r.asset.sha256,
      installedAt: new Date().toISOString(),
    };
    await writeFile(join(root, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
    // An incomplete or foreign folder under the install name goes first (we hold the lock).
    if (replace || !isInstalled(r.paths, r.asset)) await discardDir(r.paths, r.paths.installDir);
    try {
      await rename(root, r.paths.installDir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Lost a race with a fetch that ignored the lock: keep the winner's install, drop ours.
      if ((code === "ENOTEMPTY" || code === "EEXIST") && isInstalled(r.paths, r.asset)) return installed(r);
      throw err;
    }
    return installed(r);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
