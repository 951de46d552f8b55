#!/usr/bin/env node
// The ACP Registry entry of ccb (github.com/agentclientprotocol/registry: one folder per agent with
// agent.json and icon.svg), generated from package.json and platforms/targets.mjs:
//   node scripts/acp-registry.mjs                 -> agent.json on stdout
//   node scripts/acp-registry.mjs --out <dir>     -> <dir>/ccb/agent.json and <dir>/ccb/icon.svg
// The release workflow runs it for each release and uploads both files to the GitHub release;
// scripts/check-release.mjs validates the result against schemas/acp-agent.schema.json.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { TARGETS } from "../platforms/targets.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
export const ICON = join(root, "acp-registry", "icon.svg");

const OS = { linux: "linux", darwin: "darwin", win32: "windows" };
const CPU = { x64: "x86_64", arm64: "aarch64" };

/** The registry's platform key of a ccb target, or undefined when the registry has none (musl, armhf). */
export function registryPlatform(target) {
  if (target.libc === "musl") return undefined;
  const os = OS[target.os];
  const cpu = CPU[target.cpu];
  return os && cpu ? `${os}-${cpu}` : undefined;
}

/** The repository's https URL from package.json's `repository`. */
export function repositoryUrl(pkg) {
  const raw = typeof pkg.repository === "string" ? pkg.repository : (pkg.repository?.url ?? "");
  return raw.replace(/^git\+/, "").replace(/\.git$/, "");
}

/** agent.json: npx of the npm package and the release archive of every target the registry can name. */
export function agentJson(pkg, targets = TARGETS) {
  const repo = repositoryUrl(pkg);
  const owner = /github\.com\/([^/]+)\//.exec(`${repo}/`)?.[1];
  const tag = `v${pkg.version}`;
  const binary = {};
  for (const t of targets) {
    const key = registryPlatform(t);
    if (!key || binary[key]) continue;
    const ext = t.exe.endsWith(".exe") ? "zip" : "tar.gz";
    binary[key] = {
      archive: `${repo}/releases/download/${tag}/ccb-${tag}-${t.key}.${ext}`,
      cmd: `./${t.exe}`,
      args: ["acp"],
    };
  }
  return {
    id: pkg.name,
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    repository: repo,
    authors: owner ? [owner] : [],
    license: pkg.license,
    icon: "./icon.svg",
    distribution: {
      npx: { package: `${pkg.name}@${pkg.version}`, args: ["acp"] },
      binary,
    },
  };
}

const ALLOWED_PAINT = new Set(["currentcolor", "none", "inherit"]);

/** The registry's icon rules: square 16x16 (size or viewBox), monochrome in currentColor, no colour literals. */
export function iconProblems(svg) {
  const problems = [];
  const tag = /<svg\b[^>]*>/i.exec(svg)?.[0];
  if (!tag) return ["not an SVG document (no <svg> element)"];
  const attr = (name) => new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, "i").exec(tag)?.[1];
  const viewBox = attr("viewBox")
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (viewBox?.length !== 4 || viewBox.some((n) => !Number.isFinite(n)))
    problems.push("the <svg> element needs a viewBox");
  else if (viewBox[2] !== 16 || viewBox[3] !== 16)
    problems.push(`viewBox must be 16x16, not ${viewBox[2]}x${viewBox[3]}`);
  for (const dim of ["width", "height"]) {
    const v = attr(dim);
    if (v !== undefined && Number.parseFloat(v) !== 16) problems.push(`${dim} must be 16, not ${v}`);
  }
  for (const m of svg.matchAll(/\b(fill|stroke|stop-color|flood-color|lighting-color|color)\s*=\s*["']([^"']*)["']/gi))
    if (!ALLOWED_PAINT.has(m[2].trim().toLowerCase()))
      problems.push(`hard-coded ${m[1]}="${m[2]}" (use currentColor or none)`);
  for (const m of svg.matchAll(/\b(fill|stroke|stop-color|flood-color|color)\s*:\s*([^;"'}]+)/gi))
    if (!ALLOWED_PAINT.has(m[2].trim().toLowerCase())) problems.push(`hard-coded ${m[1]}: ${m[2].trim()} in a style`);
  if (/#[0-9a-f]{3,8}\b|\brgba?\(|\bhsla?\(/i.test(svg.replace(/\shref\s*=\s*["']#[^"']*["']/gi, "")))
    problems.push("a colour literal (#hex, rgb(), hsl()) appears in the icon");
  if (/<(image|script|foreignObject)\b/i.test(svg))
    problems.push("embedded images, scripts or foreign objects are not allowed");
  if (!/currentColor/i.test(svg)) problems.push("the icon must paint with currentColor");
  return problems;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const text = `${JSON.stringify(agentJson(pkg), null, 2)}\n`;
  if (!values.out) process.stdout.write(text);
  else {
    const dir = join(resolve(values.out), pkg.name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "agent.json"), text);
    copyFileSync(ICON, join(dir, "icon.svg"));
    process.stdout.write(`${dir}\n`);
  }
}
