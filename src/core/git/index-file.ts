import { readFile } from "node:fs/promises";

/**
 * Paths of the gitlink (submodule) entries of a git index file, read directly: a `git ls-files`
 * listing of a large index would cost a process and megabytes of output on every invocation.
 * Handles index versions 2, 3 and 4 and both hash sizes. Returns undefined when the file uses a
 * feature this reader does not follow (a split index keeps entries in a second file), so the
 * caller can ask git instead; an absent index has no entries.
 */
export async function indexGitlinks(indexFile: string, hashBytes: 20 | 32): Promise<string[] | undefined> {
  let buf: Buffer;
  try {
    buf = await readFile(indexFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  if (buf.length < 12 || buf.toString("latin1", 0, 4) !== "DIRC") return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = buf.readUInt32BE(8);
  const out: string[] = [];
  let pos = 12;
  let prev = "";
  for (let i = 0; i < count; i++) {
    if (pos + 40 + hashBytes + 2 > buf.length) return undefined;
    const mode = buf.readUInt32BE(pos + 24);
    const flags = buf.readUInt16BE(pos + 40 + hashBytes);
    let nameAt = pos + 40 + hashBytes + 2;
    if (version >= 3 && flags & 0x4000) nameAt += 2;
    let path: string;
    if (version === 4) {
      let c = buf[nameAt++] ?? 0;
      let strip = c & 127;
      while (c & 128) {
        c = buf[nameAt++] ?? 0;
        strip = ((strip + 1) << 7) + (c & 127);
      }
      const end = buf.indexOf(0, nameAt);
      if (end === -1 || strip > prev.length) return undefined;
      path = prev.slice(0, prev.length - strip) + buf.toString("utf8", nameAt, end);
      pos = end + 1;
    } else {
      const end = buf.indexOf(0, nameAt);
      if (end === -1) return undefined;
      path = buf.toString("utf8", nameAt, end);
      pos += (nameAt - pos + (end - nameAt) + 8) & ~7;
    }
    prev = path;
    if ((mode & 0o170000) === 0o160000) out.push(path);
  }
  // Extensions: a "link" extension means a split index whose other entries live elsewhere.
  while (pos + 8 <= buf.length - hashBytes) {
    const sig = buf.toString("latin1", pos, pos + 4);
    if (sig === "link") return undefined;
    pos += 8 + buf.readUInt32BE(pos + 4);
  }
  return out;
}
