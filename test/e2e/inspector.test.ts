import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { workspaceTools } from "../../src/tools/catalog.ts";
import { ccbCommand, repoRoot } from "../helpers/cli.ts";
import { cleanEnv, type HttpServe, startHttpServe, waitExit } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/** The MCP Inspector CLI (@modelcontextprotocol/inspector) as a real client of ccb serve, over both transports. */

const INSPECTOR = join(repoRoot, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
const TOKEN = "inspector-token-abcdefghijklmnopqrstuvwxyz";

async function inspector(
  catalog: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [INSPECTOR, "--cli", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: cleanEnv({ MCP_CATALOG_PATH: catalog, NO_COLOR: "1" }),
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const { code } = await waitExit(child);
  return { code, stdout, stderr };
}

describe("MCP Inspector CLI against ccb serve", { timeout: 300_000 }, () => {
  const dir = tmpdirFixture();
  const cat = tmpdirFixture({ prefix: "ccb-inspector-" });
  const catalog = join(cat.path, "mcp.json");
  let srv: HttpServe;
  const stdioTarget = () => {
    const { command, args } = ccbCommand(["serve", "--no-workbench", "--stdio", "--workspace", dir.path]);
    return [command, ...args];
  };

  before(async () => {
    writeFileSync(join(dir.path, "hello.txt"), "hello inspector\n");
    srv = await startHttpServe(dir.path, [], { CCB_AUTH_TOKEN: TOKEN });
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
    dir.cleanup();
    cat.cleanup();
  });

  it("stdio: tools/list --strict lists every tool with portable schemas (0 errors)", async () => {
    const r = await inspector(catalog, [...stdioTarget(), "--method", "tools/list", "--strict"]);
    assert.equal(r.code, 0, r.stderr);
    const names = (JSON.parse(r.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort();
    assert.deepEqual(names, workspaceTools.map((t) => t.name).sort());
    assert.match(r.stderr, /\b0 errors\b/);
  });

  it("stdio: tools/call fs_read with --tool-arg returns text and structuredContent", async () => {
    const r = await inspector(catalog, [
      ...stdioTarget(),
      "--method",
      "tools/call",
      "--tool-name",
      "fs_read",
      "--tool-arg",
      "path=hello.txt",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as {
      content: Array<{ type: string; text: string }>;
      structuredContent: { content: string };
    };
    assert.equal(res.content[0]?.type, "text");
    assert.equal(res.structuredContent.content, "hello inspector\n");
  });

  it("stdio: an unknown tool fails the call (non-zero exit)", async () => {
    const r = await inspector(catalog, [...stdioTarget(), "--method", "tools/call", "--tool-name", "no_such_tool"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /no_such_tool/);
  });

  it("http: tools/list with the bearer header", async () => {
    const r = await inspector(catalog, [
      srv.url,
      "--method",
      "tools/list",
      "--header",
      `Authorization: Bearer ${TOKEN}`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const names = (JSON.parse(r.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    assert.ok(names.includes("workspace_status"));
  });

  it("http: tools/call workspace_status with the bearer header", async () => {
    const r = await inspector(catalog, [
      srv.url,
      "--method",
      "tools/call",
      "--tool-name",
      "workspace_status",
      "--header",
      `Authorization: Bearer ${TOKEN}`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as { structuredContent: { roots: Array<{ path: string }> } };
    assert.equal(res.structuredContent.roots[0]?.path, dir.path);
  });

  it("http: without the bearer the inspector cannot connect", async () => {
    const r = await inspector(catalog, [srv.url, "--method", "tools/list"]);
    assert.notEqual(r.code, 0);
    assert.ok(!r.stdout.includes("workspace_status"));
  });
});
