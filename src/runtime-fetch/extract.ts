import { extract, list, type ReadEntry } from "tar";
import { CcbError } from "../core/errors.ts";

export interface ArchiveRules {
  /** Every entry must lie in this single top-level folder. */
  topLevelDir: string;
  /** Refuse archives that unpack to more than this many bytes. */
  maxUnpackedBytes: number;
}

export interface ArchiveSummary {
  entries: number;
  unpackedBytes: number;
  symlinks: number;
}

const PLAIN_TYPES = new Set(["File", "OldFile", "ContiguousFile", "Directory"]);

function refuse(entry: string, why: string): CcbError {
  return new CcbError(
    "INTEGRITY_FAILED",
    `Refusing to extract the runtime archive: entry "${entry}" ${why}. Nothing was extracted.`,
    {
      hint: "The archive is not a genuine OpenVSCode Server release; fetch it again from the official source or a trusted mirror.",
      details: { reason: "unsafe-entry", entry },
    },
  );
}

/** Path components of an archive entry, or an error for absolute paths and `..`. */
function components(path: string, what: string): string[] {
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:/.test(path))
    throw refuse(path, `has an absolute ${what}`);
  const parts = path.split("/").filter((c) => c !== "" && c !== ".");
  if (parts.includes("..")) throw refuse(path, `has a ".." ${what}`);
  return parts;
}

/**
 * Resolve `target` (components relative to the archive root) following the archive's own
 * symlinks, as a file system would. Returns undefined when the walk leaves the root, meets an
 * absolute link, or loops.
 */
export function resolveInArchive(target: string[], links: ReadonlyMap<string, string>): string[] | undefined {
  const stack: string[] = [];
  let pending = [...target];
  let hops = 0;
  while (pending.length > 0) {
    const c = pending.shift() as string;
    if (c === "" || c === ".") continue;
    if (c === "..") {
      if (stack.length === 0) return undefined;
      stack.pop();
      continue;
    }
    stack.push(c);
    const link = links.get(stack.join("/"));
    if (link !== undefined) {
      if (++hops > 40 || link.startsWith("/")) return undefined;
      stack.pop();
      pending = [...link.split("/"), ...pending];
    }
  }
  return stack;
}

/**
 * Read the whole archive without writing anything and refuse it when any entry is unsafe:
 * absolute paths, `..`, entries outside the top-level folder, device files and FIFOs, symbolic or
 * hard links that resolve outside the top-level folder (following the archive's own links),
 * entries placed through a symbolic link, or an unpacked size above the limit.
 */
export async function scanArchive(file: string, rules: ArchiveRules): Promise<ArchiveSummary> {
  const symlinks = new Map<string, string>();
  const hardlinks: Array<{ path: string; target: string[] }> = [];
  const paths: string[][] = [];
  let problem: CcbError | undefined;
  let unpackedBytes = 0;
  const check = (entry: ReadEntry) => {
    const parts = components(entry.path, "path");
    if (parts.length === 0) {
      if (entry.type === "Directory") return;
      throw refuse(entry.path, "has an empty path");
    }
    if (parts[0] !== rules.topLevelDir)
      throw refuse(entry.path, `is outside the top-level folder "${rules.topLevelDir}/"`);
    const key = parts.join("/");
    if (entry.type === "SymbolicLink") {
      const lp = entry.linkpath ?? "";
      if (lp === "" || lp.startsWith("/") || /^[A-Za-z]:/.test(lp))
        throw refuse(entry.path, `is a symbolic link to an absolute path (${lp})`);
      symlinks.set(key, lp);
    } else if (entry.type === "Link") {
      hardlinks.push({ path: entry.path, target: components(entry.linkpath ?? "", "link target") });
      symlinks.delete(key);
    } else if (PLAIN_TYPES.has(entry.type)) {
      symlinks.delete(key);
      unpackedBytes += entry.size;
      if (unpackedBytes > rules.maxUnpackedBytes)
        throw refuse(entry.path, `takes the unpacked size over ${rules.maxUnpackedBytes} bytes`);
    } else {
      throw refuse(entry.path, `is a ${entry.type} (only files, folders and links are allowed)`);
    }
    paths.push(parts);
  };
  try {
    await list({
      file,
      strict: true,
      onReadEntry(entry) {
        if (problem) return;
        try {
          check(entry);
        } catch (err) {
          problem = err as CcbError;
        }
      },
    });
  } catch (err) {
    throw new CcbError(
      "INTEGRITY_FAILED",
      `The runtime archive is not a readable .tar.gz: ${(err as Error).message}. Nothing was extracted.`,
      {
        cause: err,
      },
    );
  }
  if (problem) throw problem;

  const inside = (resolved: string[] | undefined) => resolved !== undefined && resolved[0] === rules.topLevelDir;
  for (const [path, target] of symlinks) {
    const parent = path.split("/").slice(0, -1);
    if (!inside(resolveInArchive([...parent, ...target.split("/")], symlinks))) {
      throw refuse(path, `is a symbolic link that points outside the runtime folder (${target})`);
    }
  }
  for (const h of hardlinks) {
    if (!inside(resolveInArchive(h.target, symlinks)))
      throw refuse(h.path, `is a hard link that points outside the runtime folder`);
  }
  for (const parts of paths) {
    for (let i = 1; i < parts.length; i++) {
      if (symlinks.has(parts.slice(0, i).join("/"))) throw refuse(parts.join("/"), "is placed through a symbolic link");
    }
  }
  return { entries: paths.length, unpackedBytes, symlinks: symlinks.size };
}

/**
 * Extract an archive already accepted by `scanArchive` into `cwd` (an empty temporary folder).
 * node-tar's own protections stay on (strict: warnings are errors; no absolute paths, no `..`,
 * no writing through symlinks); set-id bits and owners are dropped.
 */
export async function extractArchive(file: string, cwd: string, rules: ArchiveRules): Promise<void> {
  try {
    await extract({
      file,
      cwd,
      strict: true,
      preservePaths: false,
      preserveOwner: false,
      filter(path, entry) {
        const e = entry as ReadEntry;
        if (!PLAIN_TYPES.has(e.type) && e.type !== "SymbolicLink" && e.type !== "Link") return false;
        if (
          !path.replace(/^(\.\/)+/, "").startsWith(`${rules.topLevelDir}/`) &&
          path.replace(/^(\.\/)+/, "").replace(/\/$/, "") !== rules.topLevelDir
        ) {
          return false;
        }
        if (typeof e.mode === "number") e.mode &= 0o777;
        return true;
      },
    });
  } catch (err) {
    if (err instanceof CcbError) throw err;
    throw new CcbError(
      "INTEGRITY_FAILED",
      `Extracting the runtime archive failed: ${(err as Error).message}. Nothing was installed.`,
      { cause: err },
    );
  }
}
