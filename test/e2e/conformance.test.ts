import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { parse } from "yaml";
import { repoRoot } from "../helpers/cli.ts";
import { conformance2026, node24 } from "../helpers/peers.ts";
import { httpServeFixture, waitExit } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.1.13, the last that runs on
 * Node 20) against `ccb serve --http`, with a baseline of the scenarios that need the reference
 * server's fixtures (test/fixtures/conformance-expected-failures.yml, each line justified).
 * The suite exits non-zero on an unexpected failure AND on a stale baseline entry.
 */

const GENERIC = [
  "server-initialize",
  "ping",
  "tools-list",
  "logging-set-level",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

describe("MCP conformance suite against ccb serve --http", { timeout: 300_000 }, () => {
  const fixture = httpServeFixture({ git: true });

  it("passes every generic scenario; only fixture scenarios are expected failures", async () => {
    const bin = join(repoRoot, "node_modules/.bin/conformance");
    const child = spawn(
      bin,
      [
        "server",
        "--url",
        fixture.serve.url,
        "--expected-failures",
        join(repoRoot, "test/fixtures/conformance-expected-failures.yml"),
      ],
      {
        cwd: repoRoot,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      },
    );
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (out += d));
    const exit = await waitExit(child);
    const summary = out.slice(out.indexOf("=== SUMMARY ==="));
    assert.equal(exit.code, 0, `conformance failed:\n${summary}`);
    for (const name of GENERIC) {
      assert.match(summary, new RegExp(`✓ ${name}: [1-9]\\d* passed, 0 failed`), `${name} must pass:\n${summary}`);
    }
    assert.match(summary, /Baseline check passed/);
  });
});

/**
 * The conformance suite's 0.2 line (0.2.0-alpha.12, the first with 2026-07-28 scenarios, on Node 24:
 * scripts/setup-peers.sh) with `--requirements 2026-07-28`: exactly the scenarios that revision
 * requires, frozen at its release. The suite's own baseline works by scenario, which would hide a
 * real failure beside a fixture one (server-stateless has both), so this reads every check's result
 * and compares by check id (test/fixtures/conformance-2026-expected-failures.yml, each justified).
 */
const MODERN_GENERIC = [
  "server-stateless",
  "tools-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
  "http-header-validation",
  "sep-2164-resource-not-found",
  "input-required-result-unsupported-methods",
  "input-required-result-validate-input",
];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: { untestable?: boolean };
}

describe("MCP conformance suite, 2026-07-28 requirements, against ccb serve --http", { timeout: 600_000 }, () => {
  const fixture = httpServeFixture({ git: true });
  const out = tmpdirFixture({ prefix: "ccb-conformance-2026-" });
  after(() => out.cleanup());

  it("every check passes but those that need the reference server's fixtures", async () => {
    const child = spawn(
      node24(),
      [conformance2026(), "server", "--url", fixture.serve.url, "--requirements", "2026-07-28", "-o", out.path],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
    );
    let log = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (log += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (log += d));
    const exit = await waitExit(child);
    assert.notEqual(exit.code, null, `the suite was killed (${exit.signal})`);
    const summary = log.slice(log.indexOf("=== SUMMARY ==="));

    // scenario -> its checks, from the suite's own result files (<scenario>-<timestamp>/checks.json)
    const results = new Map<string, Check[]>();
    for (const name of readdirSync(out.path)) {
      const scenario = name.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
      results.set(scenario, JSON.parse(readFileSync(join(out.path, name, "checks.json"), "utf8")));
    }
    const expected = parse(
      readFileSync(join(repoRoot, "test/fixtures/conformance-2026-expected-failures.yml"), "utf8"),
    ) as Record<string, string[] | "all">;

    const unexpected: string[] = [];
    const stale: string[] = [];
    let untestable = 0;
    for (const [scenario, checks] of results) {
      const listed = expected[scenario];
      for (const c of checks.filter((c) => c.status === "FAILURE")) {
        if (c.details?.untestable) untestable++;
        else if (listed !== "all" && !listed?.includes(c.id))
          unexpected.push(`${scenario} / ${c.id}: ${c.errorMessage ?? ""}`);
      }
      if (Array.isArray(listed))
        for (const id of listed)
          if (!checks.some((c) => c.id === id && c.status === "FAILURE")) stale.push(`${scenario} / ${id}`);
    }
    for (const scenario of Object.keys(expected)) if (!results.has(scenario)) stale.push(`${scenario} (not run)`);
    assert.deepEqual(unexpected, [], `failing checks that are not fixture ones:\n${summary}`);
    assert.deepEqual(stale, [], "expected failures that did not fail: remove them from the baseline");
    for (const scenario of MODERN_GENERIC) {
      const checks = results.get(scenario);
      assert.ok(
        checks?.some((c) => c.status === "SUCCESS"),
        `${scenario} ran and passed checks:\n${summary}`,
      );
    }
    // the removed methods (2025 era) are "not found" in this era: 404 and -32601, whatever their params
    const stateless = results.get("server-stateless")!;
    for (const m of ["initialize", "ping", "logging-setlevel"]) {
      const c = stateless.find((c) => c.id === `sep-2575-http-server-method-not-found-404-${m}`);
      assert.equal(c?.status, "SUCCESS", JSON.stringify(c));
    }
    console.error(
      `conformance 2026-07-28: ${results.size} scenarios; ${untestable} checks untestable without fixtures`,
    );
  });
});
