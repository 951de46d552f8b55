import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Logger } from "../../../src/core/log.ts";
import { AgentBridge } from "../../../src/link/agent-bridge.ts";
import { pidAlive, until } from "../../helpers/process.ts";

// A real agent process: it answers every request with its params, writes a non-JSON line and a
// non-JSON-RPC object first when asked to ("noise"), and exits with the code it is given ("exit").
const AGENT = `
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "exit") process.exit(m.params.code);
  if (m.method === "noise") process.stdout.write('not json\\n{"hello":1}\\n');
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { params: m.params ?? null, pid: process.pid } }) + "\\n");
});
`;

function logger(warnings: string[]): Logger {
  const l: Logger = {
    debug() {},
    info() {},
    warn: (m: string) => void warnings.push(m),
    error() {},
    child: () => l,
  };
  return l;
}

/** A bridge connected the way the SDK's AcpServer connects it: two message streams. */
function connect(warnings: string[] = [], command = process.execPath) {
  const toAgent = new TransformStream<Record<string, unknown>>();
  const fromAgent = new TransformStream<Record<string, unknown>>();
  const bridge = new AgentBridge({
    agent: { command, args: ["-e", AGENT] },
    log: logger(warnings),
    localMode: "acceptEdits",
    maxMessageBytes: 1 << 20,
  });
  const lifecycle = bridge.connect({ readable: toAgent.readable, writable: fromAgent.writable });
  const writer = toAgent.writable.getWriter();
  const reader = fromAgent.readable.getReader();
  const call = async (id: number, method: string, params?: unknown) => {
    await writer.write({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    return (await reader.read()).value as { id: number; result: { params: Record<string, unknown>; pid: number } };
  };
  return { bridge, lifecycle, writer, reader, call };
}

describe("link agent bridge (the SDK's agent connector for /acp)", () => {
  it("starts the agent with the first message, not before, and puts the permission mode into session/new", async () => {
    const c = connect();
    assert.equal(c.bridge.pid, undefined, "connected but silent: no agent");
    const init = await c.call(1, "initialize", { protocolVersion: 1 });
    assert.equal(init.result.pid, c.bridge.pid);
    const plan = await c.call(2, "session/new", { cwd: "/", _meta: { permissionMode: "plan" } });
    assert.deepEqual(plan.result.params._meta, { permissionMode: "plan" });
    const bypass = await c.call(3, "session/new", { cwd: "/", _meta: { permissionMode: "bypassPermissions" } });
    assert.deepEqual(bypass.result.params._meta, { permissionMode: "acceptEdits" }, "no escalation");
    const other = await c.call(4, "session/prompt", { sessionId: "s", _meta: { permissionMode: "plan" } });
    assert.deepEqual(other.result.params._meta, { permissionMode: "plan" }, "only session/new is touched");
    // The connection ends (client gone): the agent is stopped.
    const pid = init.result.pid;
    await c.writer.close();
    await c.lifecycle.closed;
    await until(() => !pidAlive(pid), "the agent to stop");
  });

  it("drops agent lines that are not JSON-RPC, with a warning, and delivers the next one", async () => {
    const warnings: string[] = [];
    const c = connect(warnings);
    const r = await c.call(1, "noise");
    assert.equal(r.id, 1);
    assert.equal(warnings.length, 2, warnings.join("\n"));
    assert.match(warnings[0] as string, /non-JSON line/);
    assert.match(warnings[1] as string, /non-JSON-RPC message/);
    await c.writer.close();
    await c.lifecycle.closed;
  });

  it("ends the connection when the agent exits, with the exit as its reason", async () => {
    const c = connect();
    await c.call(1, "initialize");
    await c.writer.write({ jsonrpc: "2.0", id: 2, method: "exit", params: { code: 3 } });
    assert.equal((await c.reader.read()).done, true, "the agent's side of the stream ends");
    await c.lifecycle.closed;
    assert.deepEqual(c.bridge.exit, { code: 3, signal: null, reason: "agent exited (code 3)" });
  });

  it("a connection that ends before its first message started nothing", async () => {
    const c = connect();
    await c.writer.close();
    await c.lifecycle.closed;
    assert.equal(c.bridge.pid, undefined);
  });

  it("an agent command that cannot start ends its connection (code 127), not the link", async () => {
    const c = connect([], "/nonexistent/agent");
    await c.writer.write({ jsonrpc: "2.0", id: 1, method: "initialize" });
    assert.equal((await c.reader.read()).done, true);
    await c.lifecycle.closed;
    assert.equal(c.bridge.exit?.code, 127);
  });
});
