import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { isAlive } from "../../src/core/terminals/process-tree.ts";
import { repoRoot, runCcb } from "../helpers/cli.ts";
import { connectStdio, type StdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * The smoke test CI runs against every runtime: Node (bin/ccb.mjs); with CCB_TEST_BIN the single
 * binary compiled by Bun, whose terminals must use Bun's own PTY (node-pty dies under Bun); with
 * CCB_TEST_RUNTIME=deno `deno run -A dist/node/main.mjs`, whose terminals must be the honest pipe
 * fallback (node-pty's writes fail with EBADF under Deno).
 */
const compiled = Boolean(process.env.CCB_TEST_BIN);
const deno = !compiled && process.env.CCB_TEST_RUNTIME === "deno";
const expectedBackend = compiled ? "bun-terminal" : deno ? "pipe" : "node-pty";
const expectedRuntime = compiled ? "bun" : deno ? "deno" : "node";
const label = compiled ? `compiled binary ${process.env.CCB_TEST_BIN}` : deno ? "deno run" : "node build";
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };

type Structured = Record<string, unknown>;

describe(`smoke (${label})`, () => {
  const dir = tmpdirFixture({ prefix: "ccb-smoke-" });
  let peer: StdioPeer;

  async function callTool(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ text: string; structured: Structured }> {
    const r = await peer.client.callTool({ name, arguments: args });
    const text = (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
    assert.ok(!r.isError, `${name} failed: ${text}\nserver stderr:\n${peer.stderr()}`);
    return { text, structured: (r.structuredContent ?? {}) as Structured };
  }

  before(async () => {
    peer = await connectStdio(dir.path, ["--no-workbench"]);
  });
  after(async () => {
    await peer?.close();
    dir.cleanup();
  });

  it("--version prints the package version", async () => {
    const r = await runCcb(["--version"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), pkg.version);
  });

  it("serve --stdio answers tools/list", async () => {
    const { tools } = await peer.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      "workspace_status",
      "fs_read",
      "fs_search",
      "git_status",
      "terminal_create",
      "terminal_read",
      "terminal_kill",
    ]) {
      assert.ok(names.includes(name), `${name} is listed (got ${names.join(", ")})`);
    }
  });

  it("workspace_status names the runtime and its version", async () => {
    const { text, structured } = await callTool("workspace_status", {});
    const platform = structured.platform as { runtime: string; runtimeVersion: string };
    assert.equal(platform.runtime, expectedRuntime);
    assert.match(platform.runtimeVersion, /^\d+\.\d+\.\d+/);
    assert.match(text, new RegExp(`\\(${expectedRuntime} ${platform.runtimeVersion.replaceAll(".", "\\.")}\\)`));
  });

  it(`round-trips through the terminal backend (${expectedBackend}) over MCP`, { timeout: 120_000 }, async () => {
    const created = await callTool("terminal_create", {
      command: "bash",
      args: ["--norc", "--noprofile"],
      cols: 100,
      rows: 30,
    });
    const terminal = created.structured.terminal as { id: string; backend: string; isPty: boolean; pid: number };
    assert.equal(terminal.backend, expectedBackend);
    assert.equal(terminal.isPty, !deno);

    const marker = randomBytes(4).toString("hex");
    // The shell computes part of the marker, so the echo of the typed line cannot match.
    const wrote = await callTool("terminal_write", { id: terminal.id, data: `echo hi-${marker}-$((6*7))\n` });
    let offset = wrote.structured.offset as number;
    let seen = "";
    const deadline = Date.now() + 90_000;
    while (!seen.includes(`hi-${marker}-42`)) {
      assert.ok(Date.now() < deadline, `marker never appeared; output so far: ${JSON.stringify(seen)}`);
      const r = await callTool("terminal_read", { id: terminal.id, offset, view: "output", waitMs: 1000 });
      seen += r.structured.output as string;
      offset = r.structured.nextOffset as number;
    }
    const screen = await callTool("terminal_read", { id: terminal.id });
    assert.match(screen.structured.screen as string, new RegExp(`^hi-${marker}-42$`, "m"));

    if (deno) {
      // The pipe fallback says what it is instead of pretending to resize.
      const r = await peer.client.callTool({
        name: "terminal_resize",
        arguments: { id: terminal.id, cols: 81, rows: 23 },
      });
      assert.equal(r.isError, true);
      assert.match(JSON.stringify(r.content), /pipe fallback/);
      await callTool("terminal_kill", { id: terminal.id });
      assert.equal(isAlive(terminal.pid), false);
      return;
    }
    // A PTY has a size the shell can see.
    await callTool("terminal_resize", { id: terminal.id, cols: 81, rows: 23 });
    const sized = await callTool("terminal_write", { id: terminal.id, data: "stty size\n" });
    offset = sized.structured.offset as number;
    seen = "";
    while (!/^23 81\r?$/m.test(seen)) {
      assert.ok(Date.now() < deadline, `stty size never answered; output so far: ${JSON.stringify(seen)}`);
      const r = await callTool("terminal_read", { id: terminal.id, offset, view: "output", waitMs: 1000 });
      seen += r.structured.output as string;
      offset = r.structured.nextOffset as number;
    }

    const killed = await callTool("terminal_kill", { id: terminal.id });
    const info = killed.structured.terminal as { running: boolean; signal: string | null };
    assert.equal(info.running, false);
    assert.ok(info.signal === "SIGTERM" || info.signal === "SIGKILL", String(info.signal));
    assert.equal(isAlive(terminal.pid), false);
  });

  it("kills its terminals when the client goes away", { timeout: 120_000 }, async () => {
    // This child ignores SIGHUP, so the kernel's hang-up on PTY close alone would not end it:
    // only the server's own shutdown (dispose) does.
    const created = await callTool("terminal_create", {
      command: "bash",
      args: ["-c", "trap '' HUP; echo ignoring-$((1+1)); exec sleep 1000"],
    });
    const terminal = created.structured.terminal as { id: string; pid: number };
    const pid = terminal.pid;
    let offset = 0;
    let seen = "";
    while (!seen.includes("ignoring-2")) {
      const r = await callTool("terminal_read", { id: terminal.id, offset, view: "output", waitMs: 1000 });
      assert.equal((r.structured.terminal as { running: boolean }).running, true, `exited early: ${seen}`);
      seen += r.structured.output as string;
      offset = r.structured.nextOffset as number;
    }
    assert.ok(isAlive(pid));
    const serverPid = peer.transport.pid;
    assert.ok(serverPid);
    await peer.close();
    assert.equal(isAlive(serverPid), false, "the server exits once stdin closes");
    assert.equal(isAlive(pid), false, "the terminal's child was killed on shutdown");
  });
});
