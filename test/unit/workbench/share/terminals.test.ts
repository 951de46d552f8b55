import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { type Core, createCore } from "../../../../src/core/core.ts";
import { CcbError, isCcbError, toCcbError } from "../../../../src/core/errors.ts";
import { isAlive } from "../../../../src/core/terminals/process-tree.ts";
import {
  isTerminalMethod,
  killCreated,
  RemoteTerminals,
  serveTerminalCall,
} from "../../../../src/workbench/share/terminals.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/**
 * The terminal relay of the attach channel, both ends in one process: an attached front end's
 * core (its slot switched to RemoteTerminals) and the owner's real TerminalManager behind
 * serveTerminalCall, joined by a JSON round trip as the channel would carry it.
 */
describe("terminals relayed to the shared workbench's owner", () => {
  const ws = tmpdirFixture({ prefix: "ccb-share-terms-" });
  const owner: Core = createCore({ roots: [ws.path] });
  const attached: Core = createCore({ roots: [ws.path] });
  const created = new Set<string>();
  const wire = async (method: string, params: unknown, _timeoutMs: number, signal?: AbortSignal) => {
    if (!isTerminalMethod(method)) throw new CcbError("INVALID_ARGUMENT", `Unknown method ${method}`);
    try {
      const r = await serveTerminalCall(
        owner.terminals.local,
        method,
        JSON.parse(JSON.stringify(params)),
        signal ?? new AbortController().signal,
        created,
      );
      return JSON.parse(JSON.stringify(r ?? null));
    } catch (err) {
      const e = toCcbError(err);
      throw new CcbError(e.code, e.message); // as ccbErrorFromWire rebuilds it
    }
  };
  attached.terminals.use(new RemoteTerminals(wire));
  after(async () => {
    await owner.dispose();
    await attached.dispose();
    ws.cleanup();
  });

  it("a terminal created through the slot runs in the owner, and both sides see one list", async () => {
    assert.equal(attached.terminals.shared, true);
    const info = await attached.terminals.create({ command: "/bin/sh", title: "relayed", origin: "workbench" });
    assert.equal(info.origin, "tool", "the owner marks a relayed terminal as a tool's");
    assert.deepEqual(
      owner.terminals.local.list().map((t) => t.id),
      [info.id],
    );
    assert.equal(attached.terminals.local.list().length, 0, "nothing ran in the attached process");
    assert.deepEqual(
      (await attached.terminals.list()).map((t) => t.id),
      [info.id],
    );
    const offset = await attached.terminals.write(info.id, "echo relay-$((40+2))\n");
    assert.equal(typeof offset, "number");
    let out = "";
    for (let i = 0; i < 50 && !out.includes("relay-42"); i++)
      out = (await attached.terminals.read(info.id, { offset, waitMs: 200 })).output;
    assert.match(out, /relay-42/);
    await attached.terminals.resize(info.id, 100, 40);
    assert.equal((await attached.terminals.get(info.id)).cols, 100);
  });

  it("the owner validates every relayed call at its edge", async () => {
    const bad = [
      ["terminals.read", { id: "" }],
      ["terminals.read", { id: "t1", waitMs: 10_000_000 }],
      ["terminals.create", { cols: 1 }],
      ["terminals.write", { id: "t1" }],
      ["terminals.kill", { id: "t1", signal: "x".repeat(100) }],
      ["terminals.list", null],
    ] as const;
    for (const [method, params] of bad)
      await assert.rejects(
        serveTerminalCall(owner.terminals.local, method, params, new AbortController().signal, new Set()),
        (e: unknown) => isCcbError(e, "INVALID_ARGUMENT"),
        `${method} ${JSON.stringify(params)}`,
      );
    // the owner confines a relayed terminal's cwd as it confines its own (positive control: the root itself)
    await assert.rejects(attached.terminals.create({ command: "/bin/sh", cwd: "/etc" }), (e: unknown) =>
      isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
    );
    const inRoot = await attached.terminals.create({ command: "/bin/sh", args: ["-c", "true"], cwd: ws.path });
    assert.equal(inRoot.cwd, ws.path);
    assert.equal(isTerminalMethod("terminals.dispose"), false);
    assert.equal(isTerminalMethod("__proto__"), false);
    await assert.rejects(
      Promise.resolve().then(() => attached.terminals.get("t999")),
      (e: unknown) => isCcbError(e, "TERMINAL_NOT_FOUND"),
    );
  });

  it("a cancelled wait ends on the owner too", async () => {
    const info = await attached.terminals.create({ command: "/bin/sh", args: ["-c", "sleep 30"] });
    const ac = new AbortController();
    const t0 = Date.now();
    const reading = attached.terminals.read(info.id, { offset: 0, waitMs: 30_000, signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await reading.catch(() => undefined);
    assert.ok(Date.now() - t0 < 20_000, "the read did not wait out its 30 s");
  });

  it("the terminals an attached front end started die when it leaves; the owner's own stay", async () => {
    const own = await owner.terminals.local.create({ command: "/bin/sh" });
    const running = owner.terminals.local.list().filter((t) => created.has(t.id) && t.running);
    assert.ok(running.length > 0);
    await killCreated(owner.terminals.local, created);
    for (const t of running) {
      const after = owner.terminals.local.get(t.id);
      assert.equal(after.running, false, `${t.id} killed`);
      assert.equal(isAlive(t.pid as number), false);
    }
    assert.equal(owner.terminals.local.get(own.id).running, true, "the owner's own terminal is left alone");
    // an old attachment closing after a newer one took its place leaves the newer one in use
    const older = new RemoteTerminals(wire);
    const newer = new RemoteTerminals(wire);
    attached.terminals.use(newer);
    attached.terminals.release(older);
    assert.equal(attached.terminals.shared, true);
    attached.terminals.release(newer);
    assert.equal(attached.terminals.shared, false);
    assert.deepEqual(await attached.terminals.list(), [], "back to this process's own terminals");
  });
});
