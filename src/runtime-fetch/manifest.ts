import { readFileSync } from "node:fs";
import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import pinned from "./pinned-manifest.json" with { type: "json" };

/** The Linux builds OpenVSCode Server publishes. There is no macOS or Windows build upstream. */
export const RUNTIME_PLATFORMS = ["linux-x64", "linux-arm64", "linux-armhf"] as const;
export type RuntimePlatform = (typeof RUNTIME_PLATFORMS)[number];

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "a lowercase hex SHA-256 digest");
/** A plain file or folder name: no separators, no `..`. */
const plainName = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9._+-]+$/, "a plain file name")
  .refine((s) => s !== "." && s !== "..", "a plain file name");

export const runtimeAssetSchema = z.object({
  /** Canonical download URL (GitHub release asset). */
  url: z.string().url(),
  /** Asset file name; a mirror serves it at `<mirror>/<releaseTag>/<fileName>`. */
  fileName: plainName,
  /** Exact size of the archive in bytes. */
  size: z.number().int().positive(),
  sha256: sha256Hex,
  /** The single top-level folder inside the archive; also the name of the folder in the cache. */
  topLevelDir: plainName,
});
export type RuntimeAsset = z.infer<typeof runtimeAssetSchema>;

export const runtimeManifestSchema = z.object({
  name: z.literal("openvscode-server"),
  version: z.string().regex(/^[0-9A-Za-z.+-]+$/),
  /** Release tag of the upstream GitHub release, the middle segment of a mirror URL. */
  releaseTag: plainName,
  /** Path of the server executable inside the top-level folder. */
  binary: z
    .string()
    .regex(/^[A-Za-z0-9._+-]+(\/[A-Za-z0-9._+-]+)*$/)
    .refine((s) => !s.split("/").includes(".."), "no `..` segments"),
  /** Upper bound for the unpacked size (refuses archive bombs). */
  maxUnpackedBytes: z
    .number()
    .int()
    .positive()
    .default(2 * 1024 ** 3),
  assets: z.partialRecord(z.enum(RUNTIME_PLATFORMS), runtimeAssetSchema),
});
export type RuntimeManifest = z.infer<typeof runtimeManifestSchema>;

/**
 * The pinned runtime (pinned-manifest.json: also read by the release scripts in platforms/, which
 * check the archive they package against it). Digests equal GitHub's own per-asset `digest`
 * (upstream publishes no checksum files); nothing is extracted unless a download matches them byte
 * for byte.
 */
export const PINNED_MANIFEST: RuntimeManifest = runtimeManifestSchema.parse(pinned);

/** Read and validate a manifest JSON file (CCB_RUNTIME_MANIFEST: a testing / advanced override). */
export function loadManifest(path: string): RuntimeManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new CcbError("CONFIG_INVALID", `Cannot read the runtime manifest ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const parsed = runtimeManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CcbError(
      "CONFIG_INVALID",
      `Invalid runtime manifest ${path}: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/** The manifest in force: CCB_RUNTIME_MANIFEST when set, else the pinned one. */
export function resolveManifest(env: NodeJS.ProcessEnv = process.env): RuntimeManifest {
  return env.CCB_RUNTIME_MANIFEST ? loadManifest(env.CCB_RUNTIME_MANIFEST) : PINNED_MANIFEST;
}

export interface HostInfo {
  platform: NodeJS.Platform | string;
  arch: string;
}

const ALTERNATIVES =
  "Alternatives: use code-server instead (`ccb serve --runtime code-server`, with Node 24; see the README), " +
  "point ccb at an existing Code OSS server with `--runtime-root <dir>` (env CCB_RUNTIME_ROOT), " +
  "or run ccb on Linux (on Windows: inside WSL2; on macOS: in a Linux VM or container).";

/** The error for a host or platform name OpenVSCode Server publishes no build for. */
export function unsupportedPlatformError(what: string): CcbError {
  const os = what.split("-")[0];
  const why =
    os === "darwin" || os === "macos"
      ? "OpenVSCode Server publishes no macOS build"
      : os === "win32" || os === "windows"
        ? "OpenVSCode Server publishes no Windows build"
        : `OpenVSCode Server publishes no build for ${what}`;
  return new CcbError("UNSUPPORTED", `${why} (runtime platforms: ${RUNTIME_PLATFORMS.join(", ")}).`, {
    hint: ALTERNATIVES,
    details: { platform: what },
  });
}

/** Map a Node host to a runtime platform name (e.g. `linux-x64`), or undefined when there is no build. */
export function hostRuntimePlatform(host: HostInfo = process): RuntimePlatform | undefined {
  if (host.platform !== "linux") return undefined;
  if (host.arch === "x64") return "linux-x64";
  if (host.arch === "arm64") return "linux-arm64";
  if (host.arch === "arm") return "linux-armhf";
  return undefined;
}

/** The platform to use: an explicit name (validated) or the host's; throws UNSUPPORTED otherwise. */
export function resolvePlatform(explicit: string | undefined, host: HostInfo = process): RuntimePlatform {
  if (explicit !== undefined) {
    if ((RUNTIME_PLATFORMS as readonly string[]).includes(explicit)) return explicit as RuntimePlatform;
    throw unsupportedPlatformError(explicit);
  }
  const p = hostRuntimePlatform(host);
  if (!p) throw unsupportedPlatformError(`${host.platform}-${host.arch}`);
  return p;
}

/** The manifest's asset for a platform; UNSUPPORTED when the manifest has none. */
export function assetFor(manifest: RuntimeManifest, platform: RuntimePlatform): RuntimeAsset {
  const a = manifest.assets[platform];
  if (!a) throw unsupportedPlatformError(platform);
  return a;
}

/** `<mirror>/<release tag>/<asset file name>`: the shape of a GitHub-releases mirror. */
export function mirrorUrl(mirror: string, manifest: RuntimeManifest, a: RuntimeAsset): string {
  let base: URL;
  try {
    base = new URL(mirror);
  } catch {
    throw new CcbError("INVALID_ARGUMENT", `Invalid mirror URL: ${mirror}`, {
      hint: "Use an http(s) base URL, e.g. https://mirror.example/openvscode",
    });
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") {
    throw new CcbError("INVALID_ARGUMENT", `Mirror URL must be http(s): ${mirror}`, {
      hint: "For a local file use `ccb runtime fetch --from-file <archive>`.",
    });
  }
  return `${mirror.replace(/\/+$/, "")}/${encodeURIComponent(manifest.releaseTag)}/${encodeURIComponent(a.fileName)}`;
}
