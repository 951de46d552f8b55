// The workbench runtime that ships with ccb: which pinned OpenVSCode Server archive each compiled
// target carries, and the check every release script makes before packaging one. The pins come from
// src/runtime-fetch/pinned-manifest.json, the same file the fetcher uses (CCB_RUNTIME_MANIFEST replaces it,
// for tests, as it does for the fetcher).
import { createHash } from "node:crypto";
import { createReadStream, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** ccb target -> the OpenVSCode Server platform it carries (no musl, macOS or Windows build upstream). */
export const RUNTIME_OF_TARGET = { "linux-x64": "linux-x64", "linux-arm64": "linux-arm64" };

export function runtimeManifest(env = process.env) {
  const file =
    env.CCB_RUNTIME_MANIFEST || fileURLToPath(new URL("../src/runtime-fetch/pinned-manifest.json", import.meta.url));
  return JSON.parse(readFileSync(file, "utf8"));
}

/** The pinned asset for a ccb target, or undefined when no runtime ships for it. */
export function runtimeAsset(target, env = process.env) {
  const platform = RUNTIME_OF_TARGET[target];
  const m = runtimeManifest(env);
  const asset = platform ? m.assets[platform] : undefined;
  return asset ? { ...asset, platform, version: m.version } : undefined;
}

/** Throws unless `file` is byte for byte the pinned archive (size, then SHA-256). */
export async function verifyRuntimeArchive(file, asset) {
  const size = statSync(file).size;
  if (size !== asset.size)
    throw new Error(`refusing to package ${file}: ${size} bytes, the pinned ${asset.fileName} has ${asset.size}`);
  const h = createHash("sha256");
  for await (const chunk of createReadStream(file)) h.update(chunk);
  const got = h.digest("hex");
  if (got !== asset.sha256)
    throw new Error(`refusing to package ${file}: SHA-256 ${got}, the pinned ${asset.fileName} has ${asset.sha256}`);
}
