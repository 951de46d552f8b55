#!/usr/bin/env node
// The release assets, made the same way by release.yml and by the tests:
//   archive --target <key> --binary <file> [--out dist/release]   -> ccb-v<version>-<key>.tar.gz
//           (ccb, LICENSE, THIRD_PARTY_NOTICES; fixed mtimes and owners; zip for a .exe)
//   sums [--out dist/release]                                      -> SHA256SUMS of every ccb-v* archive
// The version comes from package.json.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as tar from "tar";

const root = fileURLToPath(new URL("..", import.meta.url));
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
const MTIME = new Date("2000-01-01T00:00:00Z");

export async function archive({ target, binary, out }) {
  const exe = basename(binary).endsWith(".exe") ? "ccb.exe" : "ccb";
  const name = `ccb-v${version}-${target}`;
  const stage = join(out, `.stage-${name}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  copyFileSync(binary, join(stage, exe));
  chmodSync(join(stage, exe), 0o755);
  for (const f of ["LICENSE", "THIRD_PARTY_NOTICES"]) copyFileSync(join(root, f), join(stage, f));
  const files = [exe, "LICENSE", "THIRD_PARTY_NOTICES"];
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
    options: { target: { type: "string" }, binary: { type: "string" }, out: { type: "string" } },
  });
  const out = resolve(values.out ?? join(root, "dist/release"));
  mkdirSync(out, { recursive: true });
  if (cmd === "archive") {
    if (!values.target || !values.binary) throw new Error("archive needs --target <key> --binary <file>");
    process.stdout.write(`${await archive({ target: values.target, binary: resolve(values.binary), out })}\n`);
  } else if (cmd === "sums") {
    process.stdout.write(`${sums({ out })}\n`);
  } else {
    process.stderr.write(
      "usage: node scripts/release-assets.mjs archive --target <key> --binary <file> [--out DIR] | sums [--out DIR]\n",
    );
    process.exit(2);
  }
}
