#!/usr/bin/env node
// The release assets, made the same way by release.yml and by the tests:
//   runtime --target <key> [--out dist/runtime]                   -> the pinned OpenVSCode Server archive the
//           target carries, downloaded and checked (size + SHA-256); prints nothing for a target without one
//   archive --target <key> --binary <file> [--runtime <archive>] [--out dist/release]
//           -> ccb-v<version>-<key>.tar.gz (ccb, LICENSE, THIRD_PARTY_NOTICES, runtime/<archive> checked
//           against the pin; fixed mtimes and owners; zip for a .exe)
//   sums [--out dist/release]                                      -> SHA256SUMS of every ccb-v* archive
// The version comes from package.json.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  createWriteStream,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as tar from "tar";
import { runtimeAsset, verifyRuntimeArchive } from "../platforms/runtime.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
const MTIME = new Date("2000-01-01T00:00:00Z");

/** Download the pinned runtime archive of a target into `out` (kept when already there and correct). */
export async function runtime({ target, out }) {
  const asset = runtimeAsset(target);
  if (!asset) return undefined;
  const file = join(out, asset.fileName);
  try {
    await verifyRuntimeArchive(file, asset);
    return file;
  } catch {
    // missing or wrong: download it
  }
  const res = await fetch(asset.url);
  if (!res.ok || !res.body) throw new Error(`GET ${asset.url}: HTTP ${res.status}`);
  await pipeline(Readable.fromWeb(res.body), createWriteStream(file));
  await verifyRuntimeArchive(file, asset);
  return file;
}

export async function archive({ target, binary, out, runtime: runtimeArchive }) {
  const exe = basename(binary).endsWith(".exe") ? "ccb.exe" : "ccb";
  const name = `ccb-v${version}-${target}`;
  const stage = join(out, `.stage-${name}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  copyFileSync(binary, join(stage, exe));
  chmodSync(join(stage, exe), 0o755);
  for (const f of ["LICENSE", "THIRD_PARTY_NOTICES"]) copyFileSync(join(root, f), join(stage, f));
  const files = [exe, "LICENSE", "THIRD_PARTY_NOTICES"];
  const asset = runtimeAsset(target);
  if (runtimeArchive) {
    if (!asset) throw new Error(`no workbench runtime ships for ${target}`);
    await verifyRuntimeArchive(runtimeArchive, asset);
    mkdirSync(join(stage, "runtime"));
    copyFileSync(runtimeArchive, join(stage, "runtime", asset.fileName));
    files.push("runtime", `runtime/${asset.fileName}`);
  }
  let file;
  if (exe === "ccb.exe") {
    file = join(out, `${name}.zip`);
    rmSync(file, { force: true });
    execFileSync("zip", ["-q", "-X", file, ...files], { cwd: stage });
  } else {
    file = join(out, `${name}.tar.gz`);
    await tar.c({ gzip: { level: 9 }, file, cwd: stage, portable: true, mtime: MTIME, noDirRecurse: true }, files);
  }
  rmSync(stage, { recursive: true, force: true });
  return file;
}

export function sums({ out }) {
  const names = readdirSync(out)
    .filter((n) => n.startsWith(`ccb-v${version}-`) && /\.(tar\.gz|zip)$/.test(n))
    .sort();
  if (names.length === 0) throw new Error(`no ccb-v${version}-* archives in ${out}`);
  const lines = names.map(
    (n) =>
      `${createHash("sha256")
        .update(readFileSync(join(out, n)))
        .digest("hex")}  ${n}`,
  );
  const file = join(out, "SHA256SUMS");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [cmd, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      target: { type: "string" },
      binary: { type: "string" },
      runtime: { type: "string" },
      out: { type: "string" },
    },
  });
  const out = resolve(values.out ?? join(root, "dist/release"));
  mkdirSync(out, { recursive: true });
  if (cmd === "archive") {
    if (!values.target || !values.binary) throw new Error("archive needs --target <key> --binary <file>");
    const rt = values.runtime ? resolve(values.runtime) : undefined;
    process.stdout.write(
      `${await archive({ target: values.target, binary: resolve(values.binary), out, runtime: rt })}\n`,
    );
  } else if (cmd === "runtime") {
    if (!values.target) throw new Error("runtime needs --target <key>");
    const f = await runtime({ target: values.target, out });
    if (f) process.stdout.write(`${f}\n`);
  } else if (cmd === "sums") {
    process.stdout.write(`${sums({ out })}\n`);
  } else {
    process.stderr.write(
      "usage: node scripts/release-assets.mjs runtime --target <key> [--out DIR] | archive --target <key> --binary <file> [--runtime <archive>] [--out DIR] | sums [--out DIR]\n",
    );
    process.exit(2);
  }
}
