import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { claudeEnv, writeClaudeHome } from "../helpers/claude-session.ts";
import { ccbCommand } from "../helpers/cli.ts";
import { type FakeAnthropic, isSideRequest, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { claudeBin } from "../helpers/peers.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * The real `claude` CLI with `ccb serve --stdio` as an MCP server of its `--mcp-config`, the way a
 * person adds ccb to claude: claude opens it with a 2026-07-28 `server/discover` probe, and ccb
 * answers in that era, so the model's call reaches ccb's tool with no fallback to the 2025
 * handshake. Only the model is fake (the Messages API over HTTP).
 */
describe("claude --mcp-config with ccb serve --stdio", { timeout: 300_000 }, () => {
  const tmp = tmpdirFixture({ prefix: "ccb-claude-mcp-" });
  const ws = join(tmp.path, "proj");
  const home = join(tmp.path, "home");
  const ctmp = join(tmp.path, "tmp");
  const serveLog = join(tmp.path, "serve.log");
  const requests: Array<{ messages: Array<{ content: unknown }>; tools?: Array<{ name: string }> }> = [];
  let api: FakeAnthropic;

  before(async () => {
    claudeBin();
    for (const d of [ws, home, ctmp]) mkdirSync(d, { recursive: true });
    writeFileSync(join(ws, "notes.txt"), "the secret word is pelican\n");
    writeClaudeHome(home, ws);
    api = await startFakeAnthropic({
      script: ({ body }) => {
        if (isSideRequest(body)) return { text: "Fake title" };
        requests.push(body);
        const last = body.messages.at(-1);
        const answered =
          Array.isArray(last?.content) && last.content.some((c: { type: string }) => c.type === "tool_result");
        if (answered) return { text: "Done." };
        return { toolUses: [{ name: "mcp__ccb__fs_read", input: { path: "notes.txt" } }] };
      },
    });
  });
  after(async () => {
    await api?.close();
    tmp.cleanup();
  });

  it("claude opens ccb in the 2026-07-28 era and the model's fs_read comes back with the file", async () => {
    const { command, args } = ccbCommand([
      "serve",
      "--stdio",
      "--no-workbench",
      "--workspace",
      ws,
      "--log-level",
      "debug",
      "--log-file",
      serveLog,
    ]);
    const config = join(tmp.path, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { ccb: { type: "stdio", command, args } } }));
    const child = spawn(
      claudeBin(),
      [
        "-p",
        "Read notes.txt with ccb",
        "--mcp-config",
        config,
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__ccb__fs_read",
        "--permission-mode",
        "default",
      ],
      { cwd: ws, env: claudeEnv({ home, tmp: ctmp, apiUrl: api.url }), stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, out);

    const withResult = requests.find((b) =>
      b.messages.some(
        (m) => Array.isArray(m.content) && (m.content as Array<{ type: string }>).some((c) => c.type === "tool_result"),
      ),
    );
    assert.ok(withResult, `the model never got the tool's result:\n${out}`);
    assert.match(JSON.stringify(withResult.messages), /pelican/, "fs_read's text reached the model");
    assert.ok(
      requests[0]?.tools?.some((t) => t.name === "mcp__ccb__fs_read"),
      "claude offered ccb's tools to the model",
    );

    const log = readFileSync(serveLog, "utf8");
    assert.match(log, /stdio: a 2026-07-28 client \(server\/discover, no handshake\)/);
    assert.doesNotMatch(log, /stdio: a 2025-era client/, "no fallback to initialize");
  });
});
