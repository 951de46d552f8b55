import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { checkpointsOf } from "../../../src/core/checkpoints/index.ts";
import { createCore } from "../../../src/core/core.ts";
import { isCcbError } from "../../../src/core/errors.ts";
import { LiveClients } from "../../../src/core/live-clients.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { serverMethods } from "../../../src/editor-wire/contract.ts";
import type { BridgeConnection, BridgeServer } from "../../../src/workbench/bridge-server.ts";
import { CheckpointsView, sharePresence } from "../../../src/workbench/checkpoints-view.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/** Wait for a condition the view's coalesced push makes true (bounded by the test runner's timeout). */
async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 10));
}

/*
 * The ccb side of the person's "Agent changes" view, on a real core, a real temp workspace and the
 * real checkpoint store (git): the overview, a change set's files before and after, the person's
 * undo (refused with the lines named when they changed the same lines since; nothing written), and
 * the edge: ids that are not checkpoint ids never reach git.
 */

const ws = tmpdirFixture({ prefix: "ccb-ckview-ws-" });
const state = tmpdirFixture({ prefix: "ccb-ckview-state-" });
const core = createCore({ roots: [ws.path], log: silentLogger });
const cps = checkpointsOf(core, { baseDir: join(state.path, "checkpoints") });
const me = { clientId: "me", role: "active", responsive: true, connectedAt: Date.now() } as BridgeConnection;
const other = { clientId: "other", role: "standby", responsive: true, connectedAt: Date.now() } as BridgeConnection;
/** What the view sent each tab (the BridgeServer's notify, as the tabs receive it). */
const sent: Array<{ to: string; type: string }> = [];
const bridge = {
  connections: [me, other],
  notify: (event: { type: string }, conn: BridgeConnection) => sent.push({ to: conn.clientId, type: event.type }),
  onConnect: () => () => undefined,
  onActiveChange: () => () => undefined,
} as unknown as BridgeServer;
const view = new CheckpointsView(core, bridge, silentLogger);
const LINES = (mark: Record<number, string> = {}) =>
  `${Array.from({ length: 8 }, (_, i) => mark[i] ?? `line ${i}`).join("\n")}\n`;
const file = join(ws.path, "notes.txt");
writeFileSync(file, LINES());

after(async () => {
  view.close();
  await core.dispose();
  ws.cleanup();
  state.cleanup();
});

async function agentWrites(text: string) {
  assert.ok(cps);
  await cps.around(
    { name: "fs_write", annotations: { readOnlyHint: false } },
    { frontEnd: "mcp", client: "alpha" },
    async () => writeFileSync(file, text),
  );
}

test("the overview names who is at the workbench and lists the change sets with workspace paths", async () => {
  await agentWrites(LINES({ 2: "line 2 by alpha" }));
  const own = new LiveClients();
  const leave = own.add({ frontEnd: "mcp", client: "gamma-host\u001b[31m", session: "s1" });
  let attachedChanged: () => void = () => undefined;
  view.setPresence(
    sharePresence(
      { kind: "host", pid: 42, since: Date.now(), startedBy: "serve" },
      () => [
        {
          frontEnd: "ide",
          pid: 43,
          since: Date.now(),
          clients: [{ frontEnd: "ide", client: "claude-code", session: "connection 1", since: Date.now() }],
        },
        {
          frontEnd: "serve",
          pid: 44,
          since: Date.now(),
          clients: [
            { frontEnd: "mcp", client: "alpha-host", session: "a", since: Date.now() },
            { frontEnd: "mcp", client: "beta-host", session: "b", since: Date.now() },
          ],
        },
      ],
      own,
      (l) => {
        attachedChanged = l;
        return () => undefined;
      },
    ),
  );
  const o = (await view.serve("checkpoints.overview", {}, me)) as any;
  assert.ok(serverMethods["checkpoints.overview"].result.safeParse(o).success, "the answer fits the contract");
  assert.deepEqual(
    o.attached.map((a: any) => [a.kind, a.label]),
    [
      ["runs", "detached ccb host (pid 42)"],
      ["client", "gamma-host [31m (mcp)"],
      ["attached", "ccb ide (pid 43)"],
      ["client", "claude-code (ide)"],
      ["attached", "ccb serve (pid 44)"],
      ["client", "alpha-host (mcp)"],
      ["client", "beta-host (mcp)"],
      ["tab", "this tab"],
      ["tab", "workbench tab 2"],
    ],
  );
  assert.match(o.attached[5].detail, /^via ccb serve \(pid 44\), session a, since /);
  // a client leaving, a front end's clients changing: every tab is told
  sent.length = 0;
  leave();
  await until(() => sent.length === 2);
  sent.length = 0;
  attachedChanged();
  await until(() => sent.length === 2);
  assert.deepEqual(sent, [
    { to: "me", type: "checkpointsChanged" },
    { to: "other", type: "checkpointsChanged" },
  ]);
  const mine = o.changes.filter((c: any) => c.client === "alpha");
  assert.equal(mine.length, 1);
  assert.deepEqual(mine[0].files, [{ path: file, rel: "notes.txt" }]);
  assert.equal(mine[0].frontEnd, "mcp");
  assert.equal(mine[0].tool, "fs_write");
});

test("a checkpoint recorded by another ccb process of the workspace is pushed to every tab", async () => {
  // the overview above started the watch; another process (its own core and store object) records
  const core2 = createCore({ roots: [ws.path], log: silentLogger });
  const cps2 = checkpointsOf(core2, { baseDir: join(state.path, "checkpoints") });
  try {
    await view.watched();
    sent.length = 0;
    await cps2!.around(
      { name: "fs_write", annotations: { readOnlyHint: false } },
      { frontEnd: "mcp", client: "delta" },
      async () => writeFileSync(join(ws.path, "delta.txt"), "delta\n"),
    );
    await until(() => sent.some((e) => e.to === "me") && sent.some((e) => e.to === "other"));
    assert.ok(sent.every((e) => e.type === "checkpointsChanged"));
  } finally {
    await core2.dispose();
  }
});

test("a change set's files come before and after it", async () => {
  const o = (await view.serve("checkpoints.overview", {}, me)) as any;
  const id = o.changes.find((c: any) => c.client === "alpha").id;
  const f = (await view.serve("checkpoints.files", { id }, me)) as any;
  assert.ok(serverMethods["checkpoints.files"].result.safeParse(f).success);
  assert.deepEqual(f.files, [
    { path: file, rel: "notes.txt", before: LINES(), after: LINES({ 2: "line 2 by alpha" }) },
  ]);
});

test("the person's undo: refused naming the lines they changed since (nothing written), then done and recorded as theirs", async () => {
  const o = (await view.serve("checkpoints.overview", {}, me)) as any;
  const id = o.changes.find((c: any) => c.client === "alpha").id;
  const mine = LINES({ 2: "line 2 by alpha and the person" });
  writeFileSync(file, mine);
  await assert.rejects(view.serve("checkpoints.undo", { id, mode: "undo" }, me), (err: unknown) => {
    assert.ok(isCcbError(err, "VERSION_CONFLICT"), String(err));
    assert.match((err as Error).message, /notes\.txt was changed since on the same lines \(lines 3-3\)/);
    return true;
  });
  assert.equal(readFileSync(file, "utf8"), mine, "nothing lost");
  writeFileSync(file, LINES({ 2: "line 2 by alpha", 7: "line 7 by the person" }));
  const r = (await view.serve("checkpoints.undo", { id, mode: "undo" }, me)) as any;
  assert.deepEqual(r.files, ["notes.txt"]);
  assert.equal(readFileSync(file, "utf8"), LINES({ 7: "line 7 by the person" }), "the person's other line kept");
  const after = (await view.serve("checkpoints.overview", {}, me)) as any;
  const undo = after.changes.find((c: any) => c.id === r.recorded[0]);
  assert.deepEqual([undo.frontEnd, undo.client, undo.phase], ["person", "workbench", "restore"]);
});

test("attack: what is not a checkpoint id (a revision expression, an option, a path) is refused at the edge", () => {
  for (const method of ["checkpoints.files", "checkpoints.undo"] as const) {
    for (const id of [
      "HEAD",
      "HEAD~1",
      "abcdef0^{tree}",
      "--output=/tmp/x",
      "abcdef0:../../etc/passwd",
      "ABCDEF01",
      "abc",
    ]) {
      const r = serverMethods[method].params.safeParse({ id, mode: "undo" });
      assert.equal(r.success, false, `${method} ${id}`);
    }
    // control: a checkpoint id passes
    assert.equal(serverMethods[method].params.safeParse({ id: "0123456789abcdef", mode: "undo" }).success, true);
  }
  assert.equal(serverMethods["checkpoints.undo"].params.safeParse({ id: "0123456", mode: "rm -rf" }).success, false);
});
