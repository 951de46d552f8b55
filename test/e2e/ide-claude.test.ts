import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { claudeDirs, makeClaudeDirs, type PtyProcess, startClaude, stopClaude } from "../helpers/claude-session.ts";
import { lastToolResult, mainRequests, resultText, submitPrompt } from "../helpers/claude-turns.ts";
import { spawnCcb } from "../helpers/cli.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { claudeBin } from "../helpers/peers.ts";
import { exitOf, Output } from "../helpers/proc-output.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * The real Claude Code CLI (interactive, under a pty) against `ccb ide --no-workbench`, with a
 * scripted fake Messages API: it connects, a model turn calling mcp__ide__getDiagnostics gets the
 * IDE's answer into its next request, and an Edit's openDiff fails so the CLI falls back to its
 * terminal diff, which we accept there: the file changes on disk.
 */

describe("real claude CLI against ccb ide --no-workbench", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-ide-claude-" });
  const dirs = claudeDirs(tmp.path);
  const { ws, home, ctmp } = dirs;
  const file = join(ws, "main.ts");
  const main = mainRequests();
  let api: FakeAnthropic;
  let ccb: ReturnType<typeof spawnCcb>;
  let ccbErr: Output;
  let claude: PtyProcess | undefined;
  let claudePid: number | undefined;
  let lockPath = "";

  before(async () => {
    // A missing claude fails the suite here, before any process is started.
    claudeBin();
    makeClaudeDirs(dirs);
    writeFileSync(file, "export const x = 1;\n");
    api = await startFakeAnthropic({
      script: main.answer((n) => {
        if (n === 0) return { toolUses: [{ name: "mcp__ide__getDiagnostics", input: { uri: `file://${file}` } }] };
        if (n === 1) return { toolUses: [{ name: "Read", input: { file_path: file } }] };
        if (n === 2)
          return { toolUses: [{ name: "Edit", input: { file_path: file, old_string: "x = 1", new_string: "x = 2" } }] };
        return { text: "Done." };
      }),
    });
    ccb = spawnCcb(["ide", "--no-workbench", "--workspace", ws, "--log-level", "debug"], {
      env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: "" },
    });
    ccbErr = new Output(ccb.stderr);
    new Output(ccb.stdout);
    lockPath = (await ccbErr.waitFor(/lock file (\S+\.lock)/))[1]!;
  });

  after(async () => {
    try {
      if (claude) await stopClaude(claude, claudePid);
      if (ccb) {
        ccb.kill("SIGTERM");
        await exitOf(ccb);
      }
      await api?.close();
    } finally {
      tmp.cleanup();
    }
  });

  it("connects (initialize, ide_connected, tools/list) using the lock file in ~/.claude/ide", async () => {
    assert.equal(lockPath, join(home, ".claude", "ide", lockPath.split("/").pop()!));
    const port = Number(lockPath.match(/(\d+)\.lock$/)![1]);
    claude = startClaude({
      cwd: ws,
      home,
      tmp: ctmp,
      idePort: port,
      apiUrl: api.url,
      allowedTools: ["mcp__ide__getDiagnostics", "Read"],
    });
    claudePid = Number((await ccbErr.waitFor(/Claude Code connected \(pid (\d+)\)/))[1]);
    await ccbErr.waitFor(/request tools\/list/);
    assert.ok(claudePid > 0);
    // Which requests claude opened the IDE socket with (the server logs each method it receives).
    const methods = [...ccbErr.text.matchAll(/request (\S+)/g)].map((m) => m[1]);
    console.error(`IDE socket methods: ${methods.join(", ")}`);
    assert.ok(methods.includes("initialize"), methods.join(", "));
  });

  it("a model turn calling mcp__ide__getDiagnostics gets the IDE's answer in its next request", async () => {
    const p = claude!;
    await p.waitFor(/for shortcuts/);
    await submitPrompt(p, "please fix main.ts");
    const second = await main.wait(1);
    assert.ok(
      second.tools.some((t: any) => t.name === "mcp__ide__getDiagnostics"),
      "the model sees the IDE's getDiagnostics tool",
    );
    const r = lastToolResult(second);
    assert.ok(r, "a tool_result came back");
    assert.equal(r.is_error, true);
    assert.match(
      resultText(r),
      /BRIDGE_UNAVAILABLE: No workbench is attached to this IDE server: ccb ide was started with --no-workbench/,
    );
  });

  it("an Edit tries openDiff, which fails with a clear error (the CLI then falls back to its terminal diff)", async () => {
    await ccbErr.waitFor(/request tools\/call openDiff/);
    await ccbErr.waitFor(/openDiff failed: No workbench/);
    assert.equal(readFileSync(file, "utf8"), "export const x = 1;\n", "the IDE never writes the file");
  });

  it("claude leaving ends its connection, not the server; SIGTERM removes the lock file", async () => {
    await stopClaude(claude!, claudePid);
    claude = undefined;
    await ccbErr.waitFor(/IDE client disconnected/);
    assert.equal(ccb.exitCode, null, "ccb ide still runs");
    assert.equal(existsSync(lockPath), true);
    ccb.kill("SIGTERM");
    assert.equal((await exitOf(ccb)).code, 0);
    assert.equal(existsSync(lockPath), false);
  });
});
