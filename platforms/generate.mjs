#!/usr/bin/env node
// Generates the npm packages of a release from the root package.json (never hand-edited):
//   <out>/<name>-<target>/   one platform package per compiled target: package.json with os/cpu/libc,
//                            files ["bin/"], preferUnplugged, no bin field, no scripts; bin/ccb[.exe]
//   <out>/<name>/            the dispatcher: bin/ccb.mjs (platforms/launcher.mjs), optionalDependencies
//                            on every platform package at exactly the same version, no scripts
//   <out>/publish-order.json the package folders, platform packages first, dispatcher last
//
// Usage: node platforms/generate.mjs [--out dist/platforms] [--bin <target>=<file>]... [--bin-dir <dir>]
//                                    [--require-binaries] [--only <target>,...]
//   --bin-dir <dir> takes <dir>/<target>/ccb[.exe] (the layout release.yml downloads artifacts into).
//   --only limits which platform packages are written (the dispatcher still lists every target).
//   --require-binaries fails when a written platform package has no binary (release builds).
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { platformPackageName, TARGETS } from "./targets.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

export function generate(options = {}) {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const out = resolve(root, options.out ?? "dist/platforms");
  const bins = { ...(options.bins ?? {}) };
  if (options.binDir) {
    for (const t of TARGETS) {
      const f = join(resolve(options.binDir), t.key, t.exe);
      if (!bins[t.key] && existsSync(f)) bins[t.key] = f;
    }
  }
  const only = options.only ? new Set(options.only) : undefined;
  for (const k of only ?? []) if (!TARGETS.some((t) => t.key === k)) throw new Error(`unknown target ${k}`);

  const repoUrl = repositoryUrl(pkg);
  const repository = repoUrl ? { type: "git", url: repoUrl } : undefined;
  const unscoped = (name) => name.replace(/^@[^/]+\//, "");
  mkdirSync(out, { recursive: true });
  const order = [];

  for (const t of TARGETS) {
    if (only && !only.has(t.key)) continue;
    const name = platformPackageName(pkg.name, t.key);
    const dir = join(out, unscoped(name));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, "bin"), { recursive: true });
    const manifest = {
      name,
      version: pkg.version,
      description: `The ${t.key} binary of ${pkg.name}. Installed automatically by the ${pkg.name} package; do not depend on it directly.`,
      license: pkg.license,
      ...(repository ? { repository: { ...repository, directory: "platforms" } } : {}),
      ...(pkg.homepage ? { homepage: pkg.homepage } : {}),
      os: [t.os],
      cpu: [t.cpu],
      ...(t.libc ? { libc: [t.libc] } : {}),
      files: ["bin/", "THIRD_PARTY_NOTICES"],
      preferUnplugged: true,
    };
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(
      join(dir, "README.md"),
      `# ${name}\n\nThe compiled \`ccb\` executable for ${t.key}. Install [\`${pkg.name}\`](https://www.npmjs.com/package/${pkg.name}) instead: it picks this package on matching machines.\n`,
    );
    // The binary embeds third-party code: its notices travel with it.
    for (const f of ["LICENSE", "THIRD_PARTY_NOTICES"])
      if (existsSync(join(root, f))) copyFileSync(join(root, f), join(dir, f));
    const src = bins[t.key];
    if (src) {
      copyFileSync(src, join(dir, "bin", t.exe));
      chmodSync(join(dir, "bin", t.exe), 0o755);
    } else if (options.requireBinaries) {
      throw new Error(`no binary for ${t.key} (pass --bin ${t.key}=<file> or --bin-dir)`);
    }
    order.push({ name, dir, target: t.key, binary: Boolean(src) });
  }

  const dispatcher = {
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    license: pkg.license,
    ...(repository ? { repository } : {}),
    ...(pkg.homepage ? { homepage: pkg.homepage } : {}),
    ...(pkg.keywords ? { keywords: pkg.keywords } : {}),
    // The MCP Registry verifies the npm package by this field (server.json names it).
    ...(pkg.mcpName ? { mcpName: pkg.mcpName } : {}),
    bin: { ccb: "bin/ccb.mjs" },
    files: ["bin/"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(TARGETS.map((t) => [platformPackageName(pkg.name, t.key), pkg.version])),
  };
  const ddir = join(out, unscoped(pkg.name));
  rmSync(ddir, { recursive: true, force: true });
  mkdirSync(join(ddir, "bin"), { recursive: true });
  writeFileSync(join(ddir, "package.json"), `${JSON.stringify(dispatcher, null, 2)}\n`);
  copyFileSync(join(root, "platforms/launcher.mjs"), join(ddir, "bin/ccb.mjs"));
  chmodSync(join(ddir, "bin/ccb.mjs"), 0o755);
  if (existsSync(join(root, "README.md"))) copyFileSync(join(root, "README.md"), join(ddir, "README.md"));
  if (existsSync(join(root, "LICENSE"))) copyFileSync(join(root, "LICENSE"), join(ddir, "LICENSE"));
  order.push({ name: pkg.name, dir: ddir, target: null, binary: false });
  writeFileSync(join(out, "publish-order.json"), `${JSON.stringify(order, null, 2)}\n`);
  return { out, version: pkg.version, packages: order };
}

/** repository.url from package.json, else the GitHub repository of the running workflow. */
function repositoryUrl(pkg) {
  const r = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  if (r)
    return r.startsWith("git+") || r.startsWith("http") ? r : `git+https://github.com/${r.replace(/^github:/, "")}.git`;
  if (process.env.GITHUB_REPOSITORY) return `git+https://github.com/${process.env.GITHUB_REPOSITORY}.git`;
  return undefined;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      out: { type: "string" },
      bin: { type: "string", multiple: true },
      "bin-dir": { type: "string" },
      only: { type: "string" },
      "require-binaries": { type: "boolean" },
    },
  });
  const bins = {};
  for (const b of values.bin ?? []) {
    const i = b.indexOf("=");
    if (i < 1) throw new Error(`--bin wants <target>=<file>, got ${b}`);
    bins[b.slice(0, i)] = resolve(b.slice(i + 1));
  }
  const r = generate({
    out: values.out,
    bins,
    binDir: values["bin-dir"],
    only: values.only?.split(",").filter(Boolean),
    requireBinaries: values["require-binaries"],
  });
  for (const p of r.packages)
    process.stdout.write(`${p.name}@${r.version} -> ${p.dir}${p.target && !p.binary ? " (no binary)" : ""}\n`);
}
