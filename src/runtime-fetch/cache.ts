import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { RuntimeAsset, RuntimeManifest, RuntimePlatform } from "./manifest.ts";

/**
 * Cache layout (root = $CCB_CACHE_DIR, else $XDG_CACHE_HOME/ccb, else ~/.cache/ccb):
 *   runtime/<topLevelDir>/                   an installed runtime (renamed in only when complete)
 *   runtime/<topLevelDir>/.ccb-runtime.json  install marker (version, platform, sha256)
 *   runtime/<topLevelDir>.lock               fetch lock (pid, O_EXCL)
 *   runtime/<topLevelDir>.partial            an interrupted download, resumed by the next fetch
 *   runtime/.<topLevelDir>.*                 temporary names of one fetch (download, extract, trash)
 */
export function ccbCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CCB_CACHE_DIR) return env.CCB_CACHE_DIR;
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".cache"), "ccb");
}

export const MARKER_FILE = ".ccb-runtime.json";

export interface InstallMarker {
  name: string;
  version: string;
  platform: RuntimePlatform;
  sha256: string;
  installedAt: string;
}

export interface RuntimePaths {
  runtimeDir: string;
  installDir: string;
  binary: string;
  lockFile: string;
  partialFile: string;
  /** Prefix of this asset's temporary names (always inside runtimeDir). */
  tempPrefix: string;
}

export function runtimePaths(cacheDir: string, manifest: RuntimeManifest, asset: RuntimeAsset): RuntimePaths {
  const runtimeDir = join(cacheDir, "runtime");
  const installDir = join(runtimeDir, asset.topLevelDir);
  return {
    runtimeDir,
    installDir,
    binary: join(installDir, ...manifest.binary.split("/")),
    lockFile: join(runtimeDir, `${asset.topLevelDir}.lock`),
    partialFile: join(runtimeDir, `${asset.topLevelDir}.partial`),
    tempPrefix: `.${asset.topLevelDir}.`,
  };
}

/** A unique temporary path of this fetch, next to the cache entry (same file system, so rename is atomic). */
export function tempPath(paths: RuntimePaths, kind: "download" | "extract" | "trash"): string {
  return join(paths.runtimeDir, `${paths.tempPrefix}${kind}-${process.pid}-${randomBytes(6).toString("hex")}`);
}

/** Whether a complete, verified install of exactly this asset is in place. */
export function isInstalled(paths: RuntimePaths, asset: RuntimeAsset): boolean {
  const marker = readMarker(paths.installDir);
  if (!marker || marker.sha256 !== asset.sha256) return false;
  try {
    return statSync(paths.binary).isFile();
  } catch {
    return false;
  }
}

export function readMarker(installDir: string): InstallMarker | undefined {
  const file = join(installDir, MARKER_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as Partial<InstallMarker>;
    return typeof m.sha256 === "string" && typeof m.version === "string" ? (m as InstallMarker) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Remove what dead fetches of this asset left behind (temporary downloads and extract folders).
 * Called only while holding the lock, so nothing of a live fetch is touched.
 */
export async function removeLeftovers(paths: RuntimePaths): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(paths.runtimeDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const n of names) {
    if (!n.startsWith(paths.tempPrefix)) continue;
    await rm(join(paths.runtimeDir, n), { recursive: true, force: true });
    removed.push(n);
  }
  return removed;
}

/** Move a folder out of the way atomically, then delete it. */
export async function discardDir(paths: RuntimePaths, dir: string): Promise<void> {
  const trash = tempPath(paths, "trash");
  try {
    await rename(dir, trash);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await rm(trash, { recursive: true, force: true });
}
