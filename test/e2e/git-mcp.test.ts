import assert from "node:assert/strict";
import { appendFileSync, chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { git, gitMayFail } from "../helpers/git.ts";
import { connectStdio, type StdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * git_status / git_diff / git_run over MCP (`ccb serve --stdio`, the SDK client): a hook and an
 * fsmonitor planted in the repository do not run, refusals and escapes are isError results that
 * tell the caller what to do.
 */
describe("git tools over MCP stdio", () => {
  const ws = tmpdirFixture({ git: true, prefix: "ccb-git-mcp-" });
  const evidence = tmpdirFixture({ prefix: "ccb-evidence-" });
  const marker = join(evidence.path, "MARKER");
  const evil = join(evidence.path, "evil.sh");
  let peer: StdioPeer;

  async function call(name: string, args: Record<string, unknown>) {
    const r = await peer.client.callTool({ name, arguments: args });
    const text = (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
    return { isError: r.isError === true, text, structured: (r.structuredContent ?? {}) as Record<string, unknown> };
  }

  before(async () => {
    writeFileSync(evil, `#!/bin/sh\ntouch '${marker}'\nexit 0\n`, { mode: 0o755 });
    writeFileSync(join(ws.path, "a.txt"), "alpha\n");
    git(ws.path, "add", ".");
    git(ws.path, "commit", "-q", "-m", "initial");
    writeFileSync(join(ws.path, ".git", "hooks", "pre-commit"), `#!/bin/sh\n${evil}\n`);
    chmodSync(join(ws.path, ".git", "hooks", "pre-commit"), 0o755);
    appendFileSync(join(ws.path, ".git", "config"), `[core]\n\tfsmonitor = ${evil}\n`);
    gitMayFail(ws.path, "status"); // control: the planted fsmonitor is live for plain git
    assert.equal(existsSync(marker), true, "control run must execute the planted fsmonitor");
    rmSync(marker);
    peer = await connectStdio(ws.path);
  });
  after(async () => {
    await peer?.close();
    ws.cleanup();
    evidence.cleanup();
  });

  it("lists the git tools with their annotations", async () => {
    const { tools } = await peer.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get("git_status")?.annotations?.readOnlyHint, true);
    assert.equal(byName.get("git_diff")?.annotations?.readOnlyHint, true);
    assert.equal(byName.get("git_run")?.annotations?.readOnlyHint, false);
    assert.equal(byName.get("git_run")?.annotations?.destructiveHint, true);
    assert.equal(byName.get("git_run")?.annotations?.openWorldHint, true);
  });

  it("status, diff and a commit run without the planted hook or fsmonitor", async () => {
    writeFileSync(join(ws.path, "a.txt"), "alpha changed\n");
    const status = await call("git_status", {});
    assert.equal(status.isError, false, status.text);
    assert.match(status.text, /^\.M a\.txt$/m);
    const diff = await call("git_diff", {});
    assert.match(diff.text, /^\+alpha changed$/m);
    const commit = await call("git_run", { args: ["commit", "-am", "via mcp"] });
    assert.equal(commit.isError, false, commit.text);
    assert.equal(commit.structured.exitCode, 0, commit.text);
    assert.equal(git(ws.path, "log", "-1", "--format=%s").trim(), "via mcp");
    assert.equal(existsSync(marker), false, "a planted hook or fsmonitor ran");
  });

  it("refusals and path escapes are error results with a next step", async () => {
    const refused = await call("git_run", {
      args: ["-c", "core.hooksPath=.git/hooks", "commit", "--allow-empty", "-m", "x"],
    });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /GIT_REFUSED/);
    const config = await call("git_run", { args: ["config", "core.fsmonitor", evil] });
    assert.equal(config.isError, true);
    assert.match(config.text, /GIT_REFUSED/);
    const outside = await call("git_run", { args: ["log", `--output=${join(evidence.path, "log.txt")}`] });
    assert.equal(outside.isError, true);
    assert.match(outside.text, /PATH_OUTSIDE_WORKSPACE/);
    const cwd = await call("git_status", { path: evidence.path });
    assert.equal(cwd.isError, true);
    assert.match(cwd.text, /PATH_OUTSIDE_WORKSPACE/);
    assert.equal(existsSync(marker), false);
  });
});
