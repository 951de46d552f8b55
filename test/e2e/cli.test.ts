import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCcb } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

describe("ccb CLI", () => {
  it("--help explains every command", async () => {
    const r = await runCcb(["--help"]);
    assert.equal(r.code, 0);
    for (const c of ["serve", "ide", "acp", "link", "stream", "runtime"]) assert.match(r.stdout, new RegExp(`\\b${c}\\b`));
  });

  it("flags after `--` belong to the child command, --help included", async () => {
    const home = tmpdirFixture({ prefix: "ccb-cli-home-" });
    try {
      const r = await runCcb(["ide", "--no-workbench", "--log-level", "error", "--", "sh", "-c", 'echo "child got: $*"', "sh", "--help", "-x"], {
        cwd: home.path,
        env: { ...process.env, HOME: home.path, CLAUDE_CONFIG_DIR: join(home.path, ".claude") },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /child got: --help -x/);
      assert.doesNotMatch(r.stdout, /USAGE/);
    } finally {
      home.cleanup();
    }
  });

  it("an unknown subcommand fails with a message", async () => {
    const r = await runCcb(["frobnicate"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /frobnicate/i);
  });
});
