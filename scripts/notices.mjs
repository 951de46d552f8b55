#!/usr/bin/env node
// Writes THIRD_PARTY_NOTICES: the licenses of what the compiled binary carries — every production
// dependency in package-lock.json (bundled into ccb's code and the bridge extension; node-pty is
// not embedded) and the Bun runtime. `--check` fails when the committed file is out of date (CI).
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
const NOT_EMBEDDED = new Set(["node-pty"]);

const entries = [];
for (const [key, info] of Object.entries(lock.packages)) {
  if (!key.startsWith("node_modules/") || info.dev || info.devOptional) continue;
  const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
  if (NOT_EMBEDDED.has(name) || key.includes("node_modules/node-pty/")) continue;
  const dir = join(root, key);
  const file = existsSync(dir) ? readdirSync(dir).find((f) => /^(licen[sc]e|copying)(\.|$)/i.test(f)) : undefined;
  const text = file
    ? readFileSync(join(dir, file), "utf8").trim()
    : `License: ${info.license ?? "see the package"} (the package ships no license file).`;
  entries.push({ id: `${name}@${info.version}`, license: info.license ?? "UNKNOWN", text });
}
entries.sort((a, b) => (a.id < b.id ? -1 : 1));
const seen = new Set();
const unique = entries.filter((e) => (seen.has(e.id) ? false : seen.add(e.id)));

const bun = JSON.parse(readFileSync(join(root, "node_modules/bun/package.json"), "utf8"));
let out =
  "Third-party software in the ccb binary\n======================================\n\n" +
  "The compiled ccb executable is the Bun runtime with ccb's bundled JavaScript and the packages below.\n\n" +
  `bun@${bun.version} (the runtime): MIT License, https://github.com/oven-sh/bun/blob/main/LICENSE.md\n` +
  "Bun statically links JavaScriptCore and WebKit's WTF (LGPL-2.0 / BSD), and further libraries\n" +
  "(BoringSSL, zlib, libarchive, mimalloc, c-ares, libuv parts, ...) under their own permissive\n" +
  "licenses, listed at https://bun.com/docs/project/licensing. The LGPL-licensed JavaScriptCore\n" +
  "source is available from https://github.com/oven-sh/WebKit.\n\n";
for (const e of unique) out += `${"-".repeat(72)}\n${e.id} (${e.license})\n\n${e.text}\n\n`;

const target = join(root, "THIRD_PARTY_NOTICES");
if (process.argv.includes("--check")) {
  if (!existsSync(target) || readFileSync(target, "utf8") !== out) {
    process.stderr.write("THIRD_PARTY_NOTICES is out of date: run `node scripts/notices.mjs`.\n");
    process.exit(1);
  }
} else {
  writeFileSync(target, out);
  process.stderr.write(`THIRD_PARTY_NOTICES: ${unique.length} packages\n`);
}
