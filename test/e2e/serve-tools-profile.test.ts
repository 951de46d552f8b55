import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { after, describe, it } from "node:test";
import { isClaude, writeMcpConfig } from "../../src/protocols/ide/mcp-tools.ts";
import { TOOL_PROFILES, workspaceTools } from "../../src/tools/catalog.ts";
import { spawnCcb } from "../helpers/cli.ts";
import { exitOf, Output } from "../helpers/proc-output.ts";
import { connectStdio } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * The editor profile `ccb ide -- claude` registers: the configuration file it hands claude, and the
 * real `ccb serve --stdio --tools editor` listing only the editor's powers.
 */
describe("the editor tools profile", { timeout: 120_000 }, () => {
  const ws = tmpdirFixture();
  after(() => ws.cleanup());

  it("ccb ide's MCP configuration: a 0600 file in a 0700 folder naming `serve --stdio --tools editor` for the roots, no secret, removed after", () => {
    const cfg = writeMcpConfig({ roots: [ws.path], runtime: "code-server" });
    try {
      assert.equal(statSync(cfg.path).mode & 0o777, 0o600);
      assert.equal(statSync(dirname(cfg.path)).mode & 0o777, 0o700);
      const json = JSON.parse(readFileSync(cfg.path, "utf8"));
      const server = json.mcpServers.ccb;
      assert.equal(server.type, "stdio");
      const tail = server.args.slice(server.args.indexOf("serve"));
      assert.deepEqual(tail, [
        "serve",
        "--stdio",
        "--tools",
        "editor",
        "--log-level",
        "warn",
        "--workspace",
        ws.path,
        "--runtime",
        "code-server",
      ]);
      assert.doesNotMatch(JSON.stringify(json), /token|secret|key/i);
    } finally {
      cfg.remove();
    }
    assert.equal(existsSync(dirname(cfg.path)), false);
    assert.equal(isClaude("/usr/local/bin/claude"), true);
    assert.equal(isClaude("claude-not"), false);
  });

  it("`ccb serve --stdio --tools editor` lists the editor's powers without files, search, terminal and git", async () => {
    const peer = await connectStdio(ws.path, ["--tools", "editor"]);
    try {
      const names = (await peer.client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(
        names,
        TOOL_PROFILES.editor.map((t) => t.name),
      );
      assert.ok(names.includes("refactor_rename") && names.includes("language_call_hierarchy"));
      assert.ok(names.includes("refactor_move"), "claude through ccb ide gets the import-updating move");
      assert.equal(names.filter((n) => /^(fs_|terminal_|git_)/.test(n)).length, 0);
      assert.ok(names.length < workspaceTools.length);
    } finally {
      await peer.close();
    }
  });

  it("an unknown profile stops startup with a clear error", async () => {
    const child = spawnCcb(["serve", "--stdio", "--no-workbench", "--tools", "bogus", "--workspace", ws.path]);
    const err = new Output(child.stderr);
    new Output(child.stdout);
    const { code } = await exitOf(child);
    assert.notEqual(code, 0);
    assert.match(err.text, /--tools must be all or editor, got "bogus"/);
  });
});
