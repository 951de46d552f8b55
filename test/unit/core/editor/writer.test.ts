import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { createCore } from "../../../../src/core/core.ts";
import type { EditorBridge } from "../../../../src/core/editor/bridge.ts";
import { isCcbError } from "../../../../src/core/errors.ts";
import type { TerminalService } from "../../../../src/core/terminals/types.ts";
import { repoRoot } from "../../../helpers/cli.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

const fakeBridge = (name: string): EditorBridge & { name: string } => ({
  name,
  call: async () => ({ name }),
  onEvent: () => () => undefined,
});

describe("the core's editor state has one writer at a time (Core.claimEditor)", () => {
  it("a newer claim revokes the previous writer: what a lost workbench says late changes nothing", () => {
    const ws = tmpdirFixture({ prefix: "ccb-writer-" });
    const core = createCore({ roots: [ws.path] });
    try {
      const first = core.claimEditor("lease A");
      first.set(fakeBridge("a"));
      first.setWorkbench({ url: "http://127.0.0.1:1/a", runtime: "code-server" });
      // positive control: the current writer's writes land
      assert.equal(core.bridge.status().connected, true);
      assert.equal(core.bridge.workbench()?.url, "http://127.0.0.1:1/a");
      assert.equal(core.bridge.holder, "lease A");

      const second = core.claimEditor("lease B (takeover)");
      assert.equal(first.current, false);
      assert.equal(second.current, true);
      second.clear("being restarted");
      // the dead channel closing after the takeover: its clear and set are ignored
      first.clear("This front end left the shared workbench.");
      first.set(fakeBridge("stale"));
      first.setWorkbench(undefined);
      assert.equal(core.bridge.status().reason, "being restarted");
      assert.equal(core.bridge.status().connected, false);
      assert.equal(core.bridge.workbench()?.url, "http://127.0.0.1:1/a", "the stale writer did not unset it");
      assert.throws(
        () => core.bridge.require(),
        (e: unknown) => isCcbError(e, "BRIDGE_UNAVAILABLE"),
      );
      second.set(fakeBridge("b"));
      assert.equal((core.bridge.require() as ReturnType<typeof fakeBridge>).name, "b");
    } finally {
      ws.cleanup();
    }
  });

  it("terminals: only the current writer relays them; any writer can undo only its own relay", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-writer-" });
    const core = createCore({ roots: [ws.path] });
    try {
      const remote = (tag: string) => ({ list: async () => [{ id: tag }] }) as unknown as TerminalService;
      const first = core.claimEditor("lease A");
      const r1 = remote("r1");
      first.useTerminals(r1);
      assert.equal(core.terminals.shared, true, "positive control: the relay is used");
      const second = core.claimEditor("lease B");
      first.useTerminals(remote("stale"));
      assert.deepEqual(await core.terminals.list(), [{ id: "r1" }], "a revoked writer cannot relay");
      const r2 = remote("r2");
      second.useTerminals(r2);
      first.releaseTerminals(r1);
      assert.deepEqual(await core.terminals.list(), [{ id: "r2" }], "releasing an old relay keeps the new one");
      second.releaseTerminals(r2);
      assert.equal(core.terminals.shared, false);
    } finally {
      await core.dispose();
      ws.cleanup();
    }
  });

  it("src claims the editor only where a workbench is held: the lease, the host, an ACP session's hold, ccb ide without one", () => {
    const src = join(repoRoot, "src");
    const files: string[] = [];
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else if (n.endsWith(".ts")) files.push(p);
      }
    };
    walk(src);
    const claiming = files
      .filter((f) => /\.claimEditor\(/.test(readFileSync(f, "utf8")))
      .map((f) => relative(src, f))
      .sort();
    assert.deepEqual(claiming, [
      "agent/workbench.ts",
      "protocols/ide/index.ts",
      "workbench/share/acquire.ts",
      "workbench/share/host-process.ts",
    ]);
    // and nothing in src writes a slot around its writer
    const bypass = /\.bridge\.(set|clear|setWorkbench)\(|\.terminals\.(use|release)\(/;
    assert.match('core.bridge.clear("x")', bypass, "positive control: the pattern finds a direct write");
    assert.match("o.core.terminals.use(remote)", bypass);
    const around = files.filter((f) => bypass.test(readFileSync(f, "utf8"))).map((f) => relative(src, f));
    assert.deepEqual(around, []);
  });
});
