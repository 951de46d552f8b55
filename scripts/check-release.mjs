#!/usr/bin/env node
// Offline release checks, run by CI (.ci/run) and `npm run check:release`:
//   - server.json validates against the vendored MCP Registry schema (schemas/mcp-server.schema.json, ajv)
//     and agrees with package.json (name = mcpName, versions, npm identifier, repository, `serve --stdio`);
//   - the generated npm manifests carry repository and mcpName;
//   - the ACP Registry entry (scripts/acp-registry.mjs) validates against schemas/acp-agent.schema.json,
//     agrees with package.json and the release archives, and its icon follows the registry's rules;
//   - THIRD_PARTY_NOTICES is up to date;
//   - every GitHub workflow passes action-validator (schema + expressions).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);
const Ajv = require("ajv");
const read = (f) => JSON.parse(readFileSync(join(root, f), "utf8"));
const problems = [];
const check = (ok, what) => {
  if (!ok) problems.push(what);
};

// server.json against the schema
const schema = read("schemas/mcp-server.schema.json");
const server = read("server.json");
const pkg = read("package.json");
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat("uri", (s) => {
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
});
const validate = ajv.compile(schema);
if (!validate(server)) for (const e of validate.errors) problems.push(`server.json${e.instancePath}: ${e.message}`);
check(server.$schema === schema.$id, `server.json $schema must be the vendored schema's $id (${schema.$id})`);

// agreement with package.json
const repoUrl = (pkg.repository?.url ?? "").replace(/^git\+/, "").replace(/\.git$/, "");
const owner = /github\.com\/([^/]+)\//.exec(`${repoUrl}/`)?.[1];
check(
  pkg.mcpName === server.name,
  `package.json mcpName (${pkg.mcpName}) must equal server.json name (${server.name})`,
);
check(
  owner && server.name === `io.github.${owner}/${pkg.name}`,
  `server.json name must be io.github.<repository owner>/${pkg.name} (repository ${repoUrl})`,
);
check(server.version === pkg.version, `server.json version ${server.version} != package.json ${pkg.version}`);
check(server.repository?.url === repoUrl, `server.json repository.url must be ${repoUrl}`);
const npmPkg = (server.packages ?? []).find((p) => p.registryType === "npm");
check(npmPkg, "server.json needs an npm package");
if (npmPkg) {
  check(npmPkg.identifier === pkg.name, `npm identifier ${npmPkg.identifier} != ${pkg.name}`);
  check(npmPkg.version === pkg.version, `npm package version ${npmPkg.version} != ${pkg.version}`);
  check(npmPkg.transport?.type === "stdio", "the npm package's transport must be stdio");
  const args = (npmPkg.packageArguments ?? []).filter((a) => a.type === "positional").map((a) => a.value);
  check(
    args[0] === "serve" && args[1] === "--stdio",
    `the npm package's arguments must start with serve --stdio, not ${args.join(" ")}`,
  );
  for (const v of npmPkg.environmentVariables ?? [])
    check(v.description, `environment variable ${v.name} needs a description`);
}
const rp = read("release-please-config.json").packages["."]["extra-files"] ?? [];
for (const jp of ["$.version", "$.packages[0].version"])
  check(
    rp.some((f) => f.path === "server.json" && f.jsonpath === jp),
    `release-please-config.json must bump server.json ${jp}`,
  );

// generated npm manifests
const out = mkdtempSync(join(tmpdir(), "ccb-check-"));
try {
  execFileSync(process.execPath, [join(root, "platforms/generate.mjs"), "--out", out], { stdio: "ignore" });
  for (const p of JSON.parse(readFileSync(join(out, "publish-order.json"), "utf8"))) {
    const m = JSON.parse(readFileSync(join(p.dir, "package.json"), "utf8"));
    check(m.repository?.url, `${m.name}: generated manifest has no repository`);
    if (!p.target)
      check(m.mcpName === pkg.mcpName, `${m.name}: the dispatcher must carry mcpName (the Registry checks it on npm)`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

// the ACP Registry entry and its icon
{
  const { agentJson, iconProblems, ICON } = await import("./acp-registry.mjs");
  const { TARGETS } = await import("../platforms/targets.mjs");
  const agentSchema = read("schemas/acp-agent.schema.json");
  const validateAgent = ajv.compile(agentSchema);
  const agent = agentJson(pkg);
  if (!validateAgent(agent))
    for (const e of validateAgent.errors) problems.push(`agent.json${e.instancePath}: ${e.message}`);
  check(agent.version === pkg.version, `agent.json version ${agent.version} != package.json ${pkg.version}`);
  check(
    agent.distribution.npx?.package === `${pkg.name}@${pkg.version}`,
    "agent.json npx package must be name@version",
  );
  check(agent.distribution.npx?.args?.[0] === "acp", "agent.json npx args must start the ACP agent (acp)");
  const binaries = Object.values(agent.distribution.binary ?? {});
  check(binaries.length > 0, "agent.json has no binary distribution");
  for (const b of binaries) {
    const name = b.archive.split("/").pop();
    check(
      TARGETS.some((t) => name === `ccb-v${pkg.version}-${t.key}.${t.exe.endsWith(".exe") ? "zip" : "tar.gz"}`),
      `agent.json archive ${name} is not one release.yml builds`,
    );
    check(b.archive.startsWith(`${repoUrl}/releases/download/v${pkg.version}/`), `agent.json archive ${b.archive}`);
  }
  for (const p of iconProblems(readFileSync(ICON, "utf8"))) problems.push(`acp-registry/icon.svg: ${p}`);
  const rel = readFileSync(join(root, ".github/workflows/release.yml"), "utf8");
  check(rel.includes("scripts/acp-registry.mjs"), "release.yml must generate the ACP Registry entry");
}

// notices
const n = spawnSync(process.execPath, [join(root, "scripts/notices.mjs"), "--check"], { encoding: "utf8" });
check(n.status === 0, n.stderr.trim() || "THIRD_PARTY_NOTICES check failed");

// workflows. action-validator 0.6.0's schema predates the `attestations` permission (needed by
// actions/attest-build-provenance): those lines are checked here and left out of its input.
const validator = join(root, "node_modules/.bin/action-validator");
const wfTmp = mkdtempSync(join(tmpdir(), "ccb-wf-"));
try {
  for (const f of readdirSync(join(root, ".github/workflows")).filter((f) => /\.ya?ml$/.test(f))) {
    const text = readFileSync(join(root, ".github/workflows", f), "utf8");
    for (const m of text.matchAll(/^\s*attestations:\s*(\S+)\s*$/gm))
      check(["read", "write", "none"].includes(m[1]), `.github/workflows/${f}: attestations: ${m[1]}`);
    for (const m of text.matchAll(/^\s*-?\s*uses:\s*([^\s#]+)/gm)) {
      if (m[1].startsWith("./")) continue;
      check(/@[0-9a-f]{40}$/.test(m[1]), `.github/workflows/${f}: ${m[1]} is not pinned by commit SHA`);
    }
    const copy = join(wfTmp, f);
    writeFileSync(copy, text.replace(/^\s*attestations:.*\n/gm, ""));
    const r = spawnSync(validator, [copy], { encoding: "utf8" });
    check(r.status === 0, `.github/workflows/${f}: action-validator failed\n${r.stdout}${r.stderr}`);
  }
} finally {
  rmSync(wfTmp, { recursive: true, force: true });
}

if (problems.length > 0) {
  for (const p of problems) process.stderr.write(`check-release: ${p}\n`);
  process.exit(1);
}
process.stderr.write("check-release: server.json, agent.json, manifests, notices and workflows are valid\n");
