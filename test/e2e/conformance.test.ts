import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { repoRoot } from "../helpers/cli.ts";
import { type HttpServe, startHttpServe, waitExit } from "../helpers/serve.ts";
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
  const dir = tmpdirFixture({ git: true });
  let srv: HttpServe;

  before(async () => {
    srv = await startHttpServe(dir.path);
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    dir.cleanup();
  });

  it("passes every generic scenario; only fixture scenarios are expected failures", async () => {
    const bin = join(repoRoot, "node_modules/.bin/conformance");
    const child = spawn(
      bin,
      [
        "server",
        "--url",
        srv.url,
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
