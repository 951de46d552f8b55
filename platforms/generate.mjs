#!/usr/bin/env node
// Generates the npm packages of a release from the root package.json (never hand-edited):
//   <out>/<name>-<target>/   one platform package per compiled target: package.json with os/cpu/libc,
//                            files ["bin/"], preferUnplugged, no bin field, no scripts; bin/ccb[.exe]
//   <out>/<name>-runtime-<p>/ one runtime package per OpenVSCode Server platform a target carries
//                            (linux-x64, linux-arm64): the pinned upstream archive byte for byte (checked
//                            against src/runtime-fetch/pinned-manifest.json first), os/cpu/libc, no scripts; the
//                            platform package of that target depends on it at exactly the same version
//   <out>/<name>/            the dispatcher: bin/ccb.mjs (platforms/launcher.mjs), optionalDependencies
//                            on every platform package at exactly the same version, no scripts
//   <out>/publish-order.json the package folders, platform packages first, dispatcher last
//
// Usage: node platforms/generate.mjs [--out dist/platforms] [--bin <target>=<file>]... [--bin-dir <dir>]
//                                    [--runtime <target>=<archive>]... [--require-binaries] [--only <target>,...]
//   --bin-dir <dir> takes <dir>/<target>/ccb[.exe] and <dir>/<target>/runtime/<archive> (the layout the
//   release tarballs unpack to).
//   --require-binaries fails when a written platform package has no binary or, where one ships, no runtime.
//   --only limits which platform packages are written (the dispatcher still lists every target).
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runtimeAsset, verifyRuntimeArchive } from "./runtime.mjs";
import { platformPackageName, TARGETS } from "./targets.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

export async function generate(options = {}) {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const out = resolve(root, options.out ?? "dist/platforms");
  const bins = { ...(options.bins ?? {}) };
  if (options.binDir) {
    for (const t of TARGETS) {
      const f = join(resolve(options.binDir), t.key, t.exe);
      if (!bins[t.key] && existsSync(f)) bins[t.key] = f;
    }
  }
  const runtimes = { ...(options.runtimes ?? {}) };
  if (options.binDir) {
    for (const t of TARGETS) {
      const a = runtimeAsset(t.key);
      const f = a && join(resolve(options.binDir), t.key, "runtime", a.fileName);
      if (f && !runtimes[t.key] && existsSync(f)) runtimes[t.key] = f;
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
    const src = bins[t.key];
    if (!src && options.requireBinaries)
      throw new Error(`no binary for ${t.key} (pass --bin ${t.key}=<file> or --bin-dir)`);
    const runtime = await runtimePackage(t, runtimes[t.key], options.requireBinaries);
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
      ...(runtime ? { dependencies: { [runtime.name]: pkg.version } } : {}),
    };
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(
      join(dir, "README.md"),
      `# ${name}\n\nThe compiled \`ccb\` executable for ${t.key}. Install [\`${pkg.name}\`](https://www.npmjs.com/package/${pkg.name}) instead: it picks this package on matching machines.\n`,
    );
    // The binary embeds third-party code: its notices travel with it.
    for (const f of ["LICENSE", "THIRD_PARTY_NOTICES"])
      if (existsSync(join(root, f))) copyFileSync(join(root, f), join(dir, f));
    if (src) {
      copyFileSync(src, join(dir, "bin", t.exe));
      chmodSync(join(dir, "bin", t.exe), 0o755);
    }
    if (runtime) order.push({ name: runtime.name, dir: runtime.dir, target: t.key, binary: false, runtime: true });
    order.push({ name, dir, target: t.key, binary: Boolean(src) });
  }

  /** The runtime package a target depends on (written once its archive is checked), or undefined. */
  async function runtimePackage(t, archive, required) {
    const asset = runtimeAsset(t.key);
    if (!asset) return undefined;
    if (!archive) {
      if (required)
        throw new Error(`no runtime archive for ${t.key} (pass --runtime ${t.key}=<${asset.fileName}> or --bin-dir)`);
      return undefined;
    }
    await verifyRuntimeArchive(archive, asset);
    const name = `${pkg.name}-runtime-${asset.platform}`;
    const dir = join(out, unscoped(name));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const manifest = {
      name,
      version: pkg.version,
      description: `OpenVSCode Server ${asset.version} (${asset.platform}), the workbench ${pkg.name} runs: the upstream release archive, unchanged (SHA-256 ${asset.sha256}). Installed automatically with ${pkg.name}; do not depend on it directly.`,
      license: "MIT",
      ...(repository ? { repository: { ...repository, directory: "platforms" } } : {}),
      os: [t.os],
      cpu: [t.cpu],
      ...(t.libc ? { libc: [t.libc] } : {}),
      files: [asset.fileName],
      preferUnplugged: true,
    };
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(
      join(dir, "README.md"),
      `# ${name}\n\n[OpenVSCode Server](https://github.com/gitpod-io/openvscode-server) ${asset.version} for ${asset.platform}: \`${asset.fileName}\` from its GitHub release, byte for byte (SHA-256 \`${asset.sha256}\`). \`ccb\` installs it into its cache on first use, checking that digest again. Install [\`${pkg.name}\`](https://www.npmjs.com/package/${pkg.name}) instead of this package.\n`,
    );
    copyFileSync(archive, join(dir, asset.fileName));
    return { name, dir };
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
      runtime: { type: "string", multiple: true },
      "require-binaries": { type: "boolean" },
    },
  });
  const bins = {};
  for (const b of values.bin ?? []) {
    const i = b.indexOf("=");
    if (i < 1) throw new Error(`--bin wants <target>=<file>, got ${b}`);
    bins[b.slice(0, i)] = resolve(b.slice(i + 1));
  }
  const runtimes = {};
  for (const b of values.runtime ?? []) {
    const i = b.indexOf("=");
    if (i < 1) throw new Error(`--runtime wants <target>=<archive>, got ${b}`);
    runtimes[b.slice(0, i)] = resolve(b.slice(i + 1));
  }
  const r = await generate({
    out: values.out,
    bins,
    runtimes,
    binDir: values["bin-dir"],
    only: values.only?.split(",").filter(Boolean),
    requireBinaries: values["require-binaries"],
  });
  for (const p of r.packages)
    process.stdout.write(
      `${p.name}@${r.version} -> ${p.dir}${p.target && !p.binary && !p.runtime ? " (no binary)" : ""}\n`,
    );
}
