/**
 * The runtime archive that ships with ccb, so that an install from npm or from a release tarball has
 * a workbench with nothing fetched at run time:
 *   - npm: the platform package (`ccb-linux-x64`, holding the binary) depends on the runtime package
 *     (`ccb-runtime-linux-x64`), which holds the pinned upstream archive byte for byte;
 *   - release tarball: `runtime/<archive>` beside the `ccb` executable.
 * The archive is found by where this program runs from (the executable, then this module), never by
 * the working directory, and it is trusted for nothing but its bytes: it is installed into the cache
 * only through the fetcher's SHA-256 check, so a planted or altered copy installs nothing.
 */
import { realpathSync, statSync } from "node:fs";
import { dirname, join, parse } from "node:path";
import { fileURLToPath } from "node:url";
import { CCB_PACKAGE_NAME } from "../core/version.ts";
import type { RuntimeAsset, RuntimePlatform } from "./manifest.ts";

export interface PackagedArchive {
  /** The archive file. */
  path: string;
  /** The npm package that carries it, or "release tarball". */
  via: string;
}

/** The npm name of the runtime package for a platform: `<dispatcher>-runtime-<platform>`. */
export function runtimePackageName(platform: RuntimePlatform, dispatcher = CCB_PACKAGE_NAME): string {
  return `${dispatcher}-runtime-${platform}`;
}

/** Where this program runs from: the real folder of the executable, and of this module when it is a file. */
function startDirs(): string[] {
  const dirs: string[] = [];
  const add = (p: string | undefined) => {
    if (!p) return;
    try {
      const d = dirname(realpathSync(p));
      if (!dirs.includes(d)) dirs.push(d);
    } catch {
      // not a file (a bundled or virtual module)
    }
  };
  add(process.execPath);
  if (import.meta.url.startsWith("file:")) add(fileURLToPath(import.meta.url));
  return dirs;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * The packaged archive for `asset`, or undefined. Looks beside each start folder for `runtime/<file>`
 * (the release tarball's layout) and, the way Node resolves a package, in `node_modules/<runtime
 * package>/` of each folder above it (npm, pnpm and bun place a dependency there).
 */
export function findPackagedArchive(
  platform: RuntimePlatform,
  asset: RuntimeAsset,
  from?: string[] | undefined,
): PackagedArchive | undefined {
  const starts = from ?? startDirs();
  const name = runtimePackageName(platform);
  for (const start of starts) {
    const beside = join(start, "runtime", asset.fileName);
    if (isFile(beside)) return { path: beside, via: "release tarball" };
    for (let dir = start; ; dir = dirname(dir)) {
      const inPackage = join(dir, "node_modules", name, asset.fileName);
      if (isFile(inPackage)) return { path: inPackage, via: `npm package ${name}` };
      if (dir === parse(dir).root) break;
    }
  }
  return undefined;
}
